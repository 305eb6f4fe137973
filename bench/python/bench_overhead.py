#!/usr/bin/env python3
"""Fixed costs of the Python package against NumPy, measured in the same run.

One thread (OMP_NUM_THREADS=1, CpuBackend(num_threads=1)); each case is timed as the
median over rounds of the mean time of a batch of calls. Cases (issue 13 §4):
  py/add_into/2x2_f64    tenferro.add(s, a, b, out=c) in a held session vs numpy.add(a, b, out=c)
  py/einsum/2x2          tenferro.einsum(s, "ij,jk->ik", a, b) vs numpy.einsum(...)
  py/svd/8_f64           tenferro.linalg.svd(s, a) vs numpy.linalg.svd(a)
  py/from_dlpack/torch_N tenferro.from_dlpack(t) for N = 1K and 1M elements (zero copy: flat in N)
  py/asarray/numpy_N     tenferro.asarray(a) for N = 1K and 1M elements
Run: PYTHONPATH=build/release/python /usr/bin/python3 bench/python/bench_overhead.py [out.json]
"""
import json
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import tenferro as tf  # noqa: E402

try:
    import torch  # noqa: E402
    torch.set_num_threads(1)
except ImportError:  # the DLPack cases need PyTorch
    torch = None


def median_seconds(fn, batch=2000, rounds=15):
    """Median over rounds of the per-call mean of `batch` calls."""
    fn()
    per_call = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        per_call.append((time.perf_counter() - t0) / batch)
    return statistics.median(per_call)


def main():
    rows = []

    def record(name, ours, peer=None, peer_name="numpy"):
        row = {"name": name, "tenferro_us": ours * 1e6}
        if peer is not None:
            row[peer_name + "_us"] = peer * 1e6
            row["ratio"] = ours / peer
        rows.append(row)
        ratio = f"  ratio {ours / peer:.2f}x {peer_name}" if peer is not None else ""
        peer_s = f"  {peer_name} {peer * 1e6:8.3f} us" if peer is not None else ""
        print(f"{name:28s} tenferro {ours * 1e6:8.3f} us{peer_s}{ratio}")

    backend = tf.CpuBackend(num_threads=1)
    rng = np.random.default_rng(0)
    with backend.session() as s:
        a, b, c = (rng.standard_normal((2, 2)) for _ in range(3))
        ta, tb, tc = tf.asarray(a), tf.asarray(b), tf.asarray(c)
        record("py/add_into/2x2_f64", median_seconds(lambda: tf.add(s, ta, tb, out=tc)),
               median_seconds(lambda: np.add(a, b, out=c)))
        record("py/einsum/2x2", median_seconds(lambda: tf.einsum(s, "ij,jk->ik", ta, tb)),
               median_seconds(lambda: np.einsum("ij,jk->ik", a, b)))
        m = rng.standard_normal((8, 8))
        tm = tf.asarray(m)
        record("py/svd/8_f64", median_seconds(lambda: tf.linalg.svd(s, tm), batch=500),
               median_seconds(lambda: np.linalg.svd(m), batch=500))
    for n, label in ((1 << 10, "1K"), (1 << 20, "1M")):
        arr = np.zeros(n)
        record(f"py/asarray/numpy_{label}", median_seconds(lambda: tf.asarray(arr)))
        if torch is not None:
            t = torch.zeros(n, dtype=torch.float64)
            record(f"py/from_dlpack/torch_{label}", median_seconds(lambda: tf.from_dlpack(t)),
                   median_seconds(lambda: torch.from_dlpack(t)), peer_name="torch_self")
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump({"cases": rows, "numpy": np.__version__,
                       "torch": torch.__version__ if torch else None}, f, indent=1)


if __name__ == "__main__":
    main()
