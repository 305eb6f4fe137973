"""tenferro.linalg vs numpy.linalg: batched (..., M, N), four dtypes, reconstructions, errors."""
import numpy as np
import pytest

import tenferro as tf
from conftest import INEXACT_DTYPES, LAYOUTS, assert_close, layouts, random_array

LA = tf.linalg
DT_IDS = ["f32", "f64", "c64", "c128"]
SHAPES = [(4, 4), (5, 3), (3, 5), (2, 4, 3), (2, 3, 3, 4)]


def H(x):
    return np.conj(np.swapaxes(x, -1, -2))


def A(t):
    return np.asarray(t)


def real_dtype(dtype):
    return np.empty(0, dtype).real.dtype


def hermitian(shape, dtype, rng=None):
    a = random_array(shape, dtype, rng)
    return (a + H(a)) / 2


def spd(shape, dtype, rng=None):
    a = random_array(shape, dtype, rng)
    n = shape[-1]
    return (a @ H(a) + n * np.eye(n)).astype(dtype)


def well_conditioned(shape, dtype, rng=None):
    n = shape[-1]
    return (random_array(shape, dtype, rng) + 3 * np.eye(n)).astype(dtype)


def assert_unitary_columns(q, dtype):
    q = A(q)
    k = q.shape[-1]
    assert_close(H(q) @ q, np.broadcast_to(np.eye(k, dtype=dtype), q.shape[:-2] + (k, k)), scale=50)


@pytest.mark.parametrize("dtype", INEXACT_DTYPES, ids=DT_IDS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd(session, dtype, shape, full_matrices):
    a = random_array(shape, dtype)
    u, s, vh = LA.svd(session, a, full_matrices=full_matrices)
    nu, ns, nvh = np.linalg.svd(a, full_matrices=full_matrices)
    assert A(u).shape == nu.shape and A(vh).shape == nvh.shape
    assert A(u).dtype == nu.dtype and A(s).dtype == ns.dtype
    assert_close(s, ns, scale=50)
    assert_unitary_columns(u, dtype)
    assert_unitary_columns(H(A(vh)), dtype)
    k = min(shape[-2:])
    recon = (A(u)[..., :k] * A(s)[..., None, :]) @ A(vh)[..., :k, :]
    assert_close(recon, a, scale=50)


def test_svd_default_is_full_matrices_and_fortran_results(session):
    a = random_array((5, 3), np.float64)
    u, s, vh = LA.svd(session, a)
    assert A(u).shape == (5, 5) and A(vh).shape == (3, 3)
    assert A(u).flags.f_contiguous
    assert A(s).flags.c_contiguous


@pytest.mark.parametrize("dtype", INEXACT_DTYPES, ids=DT_IDS)
def test_svd_compute_uv_false_and_svdvals(session, dtype):
    a = random_array((3, 4, 6), dtype)
    ref = np.linalg.svd(a, compute_uv=False)
    assert_close(LA.svd(session, a, compute_uv=False), ref, scale=50)
    assert_close(LA.svdvals(session, a), ref, scale=50)
    assert_close(LA.svd(session, a, hermitian=False, compute_uv=False), ref, scale=50)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_svd_layouts(session, layout):
    a = layouts((4, 3), np.float64)[layout]
    u, s, vh = LA.svd(session, a, full_matrices=False)
    assert_close(s, np.linalg.svd(a, compute_uv=False), scale=50)
    assert_close((A(u) * A(s)) @ A(vh), a, scale=50)


@pytest.mark.parametrize("dtype", INEXACT_DTYPES, ids=DT_IDS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(session, dtype, shape, mode):
    a = random_array(shape, dtype)
    ref = np.linalg.qr(a, mode=mode)
    if mode == "r":
        r = A(LA.qr(session, a, mode="r"))
        assert r.shape == ref.shape
        assert_close(np.abs(r), np.abs(ref), scale=50)  # R is unique up to row phases
        assert_close(np.triu(r), r)
        return
    q, r = LA.qr(session, a, mode=mode)
    assert A(q).shape == ref[0].shape and A(r).shape == ref[1].shape
    assert A(q).dtype == ref[0].dtype
    assert_unitary_columns(q, dtype)
    assert_close(np.triu(A(r)), A(r))
    assert_close(A(q) @ A(r), a, scale=50)


def test_qr_default_mode_and_bad_mode(session):
    a = random_array((5, 3), np.float64)
    q, r = LA.qr(session, a)
    assert A(q).shape == (5, 3) and A(r).shape == (3, 3)
    with pytest.raises(ValueError):
        LA.qr(session, a, mode="economic")


@pytest.mark.parametrize("dtype", INEXACT_DTYPES, ids=DT_IDS)
@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5), (2, 2, 3, 3)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(session, dtype, shape, uplo):
    a = hermitian(shape, dtype)
    # Only the UPLO triangle is read: garbage in the other one must not matter.
    junk = a + np.triu(np.ones(shape[-2:]), 1).astype(dtype) * (7 if uplo == "L" else 0)
    junk = junk + np.tril(np.ones(shape[-2:]), -1).astype(dtype) * (7 if uplo == "U" else 0)
    w, v = LA.eigh(session, junk, UPLO=uplo)
    nw = np.linalg.eigvalsh(junk, UPLO=uplo)
    assert A(w).dtype == nw.dtype
    assert_close(w, nw, scale=100)
    assert_close(LA.eigvalsh(session, junk, UPLO=uplo), nw, scale=100)
    assert_unitary_columns(v, dtype)
    assert_close(a @ A(v), A(v) * A(w)[..., None, :], scale=100)


def test_eigh_default_lower_and_bad_uplo(session):
    a = hermitian((4, 4), np.float64) + np.triu(np.ones((4, 4)), 1)
    assert_close(LA.eigh(session, a)[0], np.linalg.eigh(a)[0], scale=10)
    with pytest.raises(ValueError):
        LA.eigh(session, a, UPLO="X")


@pytest.mark.parametrize("dtype", INEXACT_DTYPES, ids=DT_IDS)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)])
def test_eig(session, dtype, shape):
    a = random_array(shape, dtype)
    w, v = LA.eig(session, a)
    w, v = A(w), A(v)
    cdt = np.result_type(dtype, np.complex64)
    assert w.dtype == cdt and v.dtype == cdt
    nw = np.linalg.eigvals(a)
    assert_close(np.sort_complex(w.reshape(-1, shape[-1])), np.sort_complex(nw.reshape(-1, shape[-1])).astype(cdt),
                 scale=500)
    assert_close(a @ v, v * w[..., None, :], scale=500)
    ev = A(LA.eigvals(session, a))
    assert_close(np.sort_complex(ev.reshape(-1, shape[-1])), np.sort_complex(w.reshape(-1, shape[-1])), scale=500)


