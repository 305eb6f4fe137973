"""tenferro.Tensor: asarray round trips, zero copy, metadata, views, lifetime, docs."""
import gc
import inspect
import weakref

import numpy as np
import pytest

import tenferro as tf
from conftest import DTYPES, DTYPE_IDS, LAYOUTS, assert_close, layouts, random_array


def ptr(a):
    return np.asarray(a).__array_interface__["data"][0]


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_asarray_round_trip_every_dtype_and_layout(dtype, layout):
    a = layouts((3, 4), dtype)[layout]
    t = tf.asarray(a)
    assert isinstance(t, tf.Tensor)
    assert t.shape == a.shape
    assert t.ndim == a.ndim
    assert t.size == a.size
    assert t.dtype == a.dtype
    assert t.itemsize == a.itemsize
    assert t.strides == a.strides
    assert t.data_ptr == a.ctypes.data
    back = np.asarray(t)
    assert back.dtype == a.dtype
    assert back.strides == a.strides
    assert ptr(back) == a.__array_interface__["data"][0]
    np.testing.assert_array_equal(back, a)
    np.testing.assert_array_equal(t.numpy(), a)


@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 0, 3), (2, 3, 4), (1, 2, 1, 3, 1)])
def test_asarray_shapes(shape):
    a = random_array(shape, np.float64)
    t = tf.asarray(a)
    assert t.shape == shape
    assert t.ndim == len(shape)
    assert t.size == a.size
    np.testing.assert_array_equal(np.asarray(t), a)


def test_zero_copy_numpy_to_tensor_and_back():
    a = np.arange(12.0).reshape(3, 4)
    t = tf.asarray(a)
    v = np.asarray(t)
    assert ptr(v) == ptr(a)
    v[1, 2] = -7.0  # write through the view of the tensor
    assert a[1, 2] == -7.0
    a[0, 0] = 42.0  # and the other way
    assert np.asarray(t)[0, 0] == 42.0
    assert np.shares_memory(v, a)


def test_zero_copy_strided_write_through():
    base = np.zeros((4, 6), dtype=np.complex128)
    view = base[::2, ::-3]
    t = tf.asarray(view)
    assert t.strides == view.strides
    v = np.asarray(t)
    v[...] = 1 + 2j
    expected = np.zeros((4, 6), dtype=np.complex128)
    expected[::2, ::-3] = 1 + 2j
    np.testing.assert_array_equal(base, expected)


def test_asarray_of_tensor_is_identity_and_dtype_conversion_copies():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = tf.asarray(a)
    # "returned as is": the same tensor (a new Python wrapper over the same storage)
    for same in (tf.asarray(t), tf.asarray(t, dtype=np.int32)):
        assert same.data_ptr == t.data_ptr and same.shape == t.shape and same.strides == t.strides
    t64 = tf.asarray(a, dtype=np.float64)
    assert t64.dtype == np.float64
    assert t64.data_ptr != a.ctypes.data
    assert_close(t64, a.astype(np.float64))
    assert tf.asarray(a, dtype="complex64").dtype == np.complex64


def test_asarray_array_likes():
    lst = [[1.5, 2.5], [3.5, 4.5]]
    t = tf.asarray(lst)
    assert t.dtype == np.float64
    np.testing.assert_array_equal(np.asarray(t), np.asarray(lst))
    ti = tf.asarray([1, 2, 3])
    assert ti.dtype == np.asarray([1, 2, 3]).dtype
    tc = tf.asarray([1j, 2])
    assert tc.dtype == np.complex128


def test_dtypes_are_numpys():
    assert tf.bool_ == np.dtype(bool)
    assert tf.int32 == np.dtype(np.int32)
    assert tf.int64 == np.dtype(np.int64)
    assert tf.float32 == np.dtype(np.float32)
    assert tf.float64 == np.dtype(np.float64)
    assert tf.complex64 == np.dtype(np.complex64)
    assert tf.complex128 == np.dtype(np.complex128)
    assert isinstance(tf.float64, np.dtype)


@pytest.mark.parametrize("bad", [np.uint8, np.float16, np.int16, np.uint32, ">f8", "<U3", object])
def test_unsupported_dtypes_raise_typeerror(bad):
    a = np.zeros(3, dtype=bad)
    with pytest.raises(tf.DTypeError) as e:
        tf.asarray(a)
    assert isinstance(e.value, TypeError)
    with pytest.raises(TypeError):
        tf.zeros((2,), dtype=bad)


def test_readonly_arrays_give_readonly_tensors():
    a = np.arange(4.0)
    a.setflags(write=False)
    t = tf.asarray(a)
    assert t.readonly
    assert not np.asarray(t).flags.writeable
    w = tf.asarray(np.arange(4.0))
    assert not w.readonly
    assert np.asarray(w).flags.writeable
    b = tf.asarray(np.broadcast_to(np.arange(3.0), (2, 3)))
    assert b.readonly


