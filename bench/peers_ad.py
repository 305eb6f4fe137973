"""PyTorch autograd peer timings for bench/bench_ad's cases (one thread, f64), to run in
the same sitting as bench_ad:
    /usr/bin/python3 bench/peers_ad.py
Each case mirrors the bench_ad case of the same name: same shapes, same loss, gradients
for the same leaves (random inputs; L lower-triangular + N·I, A random + N·I).
Prints one line per case (median of repeats, microseconds)."""
import os, time, statistics
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import torch
torch.set_num_threads(1)
torch.manual_seed(0)
f64 = torch.float64


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


def leaf(t):
    return t.detach().clone().requires_grad_(True)


def rand(*shape):
    return torch.rand(*shape, dtype=f64) * 2 - 1


def report(name, sec):
    print(f"{name:34s} torch {sec * 1e6:12.2f} us", flush=True)


def backward_case(name, loss, leaves, min_time=0.3):
    def step():
        for l in leaves: l.grad = None
        loss().backward()
    report(name, bench(step, min_time=min_time))


x = leaf(rand(4, 4))
def chain16():
    y = x
    for _ in range(8):
        y = y * 1.0001
        y = y + 0.5
    return y.sum()
backward_case("ad/chain16_4x4/fwd_bwd", chain16, [x])

for n in (8, 16):
    L = leaf(torch.tril(rand(n, n)) + n * torch.eye(n, dtype=f64))
    B = leaf(rand(n, n))
    backward_case(f"ad/triangular_solve_vjp/{n}", lambda: torch.linalg.solve_triangular(L, B, upper=False).sum(), [L, B])
    M = leaf(rand(n, n))
    backward_case(f"ad/svd_values_vjp/{n}", lambda: torch.linalg.svdvals(M).sum(), [M])

for n in (2, 4, 8):
    A, B = leaf(rand(n, n)), leaf(rand(n, n))
    backward_case(f"ad/matmul_backward/{n}", lambda: (A @ B).sum(), [A, B])
    A2 = leaf(rand(n, n) + n * torch.eye(n, dtype=f64))
    backward_case(f"ad/solve_backward/{n}", lambda: torch.linalg.solve(A2, B).sum(), [A2, B])

for n in (256, 512):
    M = leaf(rand(n, n))
    backward_case(f"ad/grad_sum_svd_s/{n}", lambda: torch.linalg.svdvals(M).sum(), [M], min_time=2.0)
    with torch.no_grad():
        report(f"svdvals_forward_only/{n}", bench(lambda: torch.linalg.svdvals(M), min_time=1.0))