@pytest.mark.parametrize("dtype", INEXACT_DTYPES, ids=DT_IDS)
@pytest.mark.parametrize(
    "sa,sb",
    [((4, 4), (4,)), ((4, 4), (4, 2)), ((3, 4, 4), (3, 4)), ((3, 4, 4), (3, 4, 2)), ((3, 4, 4), (1, 4, 2)),
     ((2, 1, 3, 3), (2, 4, 3, 1)), ((4, 4), (2, 4, 3)), ((1, 3, 3), (2, 3)), ((2, 1, 3, 3), (1, 5, 3, 2))],
)
def test_solve(session, dtype, sa, sb):
    rng = np.random.default_rng(3)
    a = well_conditioned(sa, dtype, rng)
    b = random_array(sb, dtype, rng)
    x = LA.solve(session, a, b)
    ref = np.linalg.solve(a, b)
    assert A(x).shape == ref.shape and A(x).dtype == ref.dtype
    assert_close(x, ref, scale=100)


def test_solve_singular_raises_runtime_error(session):
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(RuntimeError) as e:
        LA.solve(session, a, np.ones(2))
    assert isinstance(e.value, tf.NumericalError)
    assert isinstance(e.value.info, int)
    with pytest.raises(tf.NumericalError):
        LA.inv(session, a)


@pytest.mark.parametrize("dtype", INEXACT_DTYPES, ids=DT_IDS)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (2, 2, 5, 5)])
def test_inv_det_slogdet(session, dtype, shape):
    a = well_conditioned(shape, dtype)
    assert_close(LA.inv(session, a), np.linalg.inv(a), scale=100)
    assert_close(A(LA.inv(session, a)) @ a, np.broadcast_to(np.eye(shape[-1], dtype=dtype), shape), scale=100)
    assert_close(LA.det(session, a), np.asarray(np.linalg.det(a)), scale=100)
    sign, logdet = LA.slogdet(session, a)
    nsign, nlog = np.linalg.slogdet(a)
    assert_close(sign, np.asarray(nsign), scale=100)
    assert_close(logdet, np.asarray(nlog), scale=100)


