"""Reductions, scans, softmax and vdot vs NumPy: axis=None/int/negative/tuple, keepdims, out=."""
import numpy as np
import pytest

import tenferro as tf
from conftest import LAYOUTS, assert_close, layouts, random_array

AXES = [None, 0, 1, 2, -1, -2, (0, 2), (2, 0), (-1, 0, 1), ()]
AXIS_IDS = ["None", "0", "1", "2", "-1", "-2", "(0,2)", "(2,0)", "all3", "empty"]


def _logsumexp(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    r = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    if not keepdims:
        r = np.squeeze(r, axis=axis) if axis is not None else r.reshape(())
    return r


REDUCE = {
    "sum": np.sum,
    "prod": np.prod,
    "max": np.max,
    "min": np.min,
    "mean": np.mean,
    "logsumexp": _logsumexp,
}


@pytest.mark.parametrize("name", sorted(REDUCE))
@pytest.mark.parametrize("axis", AXES, ids=AXIS_IDS)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduce_axes_keepdims(session, name, axis, keepdims):
    x = random_array((3, 4, 5), np.float64, low=-1.5, high=1.5)
    if name == "logsumexp" and axis == ():
        return  # scipy's logsumexp over no axes is not defined the same way
    ref = REDUCE[name](x, axis=axis, keepdims=keepdims)
    r = getattr(tf, name)(session, x, axis=axis, keepdims=keepdims)
    assert_close(r, np.asarray(ref), scale=4)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean"])
@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.int64, np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("axis", [None, 1, (0, 1)])
def test_reduce_dtypes(session, name, dtype, axis):
    x = random_array((4, 6), dtype)
    fn = getattr(tf, name)
    if np.dtype(dtype).kind == "c" and name in ("max", "min"):
        with pytest.raises(TypeError):
            fn(session, x, axis=axis)
        return
    ref = np.asarray(REDUCE[name](x, axis=axis))
    assert_close(fn(session, x, axis=axis), ref, scale=8)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "mean"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_reduce_layouts(session, name, layout):
    x = layouts((5, 4), np.float64)[layout]
    for axis in (None, 0, 1):
        assert_close(getattr(tf, name)(session, x, axis=axis), np.asarray(REDUCE[name](x, axis=axis)), scale=4)


def test_sum_prod_of_int32_and_bool_accumulate_in_int64(session):
    x = np.full((1000,), 2**21, dtype=np.int32)
    r = tf.sum(session, x)
    assert r.dtype == np.sum(x).dtype == np.int64
    assert r.item() == np.sum(x)
    b = np.ones((7, 3), bool)
    assert_close(tf.sum(session, b, axis=0), np.sum(b, axis=0))
    assert_close(tf.prod(session, np.arange(1, 15, dtype=np.int32)), np.prod(np.arange(1, 15, dtype=np.int32)))


def test_empty_reductions(session):
    e = np.zeros((0, 3))
    assert_close(tf.sum(session, e, axis=0), np.sum(e, axis=0))
    assert_close(tf.prod(session, e, axis=0), np.prod(e, axis=0))
    assert_close(tf.sum(session, e), np.sum(e))
    with pytest.raises(ValueError):
        tf.max(session, e, axis=0)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = np.mean(e, axis=0)
    assert_close(tf.mean(session, e, axis=0), ref)


def test_nan_propagates_in_max_min(session):
    x = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]])
    assert_close(tf.max(session, x, axis=1), np.max(x, axis=1))
    assert_close(tf.min(session, x, axis=1), np.min(x, axis=1))
    assert_close(tf.max(session, x), np.max(x))


def test_aliases(session):
    x = random_array((3, 4), np.float64)
    assert_close(tf.amax(session, x, axis=0), np.amax(x, axis=0))
    assert_close(tf.amin(session, x, axis=-1), np.amin(x, axis=-1))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_argmax_argmin(session, name, axis, keepdims, dtype):
    x = random_array((3, 4, 5), dtype)  # integers have ties: the first wins, as NumPy
    r = getattr(tf, name)(session, x, axis=axis, keepdims=keepdims)
    ref = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    assert_close(r, np.asarray(ref, dtype=np.int64))


def test_argmax_noncontiguous_and_nan(session):
    x = random_array((4, 6), np.float64)[::-1, 1::2]
    assert_close(tf.argmax(session, x), np.asarray(np.argmax(x)))
    assert_close(tf.argmin(session, x.T, axis=0), np.argmin(x.T, axis=0))
    y = np.array([1.0, np.nan, 5.0, np.nan])
    assert tf.argmax(session, y).item() == np.argmax(y)
    assert tf.argmin(session, y).item() == np.argmin(y)


