"""Elementwise ops vs NumPy: dtypes, layouts, broadcasting, scalars, promotion, out=, operators."""
import math

import numpy as np
import pytest

import tenferro as tf
from conftest import (COMPLEX_DTYPES, INEXACT_DTYPES, LAYOUTS, NUMERIC_DTYPES, assert_close,
                      layouts, random_array)

_erf = np.vectorize(math.erf, otypes=[float])


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


# name -> (NumPy reference, domain (low, high) of real test inputs, complex supported)
ANALYTIC = {
    "exp": (np.exp, (-2, 2), True),
    "log": (np.log, (0.1, 3), True),
    "log2": (np.log2, (0.1, 3), True),
    "log10": (np.log10, (0.1, 3), True),
    "exp2": (np.exp2, (-2, 2), True),
    "sqrt": (np.sqrt, (0.1, 3), True),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.1, 3), True),
    "cbrt": (np.cbrt, (-3, 3), False),
    "sin": (np.sin, (-3, 3), True),
    "cos": (np.cos, (-3, 3), True),
    "tan": (np.tan, (-1.2, 1.2), True),
    "arcsin": (np.arcsin, (-0.9, 0.9), True),
    "arccos": (np.arccos, (-0.9, 0.9), True),
    "arctan": (np.arctan, (-3, 3), True),
    "sinh": (np.sinh, (-2, 2), True),
    "cosh": (np.cosh, (-2, 2), True),
    "tanh": (np.tanh, (-2, 2), True),
    "expm1": (np.expm1, (-1, 1), True),
    "log1p": (np.log1p, (-0.5, 2), True),
    "erf": (lambda x: _erf(x), (-2, 2), False),
    "sigmoid": (_sigmoid, (-4, 4), True),
    "softplus": (lambda x: np.logaddexp(0, x), (-4, 4), False),
    "silu": (lambda x: x * _sigmoid(x), (-4, 4), False),
    "gelu": (lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2))), (-3, 3), False),
}
ALIASES = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "conj": "conjugate", "abs": "absolute",
           "true_divide": "divide", "amax": "max", "amin": "min"}


def _ref(fn, x):
    """fn evaluated in double precision, cast back to x's dtype."""
    wide = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
    return np.asarray(fn(wide)).astype(x.dtype)


def test_aliases_are_the_same_function():
    for alias, name in ALIASES.items():
        assert getattr(tf, alias) is getattr(tf, name), alias


@pytest.mark.parametrize("name", sorted(ANALYTIC))
@pytest.mark.parametrize("dtype", INEXACT_DTYPES, ids=["f32", "f64", "c64", "c128"])
def test_analytic_vs_numpy(session, name, dtype):
    fn, (lo, hi), cplx = ANALYTIC[name]
    if np.dtype(dtype).kind == "c" and not cplx:
        with pytest.raises(TypeError):
            getattr(tf, name)(session, np.ones(3, dtype))
        return
    rng = np.random.default_rng(7)
    x = rng.uniform(lo, hi, size=(3, 5))
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.uniform(-0.5, 0.5, size=(3, 5))
    x = x.astype(dtype)
    r = getattr(tf, name)(session, x)
    assert np.asarray(r).flags.c_contiguous
    assert_close(r, _ref(fn, x), scale=4)


@pytest.mark.parametrize("name", ["exp", "sin", "sqrt", "log1p", "tanh", "gelu"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_analytic_layouts(session, name, layout):
    fn, (lo, hi), _ = ANALYTIC[name]
    x = layouts((4, 3), np.float64, low=lo, high=hi)[layout]
    r = getattr(tf, name)(session, x)
    assert r.shape == x.shape
    assert np.asarray(r).flags.c_contiguous
    assert_close(r, _ref(fn, x))


@pytest.mark.parametrize("name", ["exp", "sin", "erf", "log"])
@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.int64])
def test_analytic_rejects_exact_dtypes(session, name, dtype):
    with pytest.raises(TypeError) as e:
        getattr(tf, name)(session, np.ones(3, dtype))
    assert name in str(e.value)


