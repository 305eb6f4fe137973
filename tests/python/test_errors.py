"""Exceptions: classes subclass the documented builtins; ops raise them with the op's name."""
import numpy as np
import pytest

import tenferro as tf

HIERARCHY = {
    "ShapeError": ValueError,
    "RankError": ValueError,
    "ArgumentError": ValueError,
    "DTypeError": TypeError,
    "AxisError": IndexError,
    "IndexError": IndexError,
    "UnsupportedError": NotImplementedError,
    "NumericalError": RuntimeError,
    "SessionEntryError": RuntimeError,
    "RuntimeStateError": RuntimeError,
    "BackendError": RuntimeError,
    "InternalError": RuntimeError,
}


@pytest.mark.parametrize("name,builtin", sorted(HIERARCHY.items()))
def test_exception_hierarchy(name, builtin):
    cls = getattr(tf, name)
    assert issubclass(cls, tf.Error)
    assert issubclass(cls, builtin)
    assert cls.__module__ == "tenferro"
    assert cls.__doc__
    err = cls("message")
    assert str(err) == "message"


def test_error_base_and_every_exported_exception_is_covered():
    assert issubclass(tf.Error, Exception)
    assert not issubclass(tf.Error, (ValueError, TypeError, RuntimeError))
    exported = {n for n in dir(tf) if isinstance(getattr(tf, n), type) and issubclass(getattr(tf, n), BaseException)}
    assert exported == set(HIERARCHY) | {"Error"}
    assert tf.IndexError is not IndexError


def test_shape_errors_name_the_op_and_shapes_in_cpp_order(session):
    with pytest.raises(tf.ShapeError) as e:
        tf.add(session, np.ones((2, 3)), np.ones((4,)))
    assert isinstance(e.value, ValueError)
    msg = str(e.value)
    assert "add" in msg
    assert "[3, 2]" in msg and "[4]" in msg  # docs/python.md: C++ (reversed) order
    with pytest.raises(ValueError) as e:
        tf.einsum(session, "ij,jk->ik", np.ones((2, 3)), np.ones((4, 5)))
    assert "einsum" in str(e.value)
    with pytest.raises(ValueError) as e:
        tf.matmul(session, np.ones((2, 3)), np.ones((4, 5)))
    assert "matmul" in str(e.value) or "einsum" in str(e.value)


def test_dtype_errors(session):
    with pytest.raises(tf.DTypeError) as e:
        tf.sin(session, np.arange(3))
    assert isinstance(e.value, TypeError) and "sin" in str(e.value)
    with pytest.raises(TypeError) as e:
        tf.asarray(np.zeros(3, np.uint8))
    assert "asarray" in str(e.value)
    with pytest.raises(TypeError):
        tf.astype(session, np.ones(2), "not a dtype")
    with pytest.raises(TypeError):
        tf.zeros(3, dtype=np.float16)
    with pytest.raises(TypeError):
        tf.less(session, np.ones(2, complex), np.ones(2, complex))


def test_axis_errors(session):
    for f in (lambda: tf.sum(session, np.ones((2, 3)), axis=2),
              lambda: tf.cumsum(session, np.ones(3), axis=-2),
              lambda: tf.transpose(np.ones((2, 3)), (0, 5)),
              lambda: tf.fft.fft(session, np.ones(3, complex), axis=1),
              lambda: tf.concatenate(session, [np.ones(2)], axis=1),
              lambda: tf.linalg.norm(session, np.ones((2, 2)), None, 2)):
        with pytest.raises(tf.AxisError) as e:
            f()
        assert isinstance(e.value, IndexError)
        assert "axis" in str(e.value)


def test_index_errors():
    t = tf.asarray(np.zeros((2, 3)))
    with pytest.raises(tf.IndexError) as e:
        t[5]
    assert isinstance(e.value, IndexError)
    assert "__getitem__" in str(e.value) and "5" in str(e.value)
    with pytest.raises(tf.IndexError) as e:
        t[np.array([0])]
    assert "advanced" in str(e.value)


def test_argument_errors(session):
    with pytest.raises(tf.ArgumentError):
        tf.add("not a session", 1, 2)
    with pytest.raises(ValueError) as e:
        tf.sum(None, np.ones(2))
    assert "Session" in str(e.value)
    with pytest.raises(ValueError):
        tf.CpuBackend(num_threads=0)
    with pytest.raises(ValueError):
        tf.add(session, np.ones(2), 2**70)
    with pytest.raises(ValueError):
        tf.full((2,), np.ones(2))
    with pytest.raises(ValueError):
        tf.arange(np.ones(2))


