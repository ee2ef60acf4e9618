"""Plot bench/rewrites results: kernel time per variant and backend.

usage: python3 plot.py results.csv out.png
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(src, dst):
    rows = [r for r in csv.DictReader(open(src)) if r["ms"]]
    progs = list(dict.fromkeys(r["program"] for r in rows))
    fig, axes = plt.subplots(1, len(progs), figsize=(4 * len(progs), 3.6), squeeze=False)
    for ax, prog in zip(axes[0], progs):
        series = defaultdict(dict)
        variants = []
        for r in rows:
            if r["program"] != prog:
                continue
            key = r["backend"] + ("" if r["backend"] == "hbm" else " " + r["cache"])
            series[key][r["variant"]] = float(r["ms"])
            if r["variant"] not in variants:
                variants.append(r["variant"])
        width = 0.8 / max(1, len(series))
        for i, (key, vals) in enumerate(sorted(series.items())):
            xs = [j + i * width for j, v in enumerate(variants) if v in vals]
            ax.bar(xs, [vals[v] for v in variants if v in vals], width, label=key)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(variants))])
        ax.set_xticklabels(variants, rotation=30)
        ax.set_yscale("log")
        ax.set_title(prog)
        ax.set_ylabel("kernel time (ms, log)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
