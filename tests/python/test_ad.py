"""tenferro.ad: the eager context, the functional grad/vjp/jvp, and every op family's
recorded form, checked against finite differences of the NumPy function.

Convention (the C++ layer's): for a real loss L of a complex x, the gradient is
dL/dRe(x) + i dL/dIm(x), so dL = Re(sum(conj(grad) * dx)).
"""
import numpy as np
import pytest

import tenferro as tf
from conftest import layouts


def directional(f_np, xs, vs, h=1e-6):
    """(f(xs + h vs) - f(xs - h vs)) / 2h for a real scalar NumPy function."""
    plus = f_np(*[x + h * v for x, v in zip(xs, vs)])
    minus = f_np(*[x - h * v for x, v in zip(xs, vs)])
    return (plus - minus) / (2 * h)


def random_like(x, rng):
    v = rng.standard_normal(x.shape)
    if np.iscomplexobj(x):
        v = v + 1j * rng.standard_normal(x.shape)
    return v.astype(x.dtype)


def check_grad(session, f_tf, f_np, xs, rng, rtol=1e-6):
    """tf.ad.grad of f_tf at xs agrees with the directional derivative of f_np."""
    grads = tf.ad.grad(session, f_tf, *xs)
    assert len(grads) == len(xs)
    for g, x in zip(grads, xs):
        assert np.asarray(g).shape == x.shape
    vs = [random_like(x, rng) for x in xs]
    predicted = sum(np.real(np.vdot(np.asarray(g), v)) for g, v in zip(grads, vs))
    expected = directional(f_np, xs, vs)
    assert abs(predicted - expected) <= rtol * max(1.0, abs(expected)), (predicted, expected)
    return grads


def spd(n, rng, batch=()):
    a = rng.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


# ---------------------------------------------------------------- the context


def test_context_backward_fills_leaf_grads(session, rng):
    a = rng.standard_normal((3, 4))
    b = rng.standard_normal((4,))
    with tf.ad.Context(session) as ctx:
        x, y = ctx.leaf(a), ctx.leaf(b)
        assert x.is_leaf and x.requires_grad and x.grad is None
        loss = tf.sum(session, tf.sin(session, x) * y)  # broadcasting at the last axis
        assert isinstance(loss, tf.ad.Tensor) and not loss.is_leaf and loss.shape == ()
        assert ctx.tape_size > 0
        ctx.backward(loss)
        np.testing.assert_allclose(np.asarray(x.grad), np.cos(a) * b, rtol=1e-13)
        np.testing.assert_allclose(np.asarray(y.grad), np.sin(a).sum(axis=0), rtol=1e-13)
        np.testing.assert_allclose(loss.item(), np.sum(np.sin(a) * b), rtol=1e-13)


@pytest.mark.parametrize("layout", ["c", "f", "transposed", "neg_rows", "neg_cols", "slice"])
def test_leaves_of_every_layout(session, layout):
    a = layouts((3, 4), np.float64)[layout]
    with tf.ad.Context(session) as ctx:
        x = ctx.leaf(a)
        ctx.backward(tf.sum(session, x * x * 0.5 + tf.exp(session, x)))
        np.testing.assert_allclose(np.asarray(x.grad), a + np.exp(a), rtol=1e-13)
        assert np.asarray(x.grad).shape == a.shape


def test_operators_record_with_tensors_scalars_and_constants(session, rng):
    a = rng.standard_normal((3, 3))
    with tf.ad.Context(session) as ctx:
        x = ctx.leaf(a)
        c = ctx.leaf(a, requires_grad=False)  # a constant: acts as its value
        assert not c.requires_grad
        ones = tf.asarray(np.ones((3, 3)))
        y = ones + x  # tenferro.Tensor + ad.Tensor records (never detaches)
        assert isinstance(y, tf.ad.Tensor) and y.requires_grad
        w = 2.0 - (c + 1.0) * y / 3.0
        loss = tf.sum(session, (w @ x.T) ** 2) + tf.sum(session, -x)
        ctx.backward(loss)

        def f(X):
            w = 2.0 - (a + 1.0) * (1.0 + X) / 3.0
            return np.sum((w @ X.T) ** 2) - np.sum(X)

        v = rng.standard_normal((3, 3))
        np.testing.assert_allclose(np.vdot(np.asarray(x.grad), v), directional(f, [a], [v]), rtol=1e-6)


def test_complex_leaf_gradient_convention(session, rng):
    a = rng.standard_normal((4,)) + 1j * rng.standard_normal((4,))
    with tf.ad.Context(session) as ctx:
        z = ctx.leaf(a)
        ctx.backward(tf.sum(session, tf.abs(session, z) ** 2))
        # |z|^2 = x^2 + y^2: d/dx + i d/dy = 2z
        np.testing.assert_allclose(np.asarray(z.grad), 2 * a, rtol=1e-13)