UNARY = {
    "negative": np.negative,
    "conjugate": np.conjugate,
    "absolute": np.absolute,
    "real": np.real,
    "imag": np.imag,
    "angle": np.angle,
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=["i32", "i64", "f32", "f64", "c64", "c128"])
def test_unary_vs_numpy(session, name, dtype):
    x = random_array((2, 3, 4), dtype)
    ref = np.asarray(UNARY[name](x))
    if name == "angle" and np.dtype(dtype).kind in "fc":
        ref = ref.astype(np.empty(0, dtype).real.dtype)
    if name in ("real", "imag"):
        ref = np.ascontiguousarray(ref)
    assert_close(getattr(tf, name)(session, x), ref)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_sign_real(session, dtype):
    x = random_array((20,), dtype)
    x[:3] = 0
    assert_close(tf.sign(session, x), np.sign(x))


@pytest.mark.parametrize("dtype", COMPLEX_DTYPES)
def test_sign_complex_is_z_over_abs(session, dtype):
    x = random_array((10,), dtype)
    x[0] = 0
    ref = np.zeros_like(x)
    nz = x != 0
    ref[nz] = x[nz] / np.abs(x[nz])
    assert_close(tf.sign(session, x), ref)


BINARY = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.true_divide,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "fmod": np.fmod,
    "power": np.power,
}
REAL_ONLY = {"maximum", "minimum", "fmod"}


def _operands(name, dtype, shape_a, shape_b):
    rng = np.random.default_rng(3)
    a = random_array(shape_a, dtype, rng)
    b = random_array(shape_b, dtype, rng)
    if name in ("divide", "fmod"):
        b = np.where(b == 0, np.ones_like(b), b)
        if np.dtype(dtype).kind != "c":
            b = np.where(np.abs(b) < 0.2, np.ones_like(b), b)
    if name == "power":
        if np.dtype(dtype).kind in "i":
            a = np.abs(a) % 4
            b = np.abs(b) % 4
        elif np.dtype(dtype).kind == "f":
            a = np.abs(a) + 0.1
    return a, b


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=["i32", "i64", "f32", "f64", "c64", "c128"])
def test_binary_vs_numpy(session, name, dtype):
    if name in REAL_ONLY and np.dtype(dtype).kind == "c":
        with pytest.raises(TypeError):
            getattr(tf, name)(session, np.ones(2, dtype), np.ones(2, dtype))
        return
    a, b = _operands(name, dtype, (3, 4), (3, 4))
    ref = BINARY[name](a, b)
    assert_close(getattr(tf, name)(session, a, b), ref, scale=4)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize(
    "shapes",
    [((2, 3, 4), (4,)), ((2, 3, 4), (3, 1)), ((1, 4), (3, 1)), ((5, 1, 3), (1, 2, 1)), ((), (2, 3)), ((3, 0), (1,))],
    ids=["row", "col", "outer", "3d", "rank0", "empty"],
)
def test_binary_broadcasting(session, name, shapes):
    a, b = _operands(name, np.float64, *shapes)
    for x, y in ((a, b), (b, a)):
        if name == "power" or name in ("divide", "fmod"):
            x, y = _operands(name, np.float64, x.shape, y.shape)
        r = getattr(tf, name)(session, x, y)
        assert_close(r, BINARY[name](x, y))
        assert np.asarray(r).flags.c_contiguous


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "maximum"])
@pytest.mark.parametrize("la", LAYOUTS)
@pytest.mark.parametrize("lb", ["c", "f", "neg_cols", "broadcast"])
def test_binary_layouts(session, name, la, lb):
    a = layouts((3, 4), np.float64, np.random.default_rng(1))[la]
    b = layouts((3, 4), np.float64, np.random.default_rng(2))[lb]
    assert_close(getattr(tf, name)(session, a, b), BINARY[name](a, b))


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum"])
@pytest.mark.parametrize("scalar", [2, 0.5, -3.0])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64, np.complex64])
def test_python_scalars_are_weak(session, name, scalar, dtype):
    if np.dtype(dtype).kind == "c" and name in REAL_ONLY | {"maximum", "minimum"}:
        return
    if np.dtype(dtype).kind == "i" and (isinstance(scalar, float) or name == "power"):
        scalar = 2  # keep integer results exact and exponents non-negative
    a = random_array((2, 3), dtype)
    if name == "power" and np.dtype(dtype).kind == "f":
        a = np.abs(a) + 0.5
    if name == "power" and np.dtype(dtype).kind == "i":
        a = np.abs(a)
    fn = getattr(tf, name)
    for x, y in ((a, scalar), (scalar, a)):
        if name == "power" and np.dtype(dtype).kind == "i" and not isinstance(y, int):
            continue  # integer ** negative/odd tensor exponents are not the point here
        if name == "power" and not isinstance(x, np.ndarray):
            x = abs(x)  # a negative real base to a real power is NaN
        if name == "divide" and not isinstance(y, (int, float)) and np.any(y == 0):
            y = np.where(y == 0, np.ones_like(y), y)
        ref = BINARY[name](x, y)
        assert_close(fn(session, x, y), ref, scale=4)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_tensor_with_float_or_complex_scalar(session, dtype):
    a = random_array((2, 3), dtype)
    for scalar in (2.5, -0.25, 1 + 2j):
        assert_close(tf.add(session, a, scalar), np.add(a, scalar))
        assert_close(tf.multiply(session, scalar, a), np.multiply(scalar, a))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.complex64])