def test_T_is_a_view():
    a = random_array((2, 3, 4), np.float64)
    t = tf.asarray(a)
    tt = t.T
    assert tt.shape == (4, 3, 2)
    assert tt.strides == a.T.strides
    assert tt.data_ptr == t.data_ptr
    np.testing.assert_array_equal(np.asarray(tt), a.T)
    np.testing.assert_array_equal(np.asarray(tt.T), a)


@pytest.mark.parametrize(
    "key",
    [
        1,
        -1,
        (slice(None), 2),
        (slice(1, None), slice(None, None, -1)),
        (Ellipsis, 0),
        (None, Ellipsis, None),
        (0, None, slice(None, None, 2)),
        (slice(None, None, -2), Ellipsis),
        (slice(5, 1, -1),),
        (slice(10, 20),),
        np.int64(1),
    ],
)
def test_basic_indexing_views(key):
    a = random_array((4, 5, 3), np.float64)
    t = tf.asarray(a)
    v = t[key]
    ref = a[key]
    assert v.shape == ref.shape
    if ref.size:
        assert v.strides == ref.strides or ref.ndim == 0
        assert v.data_ptr == ref.__array_interface__["data"][0]
    np.testing.assert_array_equal(np.asarray(v), ref)


def test_indexing_errors():
    t = tf.asarray(np.zeros((2, 3)))
    with pytest.raises(IndexError):
        t[2]
    with pytest.raises(IndexError):
        t[0, -4]
    with pytest.raises(IndexError):
        t[0, 0, 0]
    with pytest.raises(IndexError):
        t[..., ...]
    with pytest.raises(IndexError):
        t[np.array([0, 1])]
    with pytest.raises(IndexError):
        t[[0, 1]]
    with pytest.raises(IndexError):
        t[np.array([True, False])]


def test_setitem_in_session(backend):
    a = np.zeros((3, 4))
    t = tf.asarray(a)
    with backend.session():
        t[1] = 5.0
        t[:, ::-2] = np.arange(3.0)[:, None] + 10
        t[0, 0] = tf.asarray(np.array(-1.0))
    ref = np.zeros((3, 4))
    ref[1] = 5.0
    ref[:, ::-2] = np.arange(3.0)[:, None] + 10
    ref[0, 0] = -1.0
    np.testing.assert_array_equal(a, ref)


def test_setitem_outside_session_raises_and_leaves_data():
    a = np.zeros(3)
    t = tf.asarray(a)
    with pytest.raises(RuntimeError):
        t[0] = 1.0
    np.testing.assert_array_equal(a, np.zeros(3))


def test_len_bool_item_repr():
    t = tf.asarray(np.arange(6.0).reshape(2, 3))
    assert len(t) == 2
    with pytest.raises(TypeError):
        len(tf.asarray(np.array(1.0)))
    assert bool(tf.asarray(np.array([3.0])))
    assert not bool(tf.asarray(np.array(0.0)))
    with pytest.raises(ValueError):
        bool(t)
    for value, dtype in [(True, np.bool_), (-3, np.int32), (7, np.int64), (1.5, np.float32),
                         (2.25, np.float64), (1 + 2j, np.complex64), (-1.5 - 0.5j, np.complex128)]:
        item = tf.asarray(np.array([value], dtype=dtype)).item()
        ref = np.array([value], dtype=dtype).item()
        assert item == ref
        assert type(item) is type(ref)
    with pytest.raises(ValueError):
        t.item()
    r = repr(t)
    assert r.startswith("tenferro.Tensor(") and "array(" in r


def test_hash_is_disabled():
    with pytest.raises(TypeError):
        hash(tf.asarray(np.zeros(2)))


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_constructors(dtype):
    for name in ("zeros", "ones"):
        t = getattr(tf, name)((2, 3), dtype=dtype)
        ref = getattr(np, name)((2, 3), dtype=dtype)
        assert t.dtype == ref.dtype and t.shape == ref.shape
        assert np.asarray(t).flags.c_contiguous
        np.testing.assert_array_equal(np.asarray(t), ref)
    e = tf.empty((4, 1, 2), dtype=dtype)
    assert e.shape == (4, 1, 2) and e.dtype == np.dtype(dtype)
    assert np.asarray(e).flags.c_contiguous
    f = tf.full((3, 2), 1, dtype=dtype)
    np.testing.assert_array_equal(np.asarray(f), np.full((3, 2), 1, dtype=dtype))
    assert f.dtype == np.dtype(dtype)


def test_constructor_defaults_follow_numpy():
    assert tf.zeros(3).dtype == np.zeros(3).dtype
    assert tf.ones((2, 2)).dtype == np.ones((2, 2)).dtype
    assert tf.zeros(3).shape == (3,)
    for v in (2, 2.5, 1 + 1j, True):
        t = tf.full((2,), v)
        assert t.dtype == np.full((2,), v).dtype
        np.testing.assert_array_equal(np.asarray(t), np.full((2,), v))


