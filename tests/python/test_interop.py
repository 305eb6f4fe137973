"""DLPack with PyTorch and NumPy, both directions, zero copy."""
import gc
import weakref

import numpy as np
import pytest
import torch

import tenferro as tf
from conftest import DTYPES, DTYPE_IDS, assert_close, random_array

# PyTorch 1.13 and NumPy 1.24 predate DLPack's kDLBool: bool goes tenferro <-> tenferro only.
TORCH_DTYPES = [np.int32, np.int64, np.float32, np.float64, np.complex64, np.complex128]
TORCH_IDS = ["int32", "int64", "float32", "float64", "complex64", "complex128"]
NP_DLPACK_DTYPES = [np.int32, np.int64, np.float32, np.float64, np.complex64, np.complex128]


def torch_ptr(x):
    return x.data_ptr()


@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=TORCH_IDS)
def test_torch_from_tenferro_shares_memory(dtype):
    a = random_array((3, 4), dtype)
    t = tf.asarray(a)
    x = torch.from_dlpack(t)
    assert tuple(x.shape) == (3, 4)
    assert x.dtype == torch.from_numpy(a).dtype
    assert torch_ptr(x) == t.data_ptr
    np.testing.assert_array_equal(x.numpy(), a)
    x[1, 2] = 9  # write through torch, visible through the tensor and the array
    assert np.asarray(t)[1, 2] == 9
    assert a[1, 2] == 9


@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=TORCH_IDS)
def test_tenferro_from_torch_shares_memory(dtype):
    src = torch.from_numpy(random_array((2, 5), dtype))
    t = tf.from_dlpack(src)
    assert t.shape == (2, 5)
    assert t.dtype == np.dtype(dtype)
    assert t.data_ptr == torch_ptr(src)
    np.testing.assert_array_equal(np.asarray(t), src.numpy())
    src[0, 0] = 3
    assert np.asarray(t)[0, 0] == 3
    np.asarray(t)[1, 4] = -2
    assert src[1, 4].item() == -2


@pytest.mark.parametrize(
    "make",
    [
        lambda x: x.t(),
        lambda x: x[:, ::2],
        lambda x: x[1:, 1:],
        lambda x: x.permute(1, 0)[::2],
        lambda x: x.expand(3, 4, 6)[1],
        lambda x: x[0],
    ],
    ids=["t", "step", "offset", "perm_step", "expand", "row"],
)
def test_strided_torch_tensors(make):
    base = torch.arange(24, dtype=torch.float64).reshape(4, 6)
    x = make(base)
    t = tf.from_dlpack(x)
    assert t.shape == tuple(x.shape)
    assert t.strides == tuple(s * x.element_size() for s in x.stride())
    assert t.data_ptr == x.data_ptr()
    np.testing.assert_array_equal(np.asarray(t), x.numpy())