def test_bool_scalar(session, dtype):
    a = random_array((4,), dtype)
    assert_close(tf.add(session, a, True), np.add(a, True))
    assert_close(tf.multiply(session, a, False), np.multiply(a, False))


def test_two_scalars_give_rank0(session):
    r = tf.add(session, 2, 3)
    assert r.shape == () and r.item() == 5
    assert r.dtype == np.asarray(np.add(2, 3)).dtype
    r = tf.multiply(session, 1.5, 2.0)
    assert r.shape == () and r.item() == 3.0


PROMOTIONS = [
    (np.int32, np.int64), (np.int32, np.float32), (np.int64, np.float32), (np.int32, np.float64),
    (np.float32, np.float64), (np.float32, np.complex64), (np.float64, np.complex64), (np.int32, np.complex64),
    (np.int64, np.complex128), (np.complex64, np.complex128), (np.float32, np.complex128),
]


@pytest.mark.parametrize("da,db", PROMOTIONS)
@pytest.mark.parametrize("name", ["add", "multiply", "subtract", "divide"])
def test_numpy_promotion_between_tensors(session, da, db, name):
    a = random_array((2, 3), da)
    b = random_array((2, 3), db)
    b = np.where(b == 0, np.ones_like(b), b)
    for x, y in ((a, b), (b, a)):
        if name == "divide":
            y = np.where(y == 0, np.ones_like(y), y)
        ref = BINARY[name](x, y)
        assert_close(getattr(tf, name)(session, x, y), ref, scale=4)


@pytest.mark.parametrize("da,db", [(np.bool_, np.bool_), (np.int32, np.int32), (np.bool_, np.int64), (np.int64, np.int64)])
def test_true_division_of_integers(session, da, db):
    a = random_array((4,), da)
    b = np.array([1, 2, 3, 5], dtype=db) if np.dtype(db).kind == "i" else np.ones(4, db)
    assert_close(tf.divide(session, a, b), np.true_divide(a, b))
    assert_close(tf.divide(session, 7, b), np.true_divide(7, b))


def test_fmod_sign_of_dividend_and_integer_zero_divisor(session):
    a = np.array([-7, 7, -7, 7, 0], dtype=np.int64)
    b = np.array([3, 3, -3, -3, 2], dtype=np.int64)
    assert_close(tf.fmod(session, a, b), np.fmod(a, b))
    af = np.array([-7.5, 7.5, -0.25], dtype=np.float64)
    assert_close(tf.fmod(session, af, 2.0), np.fmod(af, 2.0))
    with pytest.raises(tf.NumericalError) as e:
        tf.fmod(session, a, np.zeros(5, np.int64))
    assert isinstance(e.value, RuntimeError)


def test_nan_propagates_in_maximum_minimum(session):
    a = np.array([1.0, np.nan, 3.0])
    b = np.array([np.nan, 2.0, 1.0])
    assert_close(tf.maximum(session, a, b), np.maximum(a, b))
    assert_close(tf.minimum(session, a, b), np.minimum(a, b))


COMPARE = {"equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
           "greater": np.greater, "greater_equal": np.greater_equal}