def test_closed_session_raises_runtime_error(backend):
    with backend.session() as s:
        assert s.is_open
        assert s.num_threads == 1
        tf.add(s, 1.0, 2.0)
    assert not s.is_open
    with pytest.raises(tf.SessionEntryError) as e:
        tf.add(s, np.ones(2), np.ones(2))
    assert isinstance(e.value, RuntimeError)
    assert e.value.kind == "Poisoned"
    assert "add" in str(e.value)
    for f in (lambda: tf.sum(s, np.ones(2)), lambda: tf.einsum(s, "i->", np.ones(2)),
              lambda: tf.linalg.inv(s, np.eye(2)), lambda: tf.fft.fft(s, np.ones(2, complex)),
              lambda: tf.reshape(s, np.ones(4), (2, 2))):
        with pytest.raises(RuntimeError):
            f()


def test_close_method_and_reentry(backend):
    s = backend.session()
    s.__enter__()
    try:
        assert s.is_open
        with pytest.raises(tf.SessionEntryError) as e:
            s.__enter__()
        assert e.value.kind == "Reentered"
        np.testing.assert_array_equal(np.asarray(tf.add(s, np.ones(2), 1.0)), np.full(2, 2.0))
    finally:
        s.close()
    assert not s.is_open
    with pytest.raises(RuntimeError):
        tf.add(s, 1.0, 1.0)
    s.close()  # closing twice is harmless


def test_try_session_contended(backend):
    import threading

    kinds = []

    def worker():
        try:
            with backend.try_session():
                kinds.append("entered")
        except tf.SessionEntryError as e:
            assert isinstance(e, RuntimeError)
            kinds.append(e.kind)

    with backend.session():
        th = threading.Thread(target=worker)
        th.start()
        th.join()
        # The same thread asking again is a re-entry, not contention.
        with pytest.raises(tf.SessionEntryError) as e:
            with backend.try_session():
                pass
        assert e.value.kind == "Reentered"
    assert kinds == ["Contended"]
    with backend.try_session() as s:  # free again
        assert s.is_open


def test_numerical_error_carries_info(session):
    with pytest.raises(tf.NumericalError) as e:
        tf.linalg.inv(session, np.zeros((3, 3)))
    assert isinstance(e.value, RuntimeError)
    assert isinstance(e.value.info, int)
    assert "inv" in str(e.value)


def test_outputs_untouched_on_error(session):
    out = np.full((2, 3), 7.0)
    cases = [
        lambda: tf.add(session, np.ones((2, 3)), np.ones((3, 2)), out=out),
        lambda: tf.multiply(session, np.ones((2, 3)), np.ones((2, 3)), out=out[:, :2]),
        lambda: tf.sum(session, np.ones((2, 3, 4)), axis=0, out=out),
        lambda: tf.einsum(session, "ij,jk->ik", np.ones((2, 4)), np.ones((4, 4)), out=out),
        lambda: tf.exp(session, np.ones((3, 2)), out=out),
        lambda: tf.cumsum(session, np.ones((2, 2)), axis=0, out=out),
        lambda: tf.fmod(session, np.ones((2, 3), np.int64), 0, out=np.asarray(out, np.int64)),
    ]
    for f in cases:
        with pytest.raises(tf.Error):
            f()
        np.testing.assert_array_equal(out, np.full((2, 3), 7.0))


def test_readonly_out_is_refused(session):
    ro = np.zeros(3)
    ro.setflags(write=False)
    with pytest.raises(tf.Error):
        tf.add(session, np.ones(3), np.ones(3), out=ro)
    np.testing.assert_array_equal(ro, np.zeros(3))
    with pytest.raises(tf.Error):
        tf.copyto(session, tf.broadcast_to(np.zeros(3), (2, 3)), np.ones(3))


def test_exceptions_are_catchable_as_builtins(session):
    try:
        tf.sum(session, np.ones(2), axis=3)
    except IndexError as e:
        assert "sum" in str(e)
    else:
        raise AssertionError("no exception")
    try:
        tf.linalg.solve(session, np.ones((2, 2)), np.ones(2))
    except RuntimeError as e:
        assert "solve" in str(e) or "singular" in str(e).lower()
    else:
        raise AssertionError("no exception")