def test_strided_tenferro_to_torch():
    a = np.arange(30.0).reshape(5, 6)
    for view in (a.T, a[::2, 1::2], a[:, 3], a[1:4, 2:]):
        t = tf.asarray(view)
        x = torch.from_dlpack(t)
        assert tuple(x.stride()) == tuple(s // 8 for s in view.strides)
        np.testing.assert_array_equal(x.numpy(), view)
        assert x.data_ptr() == view.__array_interface__["data"][0]


def test_negative_strides_to_numpy():
    a = np.arange(12.0).reshape(3, 4)
    t = tf.asarray(a[::-1])
    y = np.from_dlpack(t)  # DLPack strides may be negative; NumPy takes them in place
    np.testing.assert_array_equal(y, a[::-1])
    assert np.shares_memory(y, a)


def test_ops_on_torch_inputs(backend):
    x = torch.randn(3, 4, dtype=torch.float64)
    y = torch.randn(4, 2, dtype=torch.float64)
    with backend.session() as s:
        r = tf.einsum(s, "ij,jk->ik", tf.from_dlpack(x), tf.from_dlpack(y))
        e = tf.exp(s, tf.from_dlpack(x))
        # array-likes go through numpy.asarray (torch CPU tensors support it)
        q = tf.add(s, tf.asarray(x), 1.0)
    assert_close(r, x.numpy() @ y.numpy())
    assert_close(e, np.exp(x.numpy()))
    assert_close(q, x.numpy() + 1.0)


def test_torch_result_of_op_round_trip(backend):
    a = random_array((4, 3), np.complex128)
    with backend.session() as s:
        r = tf.multiply(s, a, 2.0)
    x = torch.from_dlpack(r)
    assert x.dtype == torch.complex128
    np.testing.assert_array_equal(x.numpy(), a * 2.0)
    back = tf.from_dlpack(x)
    assert back.data_ptr == r.data_ptr


@pytest.mark.parametrize("dtype", NP_DLPACK_DTYPES, ids=TORCH_IDS)
def test_numpy_from_dlpack(dtype):
    a = random_array((3, 2), dtype)
    t = tf.asarray(a)
    y = np.from_dlpack(t)
    assert y.dtype == a.dtype
    assert y.__array_interface__["data"][0] == a.ctypes.data
    np.testing.assert_array_equal(y, a)
    t2 = tf.from_dlpack(a)  # NumPy arrays have __dlpack__ since 1.22
    assert t2.data_ptr == a.ctypes.data
    assert t2.dtype == a.dtype
    np.testing.assert_array_equal(np.asarray(t2), a)


def test_from_dlpack_capsule_and_consumed_capsule():
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    cap = tf.asarray(a).__dlpack__()
    t = tf.from_dlpack(cap)
    assert t.data_ptr == a.ctypes.data
    np.testing.assert_array_equal(np.asarray(t), a)
    with pytest.raises(ValueError):  # a capsule is consumed once
        tf.from_dlpack(cap)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_tenferro_to_tenferro_every_dtype(dtype):
    a = random_array((2, 3), dtype)
    t = tf.from_dlpack(tf.asarray(a[:, ::-1]))
    assert t.dtype == a.dtype
    assert t.data_ptr == a[:, ::-1].__array_interface__["data"][0]
    np.testing.assert_array_equal(np.asarray(t), a[:, ::-1])


def test_bool_export_is_kdlbool():
    t = tf.asarray(np.array([True, False]))
    # PyTorch 1.13 has no kDLBool (code 6): it refuses the capsule rather than misreading it.
    with pytest.raises((RuntimeError, TypeError, BufferError)):
        torch.from_dlpack(t)


def test_dlpack_device():
    t = tf.zeros((2,))
    assert t.__dlpack_device__() == (1, 0)  # (kDLCPU, 0)
    assert tuple(t.__dlpack_device__()) == tuple(torch.zeros(1).__dlpack_device__())
    assert tuple(t.__dlpack_device__()) == tuple(np.zeros(1).__dlpack_device__())


def test_readonly_export_raises_buffererror():
    a = np.arange(3.0)
    a.setflags(write=False)
    with pytest.raises(BufferError):
        tf.asarray(a).__dlpack__()
    with pytest.raises(BufferError):
        tf.broadcast_to(np.arange(3.0), (2, 3)).__dlpack__()


def test_dlpack_stream_argument():
    t = tf.zeros((2,))
    assert tf.from_dlpack(t.__dlpack__(stream=None)).shape == (2,)
    with pytest.raises(ValueError):
        t.__dlpack__(stream=1)


def test_from_dlpack_rejects_non_dlpack_objects():
    with pytest.raises(ValueError):
        tf.from_dlpack(object())
    with pytest.raises(ValueError):
        tf.from_dlpack([1, 2, 3])


def test_torch_source_kept_alive_by_tenferro():
    x = torch.arange(8, dtype=torch.float64) * 2
    expected = x.numpy().copy()
    t = tf.from_dlpack(x)
    del x
    gc.collect()
    v = t[1:]
    del t
    gc.collect()
    np.testing.assert_array_equal(np.asarray(v), expected[1:])


def test_tenferro_kept_alive_by_torch():
    a = np.arange(5.0)
    wr = weakref.ref(a)
    t = tf.asarray(a)
    x = torch.from_dlpack(t)
    del a, t
    gc.collect()
    assert wr() is not None
    np.testing.assert_array_equal(x.numpy(), np.arange(5.0))
    del x
    gc.collect()
    assert wr() is None  # the producer's deleter ran with the last view