@pytest.mark.parametrize("name", sorted(COMPARE))
@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.int64, np.float32, np.float64, np.complex128])
def test_comparisons(session, name, dtype):
    rng = np.random.default_rng(5)
    a = random_array((3, 4), dtype, rng)
    b = random_array((4,), dtype, rng)
    if np.dtype(dtype).kind == "f":
        a = np.round(a)
        b = np.round(b)
    fn = getattr(tf, name)
    if np.dtype(dtype).kind == "c" and name not in ("equal", "not_equal"):
        with pytest.raises(TypeError):
            fn(session, a, b)
        return
    b2 = b.copy()
    assert_close(fn(session, a, b2), COMPARE[name](a, b2))
    assert_close(fn(session, b2, a), COMPARE[name](b2, a))
    assert_close(fn(session, a, a[0, 0].item()), COMPARE[name](a, a[0, 0]))


def test_where(session):
    rng = np.random.default_rng(11)
    c = rng.integers(0, 2, (3, 4)).astype(bool)
    x = random_array((3, 4), np.float64, rng)
    y = random_array((4,), np.float64, rng)
    assert_close(tf.where(session, c, x, y), np.where(c, x, y))
    assert_close(tf.where(session, c[0], x, -1.0), np.where(c[0], x, -1.0))
    assert_close(tf.where(session, c, 1.0, 0.0), np.where(c, 1.0, 0.0))
    xc = random_array((3, 4), np.complex128, rng)
    assert_close(tf.where(session, c.T.T, xc, xc.conj()), np.where(c, xc, xc.conj()))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_clip(session, dtype):
    x = random_array((4, 5), dtype)
    assert_close(tf.clip(session, x, -1, 1), np.clip(x, -1, 1))
    lo = random_array((5,), dtype) - 1
    assert_close(tf.clip(session, x, lo, 1), np.clip(x, lo, 1))