def test_float32_leaves(session, rng):
    a = rng.standard_normal((5,)).astype(np.float32)
    with tf.ad.Context(session) as ctx:
        x = ctx.leaf(a)
        ctx.backward(tf.sum(session, tf.tanh(session, x)))
        g = np.asarray(x.grad)
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, 1 - np.tanh(a) ** 2, rtol=1e-5)


def test_backward_with_cotangent_retain_graph_and_zero_grad(session, rng):
    a = rng.standard_normal((2, 3))
    ct = rng.standard_normal((2, 3))
    with tf.ad.Context(session) as ctx:
        x = ctx.leaf(a)
        y = tf.exp(session, x)
        ctx.backward(y, ct, retain_graph=True)
        np.testing.assert_allclose(np.asarray(x.grad), ct * np.exp(a), rtol=1e-13)
        first = np.array(x.grad)
        ctx.backward(y, ct)  # accumulates
        np.testing.assert_allclose(np.asarray(x.grad), 2 * first, rtol=1e-13)
        with pytest.raises(RuntimeError):  # the tape was freed by the second backward
            ctx.backward(y, ct)
        ctx.zero_grad()
        assert x.grad is None


def test_tangents_in_a_context(session, rng):
    a = rng.standard_normal((3,))
    t = rng.standard_normal((3,))
    with tf.ad.Context(session) as ctx:
        x = ctx.with_tangent(ctx.leaf(a), t)
        y = tf.sin(session, x) * x
        np.testing.assert_allclose(np.asarray(y.tangent), (np.cos(a) * a + np.sin(a)) * t, rtol=1e-13)
        # a constant carrying only a tangent is recorded on the entered context
        c = ctx.with_tangent(ctx.leaf(a, requires_grad=False), t)
        z = tf.exp(session, c)
        np.testing.assert_allclose(np.asarray(z.tangent), np.exp(a) * t, rtol=1e-13)


# ---------------------------------------------------------------- functional forms


def test_grad_several_inputs(session, rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    check_grad(session, lambda x, y: tf.sum(session, tf.tanh(session, x @ y)),
               lambda x, y: np.sum(np.tanh(x @ y)), [a, b], rng)


def test_vjp_and_jvp_several_outputs(session, rng):
    a, b = rng.standard_normal((3,)), rng.standard_normal((3,))

    def f(x, y):
        return [x * y, tf.exp(session, x)]

    cts = [rng.standard_normal(3), rng.standard_normal(3)]
    outs, grads = tf.ad.vjp(session, f, [a, b], cts)
    np.testing.assert_allclose(np.asarray(outs[0]), a * b, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(outs[1]), np.exp(a), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(grads[0]), cts[0] * b + cts[1] * np.exp(a), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(grads[1]), cts[0] * a, rtol=1e-13)

    ts = [rng.standard_normal(3), rng.standard_normal(3)]
    outs, tangents = tf.ad.jvp(session, f, [a, b], ts)
    np.testing.assert_allclose(np.asarray(tangents[0]), ts[0] * b + a * ts[1], rtol=1e-13)
    np.testing.assert_allclose(np.asarray(tangents[1]), np.exp(a) * ts[0], rtol=1e-13)


def test_jvp_through_matmul_and_linalg(session, rng):
    a = spd(3, rng)
    t = rng.standard_normal((3, 3))
    _, tangents = tf.ad.jvp(session, lambda x: tf.linalg.inv(session, x @ x), [a], [t])
    inv2 = np.linalg.inv(a @ a)
    np.testing.assert_allclose(np.asarray(tangents[0]), -inv2 @ (t @ a + a @ t) @ inv2, rtol=1e-9)


# ---------------------------------------------------------------- op families


@pytest.mark.parametrize("name,np_name", [("sum", np.sum), ("mean", np.mean), ("prod", np.prod), ("max", np.max),
                                          ("logsumexp", None)])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, False), (-1, True), ((0, 2), False)])
