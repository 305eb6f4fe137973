"""tenferro: a tensor engine for tensor-network and quantum many-body codes.

NumPy semantics over tenferro's C++ core:

    import numpy as np, tenferro as tf
    backend = tf.CpuBackend(num_threads=1)
    with backend.session() as s:            # ops run in an explicit session
        a = tf.asarray(np.random.rand(3, 4))  # shares the array's memory
        u, S, vh = tf.linalg.svd(s, a, full_matrices=False)
        c = tf.einsum(s, "ij,jk->ik", a, a.T)
        d = a + 1.0                           # operators use the current session
        np.asarray(c)                         # shares c's memory

Shapes, broadcasting, axis arguments and defaults follow NumPy. Results are C-ordered,
except the matrix results of tenferro.linalg, which are Fortran-ordered in their last
two axes. See help(tenferro.Tensor), help(tenferro.linalg), help(tenferro.fft) and
docs/python.md.
"""
import sys as _sys

import numpy as _np

from . import _tenferro
from ._tenferro import *  # noqa: F401,F403
from ._tenferro import linalg, fft, ad  # noqa: F401

# `import tenferro.linalg` and `from tenferro.fft import rfft` work as for NumPy.
_sys.modules[__name__ + ".linalg"] = linalg
_sys.modules[__name__ + ".fft"] = fft
_sys.modules[__name__ + ".ad"] = ad

# The dtypes are NumPy's.
bool_ = _np.dtype("bool")
int32 = _np.dtype("int32")
int64 = _np.dtype("int64")
float32 = _np.dtype("float32")
float64 = _np.dtype("float64")
complex64 = _np.dtype("complex64")
complex128 = _np.dtype("complex128")

__version__ = "0.1.0"
