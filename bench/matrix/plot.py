"""Plot bench/matrix results: each program's kernel time relative to the
original with its data in GPU memory, for every memory mode and ported
backend, one panel per size class (fit, nofit).

usage: python3 bench/matrix/plot.py OUTDIR/results.csv PREFIX
       writes PREFIX.png and PREFIX.svg (e.g. PREFIX = docs/benchmarks)

Rows whose checksum differs from the original's are drawn hatched in red and
marked "x"; skipped rows (uvm that would oversubscribe, hbm without room)
are left out and named in the legend's note.
"""
import csv
import sys

# (variant, backend, opt) -> label, colour; the bar order within a program
SERIES = [
    (("original", "gpu", "-"), "original, GPU memory", "#222222"),
    (("original", "uvm", "-"), "original, UVM + hints", "#8c564b"),
    (("original", "zerocopy", "-"), "original, zero-copy", "#7f7f7f"),
    (("port", "hbm", "none"), "port hbm", "#1f77b4"),
    (("port", "hbm", "auto"), "port hbm --opt auto", "#6baed6"),
    (("port", "host", "none"), "port host", "#2ca02c"),
    (("port", "host", "auto"), "port host --opt auto", "#98df8a"),
    (("port", "emu", "none"), "port emu (SSD)", "#d62728"),
    (("port", "emu", "auto"), "port emu --opt auto", "#ff9896"),
]


def load(path):
    rows = list(csv.DictReader(open(path)))
    # --opt auto that chose no rewrite was run once: its rows are the --auto ones
    aliased = {(r["program"], r["size_class"]) for r in rows
               if r["variant"] == "port" and r["backend"] == "*" and r["opt"] == "auto"}
    data = {}
    for r in rows:
        if not r["ms_median"] or r["checksum_ok"] == "skipped":
            continue
        backend = "gpu" if r["backend"] == "gpu-unblocked" else r["backend"]
        key = (r["variant"], backend, r["opt"])
        data[(r["program"], r["size_class"], key)] = r
        if r["variant"] == "port" and r["opt"] == "none" and (r["program"], r["size_class"]) in aliased:
            data[(r["program"], r["size_class"], ("port", backend, "auto"))] = r
    progs = list(dict.fromkeys(r["program"] for r in rows))
    return progs, data


def main(src, prefix):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    progs, data = load(src)
    fig, axes = plt.subplots(2, 1, figsize=(max(8, 1.25 * len(progs) + 2), 8.5), squeeze=False)
    width = 0.85 / len(SERIES)
    for ax, size in zip(axes[:, 0], ("fit", "nofit")):
        for i, (key, label, colour) in enumerate(SERIES):
            xs, ys, bad = [], [], []
            for j, p in enumerate(progs):
                r = data.get((p, size, key))
                if not r or not r["ratio_to_gpu"]:
                    continue
                xs.append(j + (i - len(SERIES) / 2 + 0.5) * width)
                ys.append(float(r["ratio_to_gpu"]))
                bad.append(r["checksum_ok"] != "yes")
            if not xs:
                continue
            bars = ax.bar(xs, ys, width, label=label, color=colour)
            for b, is_bad, x, y in zip(bars, bad, xs, ys):
                if is_bad:
                    b.set_hatch("xx")
                    b.set_edgecolor("red")
                    ax.annotate("x", (x, y), ha="center", va="bottom", color="red", fontsize=9)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.axhline(1.15, color="black", linewidth=0.6, linestyle="--")
        ax.set_yscale("log")
        ax.set_xticks(range(len(progs)))
        ax.set_xticklabels(progs, rotation=20)
        ax.set_xlim(-0.6, len(progs) - 0.4)
        title = {
            "fit": "data fits in GPU memory",
            "nofit": "data does not fit the GPU-memory budget (original in GPU memory measured without the blocker)",
        }[size]
        ax.set_title(title, fontsize=10)
        ax.set_ylabel("kernel time / original in GPU memory (log)")
        ax.grid(axis="y", which="both", alpha=0.25)
    axes[0, 0].legend(fontsize=7, ncol=3, loc="upper left")
    fig.text(0.01, 0.005, "dashed line: 1.15x (issue 18's bar for ported programs when the data fits); "
             "hatched red with x: checksum differs from the original's; missing bars: skipped or not run "
             "(see results.csv)", fontsize=7)
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    fig.savefig(prefix + ".png", dpi=110)
    fig.savefig(prefix + ".svg")
    print("wrote %s.png and %s.svg" % (prefix, prefix))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