def test_reductions(session, rng, name, np_name, axis, keepdims):
    a = rng.uniform(0.5, 1.5, (2, 3, 4))
    if np_name is None:
        def np_name(x, axis=None, keepdims=False):
            m = np.max(x, axis=axis, keepdims=True)
            r = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
            return r if keepdims else np.squeeze(r, axis=axis)
    op = getattr(tf, name)
    w = rng.standard_normal(np.shape(np_name(a, axis=axis, keepdims=keepdims)))
    check_grad(session, lambda x: tf.sum(session, op(session, x, axis=axis, keepdims=keepdims) * w),
               lambda x: np.sum(np_name(x, axis=axis, keepdims=keepdims) * w), [a], rng)


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "softmax", "log_softmax"])
def test_scans(session, rng, name):
    a = rng.uniform(0.5, 1.5, (3, 4))
    w = rng.standard_normal((3, 4))
    ref = {
        "cumsum": lambda x: np.cumsum(x, axis=1),
        "cumprod": lambda x: np.cumprod(x, axis=1),
        "softmax": lambda x: np.exp(x) / np.exp(x).sum(axis=1, keepdims=True),
        "log_softmax": lambda x: x - np.log(np.exp(x).sum(axis=1, keepdims=True)),
    }[name]
    op = getattr(tf, name)
    check_grad(session, lambda x: tf.sum(session, op(session, x, axis=1) * w), lambda x: np.sum(ref(x) * w), [a], rng)


def test_structural_reshape_transpose(session, rng):
    a = rng.standard_normal((2, 3, 4))
    w = rng.standard_normal((6, 4))
    check_grad(session,
               lambda x: tf.sum(session, tf.reshape(session, tf.transpose(x, (1, 0, 2)), (6, -1)) * w),
               lambda x: np.sum(np.transpose(x, (1, 0, 2)).reshape(6, -1) * w), [a], rng)


def test_where_clip_astype(session, rng):
    a = rng.standard_normal((3, 4))
    cond = a > 0
    check_grad(session,
               lambda x: tf.sum(session, tf.where(session, cond, x * x, tf.clip(session, x, -0.5, 0.5))),
               lambda x: np.sum(np.where(cond, x * x, np.clip(x, -0.5, 0.5))), [a], rng)
    grads = tf.ad.grad(session, lambda x: tf.sum(session, tf.astype(session, x, np.float32) * 1.0), a)
    np.testing.assert_allclose(np.asarray(grads[0]), np.ones_like(a), rtol=1e-6)


@pytest.mark.parametrize("form", ["string", "implicit", "ellipsis", "interleaved"])
def test_einsum_forms(session, rng, form):
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 5))
    w = rng.standard_normal((2, 3, 5))
    if form == "string":
        f = lambda x, y: tf.einsum(session, "bij,bjk->bik", x, y)  # noqa: E731
    elif form == "implicit":
        w = rng.standard_normal((2, 2, 3, 5))
        f = lambda x, y: tf.einsum(session, "aij,bjk", x, y)  # noqa: E731
    elif form == "ellipsis":
        f = lambda x, y: tf.einsum(session, "...ij,...jk->...ik", x, y)  # noqa: E731
    else:
        f = lambda x, y: tf.einsum(session, x, [0, 1, 2], y, [0, 2, 3], [0, 1, 3])  # noqa: E731
    ref = (lambda x, y: np.einsum("aij,bjk", x, y)) if form == "implicit" else (lambda x, y: x @ y)
    check_grad(session, lambda x, y: tf.sum(session, f(x, y) * w), lambda x, y: np.sum(ref(x, y) * w), [a, b], rng)


def test_einsum_complex_and_matmul_batches(session, rng):
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    b = rng.standard_normal((2, 3, 3))
    check_grad(session, lambda x: tf.sum(session, tf.abs(session, tf.einsum(session, "ij,jk->ik", x, x)) ** 2),
               lambda x: np.sum(np.abs(x @ x) ** 2), [a], rng)
    check_grad(session, lambda x: tf.sum(session, tf.matmul(session, x, x) ** 2), lambda x: np.sum((x @ x) ** 2), [b], rng)


def test_vdot(session, rng):
    a, b = rng.standard_normal(5), rng.standard_normal(5)
    check_grad(session, lambda x, y: tf.vdot(session, x, y) ** 2, lambda x, y: np.vdot(x, y) ** 2, [a, b], rng)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_linalg_decompositions(session, rng, dtype):
    a = rng.standard_normal((2, 4, 3))
    if dtype == np.complex128:
        a = a + 1j * rng.standard_normal((2, 4, 3))
    check_grad(session, lambda x: tf.sum(session, tf.linalg.svd(session, x, compute_uv=False)),
               lambda x: np.sum(np.linalg.svd(x, compute_uv=False)), [a], rng)
    # |U|^2 and |Q|^2 are gauge invariant losses of the factors
    w = rng.standard_normal((2, 4, 3))
    check_grad(session,
               lambda x: tf.sum(session, tf.abs(session, tf.linalg.svd(session, x, full_matrices=False)[0]) ** 2 * w),
               lambda x: np.sum(np.abs(np.linalg.svd(x, full_matrices=False)[0]) ** 2 * w), [a], rng)
    check_grad(session, lambda x: tf.sum(session, tf.abs(session, tf.linalg.qr(session, x)[1]) ** 2 * w[:, :3, :]),
               lambda x: np.sum(np.abs(np.linalg.qr(x)[1]) ** 2 * w[:, :3, :]), [a], rng)


