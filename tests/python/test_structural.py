"""Shape manipulation vs NumPy: views without a session, copies with one."""
import numpy as np
import pytest

import tenferro as tf
from conftest import DTYPES, DTYPE_IDS, LAYOUTS, assert_close, layouts, random_array


def same_view(t, ref):
    """t is a view equal to NumPy's view ref (same data, shape, strides and address)."""
    assert t.shape == ref.shape
    np.testing.assert_array_equal(np.asarray(t), ref)
    if ref.size > 1:
        assert t.strides == ref.strides
        assert t.data_ptr == ref.__array_interface__["data"][0]


@pytest.mark.parametrize("axes", [None, (0, 1, 2), (2, 0, 1), (1, 2, 0), (-1, 0, -2)])
def test_transpose(axes):
    a = random_array((2, 3, 4), np.float64)
    same_view(tf.transpose(a if axes else tf.asarray(a), axes), np.transpose(a, axes))


def test_transpose_errors():
    with pytest.raises(IndexError):
        tf.transpose(np.ones((2, 3)), (0, 1, 2))
    with pytest.raises(IndexError):
        tf.transpose(np.ones((2, 3)), (0, 2))


@pytest.mark.parametrize("a1,a2", [(0, 1), (0, 2), (-1, 0), (1, 1)])
def test_swapaxes(a1, a2):
    a = random_array((2, 3, 4), np.complex64)
    same_view(tf.swapaxes(a, a1, a2), np.swapaxes(a, a1, a2))


@pytest.mark.parametrize("src,dst", [(0, 2), (2, 0), (-1, 1), (1, -1), (0, 0)])
def test_moveaxis(src, dst):
    a = random_array((2, 3, 4), np.int32)
    same_view(tf.moveaxis(a, src, dst), np.moveaxis(a, src, dst))


@pytest.mark.parametrize("axis", [None, 0, 2, -1, (0, 2), (0, -1)])
def test_squeeze(axis):
    a = random_array((1, 3, 1, 4, 1), np.float32)
    same_view(tf.squeeze(a, axis), np.squeeze(a, axis=axis))


def test_squeeze_error():
    with pytest.raises(ValueError):
        tf.squeeze(np.ones((2, 1)), 0)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_expand_dims(axis):
    a = random_array((2, 3), np.float64)
    t = tf.expand_dims(a, axis)
    ref = np.expand_dims(a, axis)
    assert t.shape == ref.shape
    np.testing.assert_array_equal(np.asarray(t), ref)
    assert t.data_ptr == a.ctypes.data


@pytest.mark.parametrize("shape,target", [((3,), (2, 3)), ((2, 1), (2, 4)), ((1,), (3, 2, 5)), ((), (2, 2)),
                                          ((4, 1, 3), (2, 4, 5, 3))])
def test_broadcast_to(shape, target):
    a = random_array(shape, np.float64)
    t = tf.broadcast_to(a, target)
    ref = np.broadcast_to(a, target)
    assert t.readonly
    same_view(t, ref)


def test_broadcast_to_error():
    with pytest.raises(ValueError):
        tf.broadcast_to(np.ones(3), (2, 4))


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
def test_flip(axis):
    a = random_array((2, 3, 4), np.float64)
    same_view(tf.flip(a, axis), np.flip(a, axis))


@pytest.mark.parametrize("newshape", [(12,), (3, 4), (4, -1), (2, 2, 3), (-1,), (1, 12, 1), 12])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_reshape_vs_numpy(session, newshape, layout):
    a = layouts((3, 4), np.float64)[layout]
    r = tf.reshape(session, a, newshape)
    ref = np.reshape(a, newshape)
    assert r.shape == ref.shape
    np.testing.assert_array_equal(np.asarray(r), ref)
    if np.shares_memory(ref, a):  # NumPy makes a view: so must tenferro
        assert r.data_ptr == ref.__array_interface__["data"][0]
        assert r.strides == ref.strides or ref.size <= 1


def test_tensor_reshape_method(backend):
    a = np.arange(24.0).reshape(2, 3, 4)
    t = tf.asarray(a)
    r = t.reshape(4, 6)
    same_view(r, a.reshape(4, 6))
    same_view(t.reshape((6, -1)), a.reshape(6, -1))
    with backend.session():
        c = t.T.reshape(24)  # needs a copy: in the current session
    np.testing.assert_array_equal(np.asarray(c), a.T.reshape(24))
    with pytest.raises(RuntimeError):
        t.T.reshape(24)  # a copy outside any session