@pytest.mark.parametrize("src", [np.bool_, np.int32, np.int64, np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("dst", [np.int32, np.int64, np.float32, np.float64, np.complex64, np.complex128])
def test_astype(session, src, dst):
    x = random_array((3, 4), src)[:, ::-1]
    if np.dtype(src).kind == "c" and np.dtype(dst).kind != "c":
        return  # NumPy's complex -> real cast drops the imaginary part with a warning
    r = tf.astype(session, x, dst)
    assert np.asarray(r).flags.c_contiguous
    assert_close(r, x.astype(dst))


def test_astype_truncates_and_checked_refuses(session):
    x = np.array([1.7, -1.7, 2.0])
    assert_close(tf.astype(session, x, np.int64), x.astype(np.int64))
    assert_close(tf.astype(session, np.array([1.0, 2.0]), np.int32, checked=True), np.array([1, 2], np.int32))
    with pytest.raises(ValueError):
        tf.astype(session, x, np.int32, checked=True)
    with pytest.raises(TypeError):
        tf.astype(session, x, np.uint8)


def test_copyto(session):
    dst = np.zeros((3, 4))
    src = random_array((4,), np.float64)
    tf.copyto(session, dst, src)
    np.testing.assert_array_equal(dst, np.broadcast_to(src, (3, 4)))
    tf.copyto(session, dst[:, ::2], 7.0)
    ref = np.broadcast_to(src, (3, 4)).copy()
    ref[:, ::2] = 7.0
    np.testing.assert_array_equal(dst, ref)
    with pytest.raises(ValueError):
        tf.copyto(session, dst, np.ones(3))


@pytest.mark.parametrize("name", ["add", "multiply", "divide", "maximum", "power"])
def test_out_writes_into_given_tensor(session, name):
    a, b = _operands(name, np.float64, (3, 4), (4,))
    out = tf.zeros((3, 4))
    r = getattr(tf, name)(session, a, b, out=out)
    assert r is out
    assert_close(out, BINARY[name](a, b))
    # a strided NumPy array as out
    base = np.zeros((4, 8))
    view = base[::-1, ::2][:3]
    getattr(tf, name)(session, a, b, out=view)
    assert_close(view, BINARY[name](a, b))
    assert np.all(base[:, 1::2] == 0)


@pytest.mark.parametrize("name", ["exp", "negative", "sin", "absolute"])
def test_unary_out(session, name):
    x = random_array((2, 5), np.float64)
    out = np.full((2, 5), -1.0, order="F")
    r = getattr(tf, name)(session, x, out=out)
    assert r is out
    ref = {"exp": np.exp, "negative": np.negative, "sin": np.sin, "absolute": np.abs}[name](x)
    assert_close(out, ref)


def test_comparison_out(session):
    a = random_array((3,), np.int64)
    out = np.zeros(3, bool)
    tf.less(session, a, 0, out=out)
    np.testing.assert_array_equal(out, a < 0)


def test_out_untouched_on_error(session):
    out = np.full((3, 4), 5.0)
    with pytest.raises(ValueError):
        tf.add(session, np.ones((3, 4)), np.ones((2, 4)), out=out)
    with pytest.raises(ValueError):
        tf.add(session, np.ones((3, 4)), np.ones((3, 4)), out=np.zeros((4, 3)))
    with pytest.raises((TypeError, ValueError)):
        tf.add(session, np.ones((3, 4)), np.ones((3, 4)), out=np.zeros((3, 4), np.int32))
    with pytest.raises(TypeError):
        tf.exp(session, np.ones((3, 4), np.int64), out=out)
    np.testing.assert_array_equal(out, np.full((3, 4), 5.0))
    with pytest.raises(ValueError):
        tf.add(session, 1.0, 2.0, out=3.0)


def test_operators_in_with_block(backend):
    rng = np.random.default_rng(9)
    a = random_array((3, 4), np.float64, rng)
    b = random_array((4,), np.float64, rng)
    m = random_array((4, 2), np.float64, rng)
    ta, tb, tm = tf.asarray(a), tf.asarray(b), tf.asarray(m)
    with backend.session():
        assert_close(ta + tb, a + b)
        assert_close(ta - tb, a - b)
        assert_close(ta * tb, a * b)
        assert_close(ta / tb, a / b)
        assert_close(abs(ta) ** 0.5, np.abs(a) ** 0.5)
        assert_close(ta @ tm, a @ m)
        assert_close(a @ tm, a @ m)
        assert_close(-ta, -a)
        assert_close(abs(ta), np.abs(a))
        assert_close(2.0 + ta, 2.0 + a)
        assert_close(2.0 - ta, 2.0 - a)
        assert_close(3.0 * ta, 3.0 * a)
        assert_close(1.0 / tb, 1.0 / b)
        assert_close(2.0 ** ta, 2.0 ** a)
        assert_close(ta == ta, a == a)
        assert_close(ta != tb, a != b)
        assert_close(ta < tb, a < b)
        assert_close(ta <= 0.5, a <= 0.5)
        assert_close(ta > tb, a > b)
        assert_close(ta >= tb, a >= b)
        ti = tf.asarray(np.arange(1, 7, dtype=np.int32))
        assert_close(ti / 2, np.arange(1, 7, dtype=np.int32) / 2)
        assert_close(6 / ti, 6 / np.arange(1, 7, dtype=np.int32))


def test_operators_outside_session_raise(backend):
    t = tf.asarray(np.ones((2, 2)))
    for f in (lambda: t + 1, lambda: t * t, lambda: -t, lambda: t @ t, lambda: t < 1, lambda: abs(t),
              lambda: 1.0 / t, lambda: t == t):
        with pytest.raises(RuntimeError) as e:
            f()
        assert isinstance(e.value, tf.SessionEntryError)
        assert e.value.kind == "Poisoned"
    with backend.session():
        assert_close(t + 1, np.full((2, 2), 2.0))
    with pytest.raises(tf.SessionEntryError):
        t + 1  # after the block, again none


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_real_tensor_with_complex_scalar(session, dtype):
    a = random_array((3,), dtype)
    for scalar in (1j, 2 - 0.5j):
        assert_close(tf.add(session, a, scalar), np.add(a, scalar))
        assert_close(tf.multiply(session, scalar, a), np.multiply(scalar, a))


def test_large_ops_release_gil_and_are_correct(session):
    # Above 16384 elements the GIL is released (Note [GIL policy]); results must not change.
    rng = np.random.default_rng(17)
    a = random_array((150, 130), np.float64, rng)
    b = random_array((130,), np.float64, rng)
    assert_close(tf.add(session, a, b), a + b)
    assert_close(tf.exp(session, a[:, ::-1]), np.exp(a[:, ::-1]))
    out = np.empty((150, 130), order="F")
    tf.multiply(session, a, b, out=out)
    assert_close(out, a * b)
    tf.sin(session, a, out=out)
    assert_close(out, np.sin(a))
    assert_close(tf.divide(session, a.astype(np.int64), 3), a.astype(np.int64) / 3)
