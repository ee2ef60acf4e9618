#!/usr/bin/env python3
"""Plot bam_bench JSON: plot_bench.py bench.json out.png"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def series(results, name, backend, key):
    pts = sorted((r["threads"], r[key]) for r in results if r["name"] == name and r["backend"] == backend)
    return [p[0] for p in pts], [p[1] for p in pts]


def main():
    data = json.load(open(sys.argv[1]))
    res, base = data["results"], data["baselines"]
    fig, ax = plt.subplots(1, 3, figsize=(17, 5))

    hits = {r["name"]: r["GBps"] for r in res if r["backend"] == "hbm" and r["name"].startswith("hit_")}
    labels = ["plain HBM read", "D2D memcpy", "pinned H2D", "pread (page cache)"] + [
        "bam " + k[4:] for k in ("hit_linear", "hit_claware", "hit_random")]
    vals = [max(base["hbm_read_u64_GBps"], base["hbm_read_16B_GBps"]), base["d2d_memcpy_GBps"],
            base["h2d_pinned_GBps"], base["pread_GBps"]] + [hits.get(k, 0) for k in ("hit_linear", "hit_claware", "hit_random")]
    colors = ["grey"] * 4 + ["tab:blue"] * 3
    ax[0].barh(labels, vals, color=colors)
    for i, v in enumerate(vals):
        ax[0].text(v, i, f" {v:.0f}", va="center", fontsize=8)
    ax[0].set_xlabel("GB/s")
    ax[0].set_title("hit bandwidth (hbm backend, all cached) vs baselines")

    for be in ("hbm", "host", "emu"):
        x, y = series(res, "miss_claware", be, "GBps")
        if x:
            ax[1].plot(x, y, marker="o", label=be)
    ax[1].axhline(base["h2d_pinned_GBps"], color="grey", ls="--", label="pinned H2D copy")
    ax[1].set_xscale("log")
    ax[1].set_yscale("log")
    ax[1].set_xlabel("threads")
    ax[1].set_ylabel("GB/s")
    ax[1].set_title("miss bandwidth, cache-line-aware linear, cold cache")
    ax[1].legend()

    for be in ("host", "emu"):
        x, y = series(res, "miss_random_4k", be, "lines_per_s")
        if x:
            ax[2].plot(x, [v / 1e6 for v in y], marker="o", label=be)
    ax[2].axhline(1.5, color="grey", ls="--", label="emu bar 1.5M/s")
    ax[2].set_xscale("log")
    ax[2].set_xlabel("threads")
    ax[2].set_ylabel("million 4 KiB line reads / s")
    ax[2].set_title("random 4 KiB misses (one I/O each)")
    ax[2].legend()

    fig.suptitle(f"bam_bench on {data['gpu']} ({data['data_bytes'] / 2**20:.0f} MiB data, 4 KiB lines)")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
