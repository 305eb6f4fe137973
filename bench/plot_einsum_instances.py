#!/usr/bin/python3
"""Draws issue 15's two einsum plots and prints the same-path table, from one sitting's
JSON files:

    build/release/bench/bench_einsum_instances --max-exec 8 --json ours.json
    /usr/bin/python3 ../shared/peers/einsum_peers.py peers.json --threads 1 --no-validate
    /usr/bin/python3 bench/plot_einsum_instances.py ours.json peers.json docs/

- `einsum_instances_time.png`: execution time per instance at the suite's path
  (`opt_flops`) for tenferro, torch and NumPy (the peers replay the path pair by pair as
  opt_einsum does), and tenferro's default plan (`automatic`: planning plus execution).
- `einsum_predicted_vs_measured.png`: the cost model's predicted time against the
  measured time of every executed (instance, tree), by optimizer, with the rank
  correlation.

The markdown table (stdout) gives the same numbers and tenferro's time over the better
peer. Needs Debian's python3-matplotlib.
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_einsum_cost_model import spearman  # noqa: E402


def fmt(ms):
    if ms is None:
        return "–"
    return f"{ms:.3f}" if ms < 1 else f"{ms:.2f}" if ms < 100 else f"{ms:.0f}"


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    ours_rows = json.load(open(sys.argv[1], encoding="utf-8"))
    peers = json.load(open(sys.argv[2], encoding="utf-8"))
    outdir = sys.argv[3].rstrip("/")

    ours = {}  # (instance, optimizer) -> row
    for r in ours_rows:
        ours[(r["instance"], r["optimizer"])] = r
    peer = {}  # (instance, backend) -> median ms at the opt_flops path
    for r in peers["results"]:
        if r.get("path") == "opt_flops" and r.get("status") == "ok":
            peer[(r["instance"], r["backend"])] = r["median_ms"]
    names = sorted({r["instance"] for r in ours_rows},
                   key=lambda n: ours[(n, "suite")]["measured_s"] if (n, "suite") in ours else 0)

    def ms_of(name, opt, with_plan=False):
        r = ours.get((name, opt))
        if not r or not r["executed"]:
            return None
        return (r["measured_s"] + (r["plan_s"] if with_plan else 0)) * 1e3

    print("| instance | tenferro, suite path | torch, same path | NumPy, same path | tenferro / best peer "
          "| tenferro default: planning + exec |")
    print("|---|---|---|---|---|---|")
    series = {"tenferro (suite path)": [], "torch (suite path)": [], "NumPy (suite path)": [],
              "tenferro default (planning + exec)": []}
    ratios = []
    for n in names:
        t = ms_of(n, "suite")
        pt, pn = peer.get((n, "torch")), peer.get((n, "numpy"))
        d = ms_of(n, "automatic", True)
        best = min([x for x in (pt, pn) if x is not None], default=None)
        ratio = f"{t / best:.2f}" if t is not None and best else "–"
        if t is not None and best:
            ratios.append(t / best)
        print(f"| {n} | {fmt(t)} | {fmt(pt)} | {fmt(pn)} | {ratio} | {fmt(d)} |")
        for key, v in zip(series, (t, pt, pn, d)):
            series[key].append(v)
    if ratios:
        print(f"\ntenferro / best peer at the same path: median {sorted(ratios)[len(ratios) // 2]:.2f}, "
              f"worst {max(ratios):.2f}, {sum(r <= 0.8 for r in ratios)} of {len(ratios)} at or below 0.8")

    fig, ax = plt.subplots(figsize=(11, 5.5))
    markers = {"tenferro (suite path)": "o", "torch (suite path)": "s", "NumPy (suite path)": "^",
               "tenferro default (planning + exec)": "x"}
    for key, vals in series.items():
        xs = [i for i, v in enumerate(vals) if v is not None]
        ax.scatter(xs, [vals[i] for i in xs], marker=markers[key], label=key, s=36)
    ax.set_yscale("log")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=70, ha="right", fontsize=7)
    ax.set_ylabel("time per contraction (ms, one thread)")
    ax.set_title("Einsum instances: the suite's path in tenferro, torch and NumPy; tenferro's default plan")
    ax.grid(True, which="both", axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(f"{outdir}/einsum_instances_time.png", dpi=110)

    fig, ax = plt.subplots(figsize=(6.5, 6))
    px, mx = [], []
    for opt, marker in (("suite", "o"), ("automatic", "x"), ("greedy", "s"), ("anneal", "^")):
        rows = [r for r in ours_rows if r["optimizer"] == opt and r["executed"] and r["measured_s"] > 0]
        ax.scatter([r["predicted_s"] * 1e3 for r in rows], [r["measured_s"] * 1e3 for r in rows],
                   marker=marker, label=opt, s=30)
        px += [r["predicted_s"] for r in rows]
        mx += [r["measured_s"] for r in rows]
    lo = min(px + mx) * 1e3 / 2
    hi = max(px + mx) * 1e3 * 2
    ax.plot([lo, hi], [lo, hi], color="gray", lw=0.8, label="measured = predicted")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("predicted (ms, CostModel)")
    ax.set_ylabel("measured (ms, one thread)")
    ax.set_title(f"Predicted against measured: {len(px)} trees, Spearman {spearman(px, mx):.3f}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(f"{outdir}/einsum_predicted_vs_measured.png", dpi=110)
    print(f"\nwrote {outdir}/einsum_instances_time.png and {outdir}/einsum_predicted_vs_measured.png; "
          f"rank correlation over {len(px)} trees: {spearman(px, mx):.3f}")


if __name__ == "__main__":
    main()
