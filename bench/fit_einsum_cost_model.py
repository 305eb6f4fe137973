#!/usr/bin/env python3
"""Fits the einsum time model (CostModel in include/tenferro/einsum_path.hpp) to the
measured rows of bench_einsum_instances --json: time ≈ step_seconds·steps +
Σ madds/eff(h) / gemm_rate + (read_factor·read_bytes + write_factor·write_bytes) /
bytes_rate, minimising the squared relative error, non-negative coefficients, for each
half extent h the bench recorded; prints the best fit and the rank correlation of the
fitted predictions with the measurements. Pure Python (no NumPy on these machines).

    python3 bench/fit_einsum_cost_model.py run.json
"""
import json
import sys

HALF = [0, 2, 4, 8, 16, 32, 64]  # kHalf in bench_einsum_instances.cpp


def solve(a, b):
    """Gaussian elimination with partial pivoting; None when singular."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        if abs(m[p][c]) < 1e-300:
            return None
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                for k in range(c, n + 1):
                    m[r][k] -= f * m[c][k]
    return [m[i][n] / m[i][i] for i in range(n)]


def nnls_relative(rows, targets):
    """min Σ ((x·row - t)/t)^2 over x >= 0 by dropping negative coefficients."""
    k = len(rows[0])
    active = list(range(k))
    while active:
        a = [[sum(r[i] * r[j] / t / t for r, t in zip(rows, targets)) for j in active] for i in active]
        b = [sum(r[i] / t for r, t in zip(rows, targets)) for i in active]
        x = solve(a, b)
        if x is None:
            active.pop()
            continue
        if all(v >= 0 for v in x):
            full = [0.0] * k
            for i, v in zip(active, x):
                full[i] = v
            return full
        active.pop(min(range(len(x)), key=lambda i: x[i]))
    return [0.0] * k


def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2
        i = j + 1
    return r


def spearman(x, y):
    rx, ry = ranks(x), ranks(y)
    n = len(x)
    mx, my = sum(rx) / n, sum(ry) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / (sxx * syy) ** 0.5


def main():
    data = [r for r in json.load(open(sys.argv[1])) if r["executed"] and r["measured_s"] > 0 and r["slices"] == 1]
    t = [r["measured_s"] for r in data]
    best = None
    for hi, h in enumerate(HALF):
        rows = [[r["steps"], r["gemm_terms"][hi], r["read_bytes"], r["write_bytes"]] for r in data]
        x = nnls_relative(rows, t)
        pred = [sum(a * b for a, b in zip(row, x)) for row in rows]
        err = sum(((p - m) / m) ** 2 for p, m in zip(pred, t))
        if best is None or err < best[0]:
            best = (err, h, x, pred)
    err, h, x, pred = best
    step, inv_rate, read, write = x
    print(f"rows {len(data)}, rms relative error {(err / len(data)) ** 0.5:.3f}, Spearman {spearman(pred, t):.3f}")
    bytes_rate = 1 / write if write > 0 else (1 / read if read > 0 else 1e12)
    print("CostModel{")
    print(f"  gemm_rate = {1 / inv_rate if inv_rate > 0 else 1e12:.4g}, gemm_half_extent = {h},")
    print(f"  bytes_rate = {bytes_rate:.4g}, read_factor = {read * bytes_rate:.4g}, write_factor = {write * bytes_rate:.4g},")
    print(f"  step_seconds = {step:.4g}, element_bytes = 8 }}")
    for r, p in sorted(zip(data, pred), key=lambda z: z[0]["measured_s"]):
        print(f"  {r['instance'][:44]:44s} {r['optimizer']:9s} measured {r['measured_s'] * 1e3:10.3f} ms  "
              f"fitted {p * 1e3:10.3f} ms  default model {r['predicted_s'] * 1e3:10.3f} ms")


if __name__ == "__main__":
    main()
