"""Shared fixtures and helpers for the tenferro Python tests.

NumPy is the reference throughout: every test compares tenferro's result with NumPy's
(or a NumPy-built reference) at a tolerance set by the dtype.
"""
import numpy as np
import pytest

import tenferro as tf

DTYPES = [np.bool_, np.int32, np.int64, np.float32, np.float64, np.complex64, np.complex128]
DTYPE_IDS = ["bool", "int32", "int64", "float32", "float64", "complex64", "complex128"]
FLOAT_DTYPES = [np.float32, np.float64]
COMPLEX_DTYPES = [np.complex64, np.complex128]
INEXACT_DTYPES = FLOAT_DTYPES + COMPLEX_DTYPES
NUMERIC_DTYPES = [np.int32, np.int64] + INEXACT_DTYPES

LAYOUTS = ["c", "f", "transposed", "neg_rows", "neg_cols", "broadcast", "slice"]


def tol(dtype, scale=1.0):
    """(rtol, atol) for results of dtype, widened by scale for longer computations."""
    dt = np.dtype(dtype)
    if dt.kind in "biu":
        return dict(rtol=0, atol=0)
    if dt in (np.dtype(np.float32), np.dtype(np.complex64)):
        return dict(rtol=2e-5 * scale, atol=2e-6 * scale)
    return dict(rtol=1e-12 * scale, atol=1e-13 * scale)


def assert_close(actual, expected, dtype=None, scale=1.0, check_dtype=True):
    """actual (a tenferro tensor or array) equals expected (NumPy) within dtype's tolerance."""
    got = np.asarray(actual)
    exp = np.asarray(expected)
    if check_dtype:
        assert got.dtype == exp.dtype, (got.dtype, exp.dtype)
    assert got.shape == exp.shape, (got.shape, exp.shape)
    d = dtype if dtype is not None else exp.dtype
    np.testing.assert_allclose(got, exp, **tol(d, scale))


def random_array(shape, dtype, rng=None, low=-2.0, high=2.0):
    """A C-ordered random array of dtype (bools and small integers for exact dtypes)."""
    rng = rng if rng is not None else np.random.default_rng(1234)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.array(rng.integers(0, 2, size=shape), dtype=bool)
    if dt.kind == "i":
        return np.array(rng.integers(-5, 6, size=shape), dtype=dt)
    x = rng.uniform(low, high, size=shape)
    if dt.kind == "c":
        x = x + 1j * rng.uniform(low, high, size=shape)
    return np.array(x, dtype=dt, order="C")


def layouts(shape, dtype, rng=None, low=-2.0, high=2.0):
    """{layout: array of the given 2-D shape and dtype} in several memory layouts.

    c: C order; f: Fortran order; transposed: a transposed view; neg_rows: a[::-1];
    neg_cols: a[:, ::-1]; broadcast: np.broadcast_to of a row (stride 0, read-only);
    slice: a non-contiguous slice of a larger array.
    """
    assert len(shape) == 2
    m, n = shape
    rng = rng if rng is not None else np.random.default_rng(42)
    base = random_array((m, n), dtype, rng, low, high)
    big = random_array((2 * m + 1, 3 * n + 2), dtype, rng, low, high)
    out = {
        "c": base,
        "f": np.asfortranarray(base),
        "transposed": random_array((n, m), dtype, rng, low, high).T,
        "neg_rows": random_array((m, n), dtype, rng, low, high)[::-1],
        "neg_cols": random_array((m, n), dtype, rng, low, high)[:, ::-1],
        "broadcast": np.broadcast_to(random_array((n,), dtype, rng, low, high), (m, n)),
        "slice": big[1::2, 2::3][:m, :n],
    }
    for k, v in out.items():
        assert v.shape == (m, n), k
    assert out["f"].flags.f_contiguous and not out["f"].flags.c_contiguous
    assert out["slice"].flags.c_contiguous is False
    assert out["broadcast"].strides[0] == 0
    return out


@pytest.fixture(scope="module")
def backend():
    return tf.CpuBackend(num_threads=1)


@pytest.fixture
def session(backend):
    with backend.session() as s:
        yield s


@pytest.fixture
def rng():
    return np.random.default_rng(20240601)