def test_det_of_strided_and_singular(session):
    a = random_array((4, 4), np.float64)[::-1].T
    assert_close(LA.det(session, a), np.asarray(np.linalg.det(a)), scale=10)
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert abs(LA.det(session, s).item()) < 1e-12
    sign, logdet = LA.slogdet(session, s)
    assert sign.item() == 0 and logdet.item() == -np.inf


@pytest.mark.parametrize("dtype", INEXACT_DTYPES, ids=DT_IDS)
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
def test_pinv(session, dtype, shape):
    a = random_array(shape, dtype)
    p = A(LA.pinv(session, a))
    assert_close(p, np.linalg.pinv(a).astype(dtype), scale=200)
    assert_close(a @ p @ a, a, scale=200)


def test_pinv_rcond_drops_small_singular_values(session):
    u, _ = np.linalg.qr(random_array((4, 4), np.float64))
    a = u @ np.diag([3.0, 1.0, 1e-8, 0.0]) @ u.T
    for rcond in (1e-15, 1e-6):
        assert_close(LA.pinv(session, a, rcond=rcond), np.linalg.pinv(a, rcond=rcond), scale=1e6)
    assert_close(LA.pinv(session, a, rcond=1e-6, hermitian=True), np.linalg.pinv(a, rcond=1e-6), scale=1e6)


@pytest.mark.parametrize("dtype", INEXACT_DTYPES, ids=DT_IDS)
@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5)])
def test_cholesky(session, dtype, shape):
    a = spd(shape, dtype)
    ell = A(LA.cholesky(session, a))
    assert_close(ell, np.linalg.cholesky(a), scale=50)
    assert_close(np.tril(ell), ell)
    assert_close(ell @ H(ell), a, scale=50)


def test_cholesky_not_positive_definite(session):
    with pytest.raises(RuntimeError):
        LA.cholesky(session, -np.eye(3))


def _expm_reference(a):
    """exp(a) by scaling and squaring of a 30-term Taylor series (in complex128)."""
    a = np.asarray(a, dtype=np.complex128)
    norm = np.max(np.sum(np.abs(a), axis=-2))
    k = max(0, int(np.ceil(np.log2(max(norm, 1e-300)))) + 1)
    x = a / 2.0**k
    term = np.broadcast_to(np.eye(a.shape[-1], dtype=complex), a.shape).copy()
    out = term.copy()
    for i in range(1, 30):
        term = term @ x / i
        out = out + term
    for _ in range(k):
        out = out @ out
    return out


@pytest.mark.parametrize("dtype", INEXACT_DTYPES, ids=DT_IDS)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_matrix_exp(session, dtype, shape):
    a = random_array(shape, dtype, low=-1, high=1)
    ref = _expm_reference(a)
    if np.dtype(dtype).kind == "f":
        ref = ref.real
    assert_close(LA.matrix_exp(session, a), ref.astype(dtype), scale=200)


def test_matrix_exp_known_identities(session):
    h = hermitian((4, 4), np.complex128)
    w, v = np.linalg.eigh(h)
    assert_close(LA.matrix_exp(session, 1j * h), (v * np.exp(1j * w)) @ H(v), scale=100)
    z = np.zeros((3, 3))
    assert_close(LA.matrix_exp(session, z), np.eye(3))


VECTOR_ORDS = [None, 1, 2, 3, np.inf, -np.inf, 0.5, -1]
MATRIX_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


@pytest.mark.parametrize("ord", VECTOR_ORDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_vector_norm(session, ord, dtype):
    x = random_array((7,), dtype)
    assert_close(LA.norm(session, x, ord), np.asarray(np.linalg.norm(x, ord)), scale=10)
    y = random_array((3, 4, 5), dtype)
    for axis in (0, -1, (1,)):
        assert_close(LA.norm(session, y, ord, axis), np.linalg.norm(y, ord, axis), scale=10)
        assert_close(LA.norm(session, y, ord, axis, keepdims=True), np.linalg.norm(y, ord, axis, keepdims=True),
                     scale=10)


@pytest.mark.parametrize("ord", MATRIX_ORDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_matrix_norm(session, ord, dtype):
    x = random_array((4, 3), dtype)
    assert_close(LA.norm(session, x, ord), np.asarray(np.linalg.norm(x, ord)), scale=50)
    y = random_array((2, 4, 3), dtype)
    for axis in ((1, 2), (2, 1), (-1, 0)):
        assert_close(LA.norm(session, y, ord, axis), np.linalg.norm(y, ord, axis), scale=50)
        assert_close(LA.norm(session, y, ord, axis, keepdims=True), np.linalg.norm(y, ord, axis, keepdims=True),
                     scale=50)


def test_norm_defaults_and_errors(session):
    y = random_array((2, 3, 4), np.float64)
    assert_close(LA.norm(session, y), np.asarray(np.linalg.norm(y)))
    assert_close(LA.norm(session, y, keepdims=True), np.linalg.norm(y, keepdims=True))
    assert_close(LA.norm(session, y[:, ::-1].T), np.asarray(np.linalg.norm(y[:, ::-1].T)))
    with pytest.raises(ValueError):
        LA.norm(session, y, 2)  # a 3-D array needs axis
    with pytest.raises(ValueError):
        LA.norm(session, np.ones(3), "fro")
    with pytest.raises(ValueError):
        LA.norm(session, np.ones((3, 3)), 3)
    with pytest.raises(IndexError):
        LA.norm(session, y, None, 3)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.float32])