def test_linalg_eigh_and_eigvalsh(session, rng):
    # eigh reads one triangle (UPLO, as NumPy's), so the gradient is the derivative of
    # that function: nonzero on the read triangle only, checked along any direction.
    h = spd(4, rng, (2,))
    w = np.array([1.0, 2.0, 3.0, 4.0])
    for uplo in ["L", "U"]:
        g = check_grad(session, lambda x: tf.sum(session, tf.linalg.eigvalsh(session, x, UPLO=uplo) * w),
                       lambda x: np.sum(np.linalg.eigvalsh(x, UPLO=uplo) * w), [h], rng)[0]
        unread = np.triu(np.ones((4, 4)), 1) if uplo == "L" else np.tril(np.ones((4, 4)), -1)
        assert np.all(np.asarray(g) * unread == 0)
    _, v = np.linalg.eigh(h)
    sym = np.asarray(g)
    sym = (sym + np.swapaxes(sym, -1, -2)) / 2  # the symmetric part is V diag(w) V^T
    np.testing.assert_allclose(sym, np.einsum("bik,k,bjk->bij", v, w, v), rtol=1e-10, atol=1e-12)
    # eigenvector loss, invariant under the sign of each eigenvector
    check_grad(session, lambda x: tf.sum(session, (tf.linalg.eigh(session, x)[1] ** 2) * w),
               lambda x: np.sum(np.linalg.eigh(x)[1] ** 2 * w), [h], rng)


def test_linalg_solve_inv_det_slogdet_cholesky(session, rng):
    a = spd(3, rng) + 0.3 * rng.standard_normal((3, 3))
    b = rng.standard_normal((3, 2))
    vec = rng.standard_normal(3)
    check_grad(session, lambda x, y: tf.sum(session, tf.linalg.solve(session, x, y) ** 2),
               lambda x, y: np.sum(np.linalg.solve(x, y) ** 2), [a, b], rng)
    check_grad(session, lambda x, y: tf.sum(session, tf.linalg.solve(session, x, y)),
               lambda x, y: np.sum(np.linalg.solve(x, y)), [a, vec], rng)
    check_grad(session, lambda x: tf.sum(session, tf.linalg.inv(session, x)), lambda x: np.sum(np.linalg.inv(x)), [a], rng)
    check_grad(session, lambda x: tf.linalg.det(session, x), lambda x: np.linalg.det(x), [a], rng)
    check_grad(session, lambda x: tf.linalg.slogdet(session, x)[1], lambda x: np.linalg.slogdet(x)[1], [a], rng)
    s = spd(3, rng)
    grads = tf.ad.grad(session, lambda x: tf.sum(session, tf.linalg.cholesky(session, x)), s)
    d = rng.standard_normal((3, 3))
    d = d + d.T
    fd = directional(lambda x: np.sum(np.linalg.cholesky(x)), [s], [d])
    np.testing.assert_allclose(np.vdot(np.asarray(grads[0]), d), fd, rtol=1e-6)


def test_linalg_norm_pinv_matrix_exp(session, rng):
    a = rng.standard_normal((3, 4))
    check_grad(session, lambda x: tf.linalg.norm(session, x), lambda x: np.linalg.norm(x), [a], rng)
    check_grad(session, lambda x: tf.sum(session, tf.linalg.norm(session, x, axis=1)),
               lambda x: np.sum(np.linalg.norm(x, axis=1)), [a], rng)
    check_grad(session, lambda x: tf.sum(session, tf.linalg.pinv(session, x) ** 2),
               lambda x: np.sum(np.linalg.pinv(x) ** 2), [a], rng)
    m = 0.3 * rng.standard_normal((3, 3))

    def expm(x):  # Taylor series: converges fast for |x| ~ 1
        r, term = np.eye(3), np.eye(3)
        for k in range(1, 30):
            term = term @ x / k
            r = r + term
        return r

    check_grad(session, lambda x: tf.sum(session, tf.linalg.matrix_exp(session, x)), lambda x: np.sum(expm(x)), [m], rng)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "fft2", "fftn"])