def test_argmax_rejects_tuple_axis(session):
    with pytest.raises(ValueError):
        tf.argmax(session, np.ones((2, 2)), axis=(0, 1))


@pytest.mark.parametrize("name", ["sum", "max", "mean"])
def test_reduce_out(session, name):
    x = random_array((3, 4, 5), np.float64)
    out = np.zeros((3, 5))
    r = getattr(tf, name)(session, x, axis=1, out=out)
    assert r is out
    assert_close(out, REDUCE[name](x, axis=1))
    outk = tf.zeros((1, 4, 1))
    getattr(tf, name)(session, x, axis=(0, 2), keepdims=True, out=outk)
    assert_close(outk, REDUCE[name](x, axis=(0, 2), keepdims=True))
    bad = np.full((3, 4), 9.0)
    with pytest.raises(ValueError):
        getattr(tf, name)(session, x, axis=1, out=bad)
    np.testing.assert_array_equal(bad, np.full((3, 4), 9.0))


def test_argmax_out(session):
    x = random_array((3, 4), np.float64)
    out = np.zeros(4, np.int64)
    tf.argmax(session, x, axis=0, out=out)
    np.testing.assert_array_equal(out, np.argmax(x, axis=0))


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1, -3])
@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.int64, np.float32, np.float64, np.complex128])
def test_scans(session, name, axis, dtype):
    x = random_array((2, 3, 4), dtype, low=0.5, high=1.5)
    ref = getattr(np, name)(x, axis=axis)
    assert_close(getattr(tf, name)(session, x, axis=axis), ref, scale=8)


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_scans_strided_and_out(session, name):
    x = random_array((4, 6), np.float64, low=0.5, high=1.5)[::-1, ::2]
    assert_close(getattr(tf, name)(session, x, axis=1), getattr(np, name)(x, axis=1))
    assert_close(getattr(tf, name)(session, x), getattr(np, name)(x))
    out = np.zeros((4, 3))
    r = getattr(tf, name)(session, x, axis=0, out=out)
    assert r is out
    assert_close(out, getattr(np, name)(x, axis=0))


def _softmax(x, axis):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_log_softmax(session, axis, dtype):
    x = random_array((3, 5), dtype, low=-3, high=3)
    x64 = x.astype(np.float64)
    assert_close(tf.softmax(session, x, axis=axis), _softmax(x64, axis).astype(dtype), scale=4)
    ref = x64 - _logsumexp(x64, axis=axis, keepdims=True)
    assert_close(tf.log_softmax(session, x, axis=axis), ref.astype(dtype), scale=4)


def test_softmax_is_stable_and_needs_int_axis(session):
    x = np.array([1000.0, 1001.0, 1002.0])
    assert_close(tf.softmax(session, x, axis=0), _softmax(x, 0))
    assert_close(tf.logsumexp(session, x), np.asarray(_logsumexp(x)))
    with pytest.raises(ValueError):
        tf.softmax(session, x)


@pytest.mark.parametrize("dtype", [np.float64, np.complex64, np.complex128])
def test_vdot(session, dtype):
    a = random_array((3, 4), dtype)
    b = random_array((3, 4), dtype, np.random.default_rng(8))
    assert_close(tf.vdot(session, a, b), np.asarray(np.vdot(a, b)), scale=4)
    # different shapes, same size: both flattened in C order
    assert_close(tf.vdot(session, a, b.reshape(12)), np.asarray(np.vdot(a, b.reshape(12))), scale=4)
    assert_close(tf.vdot(session, a.T, b.reshape(4, 3)), np.asarray(np.vdot(a.T, b.reshape(4, 3))), scale=4)
    with pytest.raises(ValueError):
        tf.vdot(session, a, np.ones(5, dtype))


def test_reduce_axis_errors(session):
    x = np.ones((2, 3))
    with pytest.raises(IndexError) as e:
        tf.sum(session, x, axis=2)
    assert "sum" in str(e.value)
    with pytest.raises(IndexError):
        tf.max(session, x, axis=-3)
    with pytest.raises(IndexError):
        tf.sum(session, x, axis=(0, 0))
    with pytest.raises(IndexError):
        tf.cumsum(session, x, axis=5)
    with pytest.raises(IndexError):
        tf.argmax(session, x, axis=2)


def test_large_reduction_releases_gil_and_is_correct(session):
    x = random_array((200, 100), np.float64)  # above the 16384-element GIL threshold
    assert_close(tf.sum(session, x, axis=0), np.sum(x, axis=0), scale=10)
    assert_close(tf.mean(session, x), np.asarray(np.mean(x)), scale=10)