@pytest.mark.parametrize("sa,sb", [((6, 3), (6,)), ((6, 3), (6, 2)), ((3, 5), (3,)), ((4, 4), (4, 2))])
def test_lstsq(session, dtype, sa, sb):
    rng = np.random.default_rng(21)
    a = random_array(sa, dtype, rng)
    b = random_array(sb, dtype, rng)
    x, res, rank, sv = LA.lstsq(session, a, b)
    nx, nres, nrank, nsv = np.linalg.lstsq(a, b, rcond=None)
    assert_close(x, nx, scale=200)
    assert_close(res, nres, scale=200)
    assert rank == nrank
    assert_close(sv, nsv, scale=200)


def test_lstsq_rank_deficient(session):
    a = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    b = np.array([1.0, 2.0, 3.5])
    x, res, rank, sv = LA.lstsq(session, a, b)
    nx, nres, nrank, nsv = np.linalg.lstsq(a, b, rcond=None)
    assert rank == nrank == 1
    assert A(res).shape == nres.shape == (0,)
    assert_close(x, nx, scale=100)
    with pytest.raises(ValueError):
        LA.lstsq(session, np.ones((2, 3, 3)), np.ones((2, 3)))


@pytest.mark.parametrize("name", ["inv", "det", "slogdet", "cholesky", "eigh", "eigvalsh", "eig", "eigvals",
                                  "matrix_exp"])
def test_non_square_raises_value_error(session, name):
    with pytest.raises(ValueError) as e:
        getattr(LA, name)(session, np.ones((3, 4)))
    assert isinstance(e.value, tf.Error)
    with pytest.raises(ValueError):
        getattr(LA, name)(session, np.ones((2, 3, 4)))


@pytest.mark.parametrize("name", ["svd", "svdvals", "qr", "inv", "det", "pinv", "eigh", "cholesky"])
def test_rank_below_two_raises(session, name):
    with pytest.raises(tf.RankError) as e:
        getattr(LA, name)(session, np.ones(3))
    assert isinstance(e.value, ValueError)
    assert name in str(e.value) or "two-dimensional" in str(e.value)


def test_integer_input_and_solve_shape_errors(session):
    with pytest.raises(ValueError):
        LA.solve(session, np.eye(3), np.ones(4))
    with pytest.raises(ValueError):
        LA.solve(session, np.ones((2, 3, 3)), np.ones((3, 3, 1)))
    with pytest.raises(ValueError):
        LA.solve(session, np.eye(3), 1.0)
    # b.ndim == a.ndim - 1 makes b a stack of vectors (NumPy 1.x): these do not fit, as in NumPy
    for sa, sb in [((3, 4, 4), (4, 2)), ((2, 1, 3, 3), (4, 3, 1)), ((2, 1, 3, 3), (4, 3))]:
        with pytest.raises(ValueError):
            np.linalg.solve(np.ones(sa), np.ones(sb))
        with pytest.raises(ValueError):
            LA.solve(session, np.ones(sa), np.ones(sb))


def test_linalg_results_are_fortran_in_matrix_axes(session):
    a = random_array((4, 4), np.float64)
    for r in (LA.inv(session, a), LA.matrix_exp(session, a), LA.qr(session, a)[0], LA.pinv(session, a)):
        assert A(r).flags.f_contiguous
    for r in (LA.det(session, random_array((3, 4, 4), np.float64)), LA.svdvals(session, a)):
        assert A(r).flags.c_contiguous
