"""Peer timings for bench/bench_einsum's cases: torch.einsum and numpy.einsum(optimize=True),
one thread, f64, C-contiguous arrays with the subscripts exactly as the issue names them
(bench_einsum runs their column-major mirrors: the same memory and the same products).
Run in the same sitting as bench_einsum:
    /usr/bin/python3 bench/peers_einsum.py
Prints one line per case and peer (median of repeats, microseconds)."""
import os, time, statistics
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np, torch
torch.set_num_threads(1)


def bench(fn, min_time=0.3, repeat=5):
    fn()
    n = 1
    while True:
        t = time.perf_counter(); [fn() for _ in range(n)]; dt = time.perf_counter() - t
        if dt > min_time / repeat: break
        n *= 2
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(n): fn()
        ts.append((time.perf_counter() - t) / n)
    return statistics.median(ts)


rng = np.random.default_rng(0)
def r(*shape): return rng.uniform(-1, 1, shape)

cases = [
    ("einsum/held/binary_2x2", "ij,jk->ik", [r(2, 2), r(2, 2)]),
    ("einsum/held/matmul_256", "ij,jk->ik", [r(256, 256), r(256, 256)]),
    ("einsum/held/matmul_1024", "ij,jk->ik", [r(1024, 1024), r(1024, 1024)]),
    ("einsum/held/batched_matmul_b32_64", "bij,bjk->bik", [r(32, 64, 64), r(32, 64, 64)]),
    ("einsum/held/batched_matmul_b32_128", "bij,bjk->bik", [r(32, 128, 128), r(32, 128, 128)]),
    ("einsum/held/outer_4096", "i,j->ij", [r(4096), r(4096)]),
    ("einsum/held/batched_outer_compact", "tkj,to->tokj", [r(64, 16, 16), r(64, 64)]),
    ("einsum/held/batched_outer_noncompact", "tjk,to->tokj", [r(64, 16, 16), r(64, 64)]),
    ("einsum/held/hadamard_2048", "ij,ij->ij", [r(2048, 2048), r(2048, 2048)]),
    ("einsum/held/chain3_64", "ij,jk,kl->il", [r(64, 64), r(64, 64), r(64, 64)]),
]

# MPS inner product: 100 sites, bond 64, physical 2; operands interleaved A0 B0 A1 B1 ...
# so that torch's left-to-right order is the efficient zipper (its best case).
L, chi, d = 100, 64, 2
mps_ops, mps_sub = [], []
for k in range(L):
    left, right = (1 if k == 0 else chi), (1 if k == L - 1 else chi)
    for side in range(2):
        mps_ops.append(r(left, d, right))
        mps_sub.append([(0 if side == 0 else 101) + k, 202 + k, (0 if side == 0 else 101) + k + 1])


def run_case(name, peer, fn):
    try:
        sec = bench(fn)
        print(f"{name:42s} {peer:8s} {sec * 1e6:14.3f} us", flush=True)
    except Exception as e:  # report, do not stop the sitting
        print(f"{name:42s} {peer:8s} failed: {e}", flush=True)


for name, sub, ops in cases:
    tops = [torch.from_numpy(o) for o in ops]
    run_case(name, "torch", lambda: torch.einsum(sub, *tops))
    run_case(name, "numpy", lambda: np.einsum(sub, *ops, optimize=True))

# torch.einsum and numpy.einsum accept at most 52 distinct labels per call, so the 301-label
# network cannot be one call there: the peers run the zipper a PyTorch/NumPy user writes,
# one three-operand einsum per site (env_{k+1} = einsum("ab,asc,bsd->cd", env_k, A_k, B_k)).
def zipper(ein, ops, one):
    env = one
    for k in range(L):
        env = ein("ab,asc,bsd->cd", env, ops[2 * k], ops[2 * k + 1])
    return env

t_mps = [torch.from_numpy(o) for o in mps_ops]
run_case("einsum/held/mps_inner_100_chi64", "torch", lambda: zipper(torch.einsum, t_mps, torch.ones(1, 1, dtype=torch.float64)))
run_case("einsum/held/mps_inner_100_chi64", "numpy",
         lambda: zipper(lambda s, *o: np.einsum(s, *o, optimize=True), mps_ops, np.ones((1, 1))))
