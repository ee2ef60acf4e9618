"""Plot emu storage traces (BAM_EMU_TRACE): commands completed per ms.

usage: python3 plot_trace.py out.png LABEL=trace.csv [LABEL=trace.csv ...]

Each trace is the controller's CSV (ms, fetched, completed, completed_iops
per 100 us bucket). Time starts at each trace's first completion, so runs
of different programs line up; the dashed line is the configured cap if
BAM_EMU_IOPS is set in the environment.
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def per_ms(path):
    """(ms since the first completion, completions in that ms)."""
    buckets = {}
    first = None
    for r in csv.DictReader(open(path)):
        done = int(r["completed"])
        t = float(r["ms"])
        if done and first is None:
            first = t
        if first is None:
            continue
        k = int(t - first)
        buckets[k] = buckets.get(k, 0) + done
    if not buckets:
        return [], []
    xs = list(range(max(buckets) + 1))
    return xs, [buckets.get(x, 0) for x in xs]


def main(dst, specs):
    fig, ax = plt.subplots(figsize=(9, 3.6))
    for spec in specs:
        label, path = spec.split("=", 1)
        xs, ys = per_ms(path)
        ax.plot(xs, [y / 1000 for y in ys], label=label, linewidth=0.9)
    cap = os.environ.get("BAM_EMU_IOPS")
    if cap:
        ax.axhline(float(cap) / 1e6, linestyle="--", color="gray", linewidth=0.8, label="cap")
    ax.set_xlabel("ms since the first completion")
    ax.set_ylabel("M commands / s")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
