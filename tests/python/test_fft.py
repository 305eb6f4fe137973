"""tenferro.fft vs numpy.fft: n=, axis=, shape= (NumPy's s), axes=, norm=, dtypes, layouts."""
import numpy as np
import pytest

import tenferro as tf
from conftest import LAYOUTS, assert_close, layouts, random_array

F = tf.fft
NORMS = [None, "backward", "ortho", "forward"]


def ref_dtype(x, real_out=False):
    single = np.asarray(x).dtype in (np.float32, np.complex64)
    if real_out:
        return np.float32 if single else np.float64
    return np.complex64 if single else np.complex128


@pytest.mark.parametrize("name", ["fft", "ifft"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("norm", NORMS)
def test_fft_ifft(session, name, dtype, norm):
    x = random_array((3, 8), dtype)
    r = getattr(F, name)(session, x, norm=norm)
    ref = getattr(np.fft, name)(x, norm=norm).astype(ref_dtype(x))
    assert_close(r, ref, scale=20)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft"])
@pytest.mark.parametrize("n", [None, 5, 8, 12, 1])
@pytest.mark.parametrize("axis", [-1, 0, 1, -2])
def test_fft1_n_axis(session, name, n, axis):
    x = random_array((6, 7), np.float64 if name == "rfft" else np.complex128)
    r = getattr(F, name)(session, x, n=n, axis=axis)
    assert_close(r, getattr(np.fft, name)(x, n=n, axis=axis), scale=20)


@pytest.mark.parametrize("n", [None, 6, 7, 10, 3])
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_irfft(session, n, norm, dtype):
    x = random_array((4, 5), dtype)
    r = F.irfft(session, x, n=n, norm=norm)
    assert_close(r, np.fft.irfft(x, n=n, norm=norm).astype(ref_dtype(x, True)), scale=20)
    r0 = F.irfft(session, x, n=n, axis=0, norm=norm)
    assert_close(r0, np.fft.irfft(x, n=n, axis=0, norm=norm).astype(ref_dtype(x, True)), scale=20)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("norm", NORMS)
def test_rfft_round_trip(session, dtype, norm):
    x = random_array((2, 3, 10), dtype)
    r = F.rfft(session, x, norm=norm)
    assert_close(r, np.fft.rfft(x, norm=norm).astype(ref_dtype(x)), scale=20)
    back = F.irfft(session, r, n=10, norm=norm)
    assert_close(back, x, scale=20)


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
@pytest.mark.parametrize(
    "shape,axes",
    [(None, None), (None, (0, 2)), (None, (-1,)), (None, (2, 0)), ((4, 6), None), ((3, 5, 4), None),
     ((6, 4), (1, 2)), ((5,), (0,)), (None, (-2, -1))],
)
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_fftn_family(session, name, shape, axes, norm):
    dtype = np.float64 if name == "rfftn" else np.complex128
    x = random_array((3, 4, 6), dtype)
    r = getattr(F, name)(session, x, shape=shape, axes=axes, norm=norm)
    ref = getattr(np.fft, name)(x, s=shape, axes=axes, norm=norm)
    assert_close(r, ref, scale=50)


@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2"])
@pytest.mark.parametrize("shape,axes", [(None, None), ((4, 8), None), (None, (0, 1)), (None, (-1, 0)),
                                        ((3, 6), (0, 2))])
@pytest.mark.parametrize("norm", [None, "ortho"])
def test_fft2_family(session, name, shape, axes, norm):
    dtype = np.float64 if name == "rfft2" else np.complex128
    x = random_array((2, 5, 6), dtype)
    kwargs = {} if axes is None else {"axes": axes}
    r = getattr(F, name)(session, x, shape=shape, norm=norm, **kwargs)
    ref = getattr(np.fft, name)(x, s=shape, norm=norm, **kwargs)
    assert_close(r, ref, scale=50)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", ["fft", "rfft", "fft2", "fftn"])
def test_fft_layouts(session, layout, name):
    x = layouts((6, 8), np.float64)[layout]
    r = getattr(F, name)(session, x)
    ref = getattr(np.fft, name)(x)
    assert np.asarray(r).flags.c_contiguous
    assert_close(r, ref, scale=20)
    if name == "fft":
        assert_close(F.fft(session, x, axis=0), np.fft.fft(x, axis=0), scale=20)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_ifftn_inverts_fftn(session, dtype):
    x = random_array((3, 4, 5), dtype)
    assert_close(F.ifftn(session, F.fftn(session, x)), x, scale=50)
    assert_close(F.ifft2(session, F.fft2(session, x)), x, scale=50)
    r = F.rfftn(session, x.real.copy())
    assert_close(F.irfftn(session, r, shape=(3, 4, 5)), x.real.copy(), scale=50)


def test_fft_of_rank0_and_python_list(session):
    assert_close(F.fft(session, [1.0, 2.0, 3.0, 4.0]), np.fft.fft([1.0, 2.0, 3.0, 4.0]))
    assert_close(F.rfft(session, np.arange(5.0), n=8), np.fft.rfft(np.arange(5.0), n=8))


def test_fft_errors(session):
    x = np.ones((4, 4), complex)
    with pytest.raises(IndexError):
        F.fft(session, x, axis=2)
    with pytest.raises(IndexError):
        F.fftn(session, x, axes=(0, 3))
    with pytest.raises(ValueError):
        F.fft(session, x, norm="bogus")
    with pytest.raises(ValueError):
        F.fftn(session, x, shape=(4, 4), axes=(0,))
    with pytest.raises(ValueError):
        F.fft(session, x, n=0)