def test_fft(session, rng, name):
    a = rng.standard_normal((4, 6))
    op, ref = getattr(tf.fft, name), getattr(np.fft, name)
    w = rng.standard_normal(ref(a).shape)
    check_grad(session, lambda x: tf.sum(session, tf.abs(session, op(session, x)) ** 2 * w),
               lambda x: np.sum(np.abs(ref(x)) ** 2 * w), [a], rng)


def test_irfft(session, rng):
    a = rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))
    a[:, 0] = a[:, 0].real
    w = rng.standard_normal((3, 8))
    grads = tf.ad.grad(session, lambda x: tf.sum(session, tf.fft.irfft(session, x) * w), a)
    # irfft is linear: its gradient is the adjoint applied to w; check along directions
    # whose DC and Nyquist bins are real (irfft ignores their imaginary parts)
    d = random_like(a, rng)
    d[:, 0] = d[:, 0].real
    d[:, -1] = d[:, -1].real
    np.testing.assert_allclose(np.real(np.vdot(np.asarray(grads[0]), d)), np.sum(np.fft.irfft(d) * w), rtol=1e-10)


# ---------------------------------------------------------------- errors


def test_closed_context_raises(session, rng):
    a = rng.standard_normal(3)
    with tf.ad.Context(session) as ctx:
        x = ctx.leaf(a)
        y = x * 2.0
    with pytest.raises(RuntimeError, match="closed"):
        tf.exp(session, x)
    with pytest.raises(RuntimeError):
        y + 1.0
    with pytest.raises(RuntimeError):
        ctx.backward(y)
    with pytest.raises(tf.RuntimeStateError):
        ctx.leaf(a)


def test_recorded_ops_refuse_out_and_unrecorded_ops_refuse_active_tensors(session, rng):
    a = rng.standard_normal((2, 3))
    out = tf.asarray(np.zeros((2, 3)))
    with tf.ad.Context(session) as ctx:
        x = ctx.leaf(a)
        with pytest.raises(ValueError, match="out="):
            tf.exp(session, x, out=out)
        with pytest.raises(ValueError, match="out="):
            tf.add(session, x, x, out=out)
        with pytest.raises(ValueError, match="out="):
            tf.sum(session, x, axis=0, out=tf.asarray(np.zeros(3)))
        assert np.all(np.asarray(out) == 0)
        with pytest.raises(NotImplementedError, match="concatenate"):
            tf.concatenate(session, [x, x])
        with pytest.raises(tf.UnsupportedError):
            tf.copyto(session, out, x)
        # an explicit constant is fine
        r = tf.concatenate(session, [x.value, x.detach().value])
        assert np.asarray(r).shape == (4, 3)


def test_backward_argument_errors(session, rng):
    a = rng.standard_normal((2, 2))
    with tf.ad.Context(session) as ctx:
        x = ctx.leaf(a)
        y = x * 3.0
        with pytest.raises(ValueError):  # not a scalar, no cotangent
            ctx.backward(y)
        with pytest.raises(ValueError):  # cotangent of the wrong shape
            ctx.backward(y, np.ones((3,)))
        with pytest.raises(TypeError):
            ctx.leaf(np.arange(3))  # integers cannot require grad


def test_context_of_another_session_is_refused(rng):
    import threading

    a = rng.standard_normal(3)
    # disjoint CPUs: backends sharing CPUs admit one session at a time
    mine, other = tf.CpuBackend(num_threads=1, cpus=[0]), tf.CpuBackend(num_threads=1, cpus=[1])
    caught = []
    with mine.session() as session, tf.ad.Context(session) as ctx:
        x = ctx.leaf(a)

        def use_elsewhere():  # a thread may hold one session at a time: use x from another
            with other.session() as s2:
                try:
                    tf.exp(s2, x)
                except ValueError as e:
                    caught.append(str(e))

        t = threading.Thread(target=use_elsewhere)
        t.start()
        t.join()
    assert len(caught) == 1 and "another session" in caught[0]


def test_grad_errors_propagate_from_f(session, rng):
    a = rng.standard_normal((2, 2))
    with pytest.raises(ValueError):  # f returns a non-scalar
        tf.ad.grad(session, lambda x: x * 2.0, a)

    def boom(x):
        raise KeyError("from f")

    with pytest.raises(KeyError):
        tf.ad.grad(session, boom, a)


def test_docstrings():
    for obj in [tf.ad, tf.ad.Tensor, tf.ad.Context, tf.ad.grad, tf.ad.vjp, tf.ad.jvp, tf.ad.Context.backward,
                tf.ad.Context.leaf, tf.ad.Tensor.grad]:
        assert obj.__doc__ and len(obj.__doc__.strip()) > 10, obj
