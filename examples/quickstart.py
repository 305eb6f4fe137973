"""The Python quickstart: NumPy in, tenferro ops in a held session, NumPy out.

Run from the repository root after building the release preset:
    PYTHONPATH=build/release/python /usr/bin/python3 examples/quickstart.py
"""
import numpy as np

import tenferro as tf

backend = tf.CpuBackend(num_threads=1)
rng = np.random.default_rng(0)
a = rng.standard_normal((4, 3))
b = rng.standard_normal((3, 5))

with backend.session() as s:
    ta = tf.asarray(a)                        # shares a's memory
    assert ta.data_ptr == a.ctypes.data
    c = tf.einsum(s, "ij,jk->ik", ta, b)      # NumPy arrays are accepted as operands
    u, S, vh = tf.linalg.svd(s, ta, full_matrices=False)
    d = tf.sum(s, c * 2.0, axis=1)            # operators use the current session
    print("einsum matches NumPy:", np.allclose(np.asarray(c), a @ b))
    print("singular values:", np.round(np.asarray(S), 4))
    print("svd reconstructs a:", np.allclose(np.asarray(u) * np.asarray(S) @ np.asarray(vh), a))
    print("row sums of 2ab:", np.round(np.asarray(d), 4))

    # Gradients: the eager AD context records ops on its tensors.
    with tf.ad.Context(s) as ctx:
        x = ctx.leaf(a)
        loss = tf.sum(s, tf.linalg.svdvals(s, x))   # the nuclear norm
        ctx.backward(loss)
        print("d nuclear norm / da = u vh:", np.allclose(np.asarray(x.grad), np.asarray(u) @ np.asarray(vh)))