@pytest.mark.parametrize(
    "args,kwargs",
    [((5,), {}), ((2, 9), {}), ((1, 10, 3), {}), ((0.0, 1.0, 0.25), {}), ((10, 0, -2), {}),
     ((5,), {"dtype": np.float32}), ((3,), {"dtype": np.complex128}), ((-1.5, 2.0, 0.5), {})],
)
def test_arange(args, kwargs):
    t = tf.arange(*args, **kwargs)
    ref = np.arange(*args, **kwargs)
    assert t.dtype == ref.dtype
    assert_close(t, ref)


@pytest.mark.parametrize("n,m", [(3, None), (2, 4), (4, 2), (1, 1), (0, None)])
def test_eye(n, m):
    for dtype in (None, np.int32, np.complex64):
        t = tf.eye(n, m, dtype=dtype)
        ref = np.eye(n, m, dtype=dtype if dtype is not None else float)
        assert t.dtype == ref.dtype
        np.testing.assert_array_equal(np.asarray(t), ref)


def test_tensor_keeps_source_array_alive():
    a = np.arange(10.0) * 3
    expected = a.copy()
    ref = weakref.ref(a)
    t = tf.asarray(a)
    del a
    gc.collect()
    assert ref() is not None  # the tensor holds the array
    np.testing.assert_array_equal(np.asarray(t), expected)
    v = t[2:5]
    del t
    gc.collect()
    assert ref() is not None  # a view holds it too
    np.testing.assert_array_equal(np.asarray(v), expected[2:5])
    del v
    gc.collect()
    assert ref() is None  # released with the last view


def test_numpy_view_keeps_tensor_alive():
    t = tf.zeros((3, 3))
    ones = tf.ones((3, 3))
    np.asarray(ones)  # construct and drop a view: nothing breaks
    v = np.asarray(t)
    wr = weakref.ref(t)
    del t
    gc.collect()
    v[...] = 4.0  # the memory is still valid and writable
    np.testing.assert_array_equal(v, np.full((3, 3), 4.0))
    assert v.base is not None
    del v
    gc.collect()
    assert wr() is None


def _check_all(objs):
    for obj, exp in objs.values():
        np.testing.assert_array_equal(np.asarray(obj), exp)


@pytest.mark.parametrize("seed", range(8))
def test_chains_of_views_collected_in_random_order(seed):
    # numpy array -> tensor -> views -> numpy views -> DLPack tensors; drop them in a
    # random order: every survivor keeps reading the right values, and the source goes
    # with the last one (checked under ASan by the asan preset's python_tests).
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((6, 5))
    expected = a.copy()
    ref = weakref.ref(a)
    t = tf.asarray(a)
    objs = {"a": (a, expected), "t": (t, expected), "tT": (t.T, expected.T), "row": (t[1], expected[1]),
            "np": (np.asarray(t[::-1]), expected[::-1]), "dl": (tf.from_dlpack(t[:, 1:3]), expected[:, 1:3]),
            "npT": (np.asarray(t.T), expected.T)}
    objs["np2"] = (np.asarray(objs["dl"][0]), expected[:, 1:3])
    del a, t
    names = list(objs)
    rng.shuffle(names)
    for name in names:
        del objs[name]
        gc.collect()
        _check_all(objs)  # (a function: no loop variable keeps an object alive here)
        assert (ref() is None) == (not objs)


def test_result_outlives_session(backend):
    a = random_array((3, 4), np.float64)
    with backend.session() as s:
        r = tf.add(s, a, a)
    gc.collect()
    assert_close(r, a + a)


def _public(module):
    for name in dir(module):
        if name.startswith("_"):
            continue
        obj = getattr(module, name)
        if inspect.ismodule(obj) or isinstance(obj, np.dtype) or isinstance(obj, str):
            continue
        yield name, obj


@pytest.mark.parametrize("module", [tf, tf.linalg, tf.fft], ids=["tenferro", "linalg", "fft"])
def test_every_public_function_and_class_has_a_docstring(module):
    assert module.__doc__ and module.__doc__.strip()
    names = list(_public(module))
    assert len(names) > 10
    for name, obj in names:
        assert callable(obj), name
        doc = obj.__doc__
        assert doc and doc.strip(), f"{module.__name__}.{name} has no docstring"
    for name in ("shape", "ndim", "size", "dtype", "strides", "itemsize", "readonly", "data_ptr", "T",
                 "numpy", "item", "reshape", "__getitem__", "__setitem__", "__dlpack__", "__dlpack_device__"):
        if module is tf:
            assert getattr(tf.Tensor, name).__doc__, f"Tensor.{name} has no docstring"


def test_help_renders():
    import pydoc

    text = pydoc.render_doc(tf.add, renderer=pydoc.plaintext)
    assert "add" in text and "out" in text
    text = pydoc.render_doc(tf.linalg.svd, renderer=pydoc.plaintext)
    assert "full_matrices" in text


def test_version():
    assert isinstance(tf.__version__, str) and tf.__version__.count(".") == 2


def test_submodule_imports():
    import tenferro.fft
    import tenferro.linalg
    from tenferro.fft import rfft
    from tenferro.linalg import svd

    assert rfft is tf.fft.rfft and svd is tf.linalg.svd
    assert tenferro.linalg is tf.linalg and tenferro.fft is tf.fft