def test_reshape_errors(session):
    with pytest.raises(ValueError):
        tf.reshape(session, np.ones((3, 4)), (5, 2))
    with pytest.raises(ValueError):
        tf.reshape(session, np.ones((3, 4)), (-1, -1))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_ascontiguousarray(session, layout):
    a = layouts((3, 4), np.complex128)[layout]
    r = tf.ascontiguousarray(session, a)
    v = np.asarray(r)
    assert v.flags.c_contiguous
    np.testing.assert_array_equal(v, a)
    if a.flags.c_contiguous:
        assert r.data_ptr == a.ctypes.data


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concatenate(session, dtype, axis):
    rng = np.random.default_rng(0)
    shapes = {0: [(2, 3), (1, 3), (4, 3)], 1: [(3, 2), (3, 1), (3, 4)], -1: [(3, 2), (3, 1), (3, 4)]}[axis]
    xs = [random_array(s, dtype, rng) for s in shapes]
    xs[1] = np.asfortranarray(xs[1])
    xs[2] = xs[2][::-1]
    r = tf.concatenate(session, xs, axis=axis)
    assert np.asarray(r).flags.c_contiguous
    assert_close(r, np.concatenate(xs, axis=axis))


def test_concatenate_default_axis_and_tuple(session):
    xs = (np.ones((2, 2)), np.zeros((1, 2)), tf.asarray(np.full((3, 2), 2.0)))
    assert_close(tf.concatenate(session, xs), np.concatenate([np.asarray(x) for x in xs]))


def test_concatenate_errors(session):
    with pytest.raises(ValueError):
        tf.concatenate(session, [np.ones((2, 3)), np.ones((2, 4))], axis=0)
    with pytest.raises(ValueError):
        tf.concatenate(session, [], axis=0)
    with pytest.raises(IndexError):
        tf.concatenate(session, [np.ones((2, 3))], axis=2)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_stack(session, axis):
    rng = np.random.default_rng(1)
    xs = [random_array((2, 3), np.float64, rng) for _ in range(4)]
    xs[0] = xs[0].T.copy().T
    assert_close(tf.stack(session, xs, axis=axis), np.stack(xs, axis=axis))


def test_stack_errors(session):
    with pytest.raises(ValueError):
        tf.stack(session, [np.ones(3), np.ones(4)])
    with pytest.raises(IndexError):
        tf.stack(session, [np.ones(3), np.ones(3)], axis=2)


@pytest.mark.parametrize("name", ["tril", "triu"])
@pytest.mark.parametrize("k", [-2, -1, 0, 1, 3])
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3), (2, 3, 4)])
def test_tril_triu(session, name, k, shape):
    a = random_array(shape, np.float64)
    ref = getattr(np, name)(a, k)
    assert_close(getattr(tf, name)(session, a, k), ref)
    if k == 0:
        assert_close(getattr(tf, name)(session, a), getattr(np, name)(a))


def test_tril_of_strided(session):
    a = random_array((5, 6), np.complex128)[::-1, 1:]
    assert_close(tf.tril(session, a, 1), np.tril(a, 1))
    assert_close(tf.triu(session, a.T, -1), np.triu(a.T, -1))


def test_views_share_storage_and_compose():
    a = np.arange(24.0).reshape(2, 3, 4)
    t = tf.flip(tf.swapaxes(tf.expand_dims(a, 0), 1, 3), 2)
    ref = np.flip(np.swapaxes(np.expand_dims(a, 0), 1, 3), 2)
    np.testing.assert_array_equal(np.asarray(t), ref)
    np.asarray(tf.transpose(a))[0, 0, 0] = -1.0
    assert a[0, 0, 0] == -1.0


def test_axis_errors():
    with pytest.raises(IndexError):
        tf.swapaxes(np.ones((2, 3)), 0, 2)
    with pytest.raises(IndexError):
        tf.moveaxis(np.ones((2, 3)), 3, 0)
    with pytest.raises(IndexError):
        tf.expand_dims(np.ones((2, 3)), 3)
    with pytest.raises(IndexError):
        tf.flip(np.ones((2, 3)), 2)
