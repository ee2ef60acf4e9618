#!/usr/bin/env python3
"""bench/matrix/sweep.py: one corpus program, one build, one input, many
environments. Where the matrix runs every program in a fixed set of rows,
this runs one binary of one program (its original or a port) under a list
of environments the caller gives -- budgets, cache sizes, backends, stall
timeouts -- from a single input generation (forkpoint.h forks one job per
environment), optionally under the matrix's blocker. It is how session 14
bisected cc's odt stall (docs/data/cc-odt-stall-h200-2026-11-28-s14.csv).

  BAMGEN=bin/bamgen python3 bench/matrix/sweep.py OUTDIR cc --variant opt --size nofit \\
      --leave-mib 640 'b0:BAM_BACKEND=emu,BAM_GPU_BUDGET=0' 'b295:BAM_BACKEND=emu,BAM_GPU_BUDGET=295239680'

Each job is ID:NAME=VALUE[,NAME=VALUE]... . Every job also gets
CUDA_MODULE_LOADING=EAGER; a job with BAM_BACKEND=emu gets the matrix's
emulated SSD (10 us, 1 M IOPS, 8 threads) unless it sets those itself. With
--leave-mib N the blocker holds all but N MiB plus one context, as the
matrix's nofit rows do. The binary comes from `matrix.py OUTDIR --programs
PROGRAM --build-only` (skipped with --skip-build). Output: one line per job
(exit status, seconds, the time the matrix would report, the fork point's
budget and any `bam:` or CUDA error message) and OUTDIR/sweep.csv (with the
checksum). Exit 0 when every job ran to exit status 0, else 1.
"""
import argparse
import csv
import os
import re
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import matrix  # noqa: E402  (PROGRAMS, EMU_ENV, the BENCH_JOBS format: defined once)

ROOT = os.path.dirname(os.path.dirname(here))


def parse_job(spec):
    """'ID:K=V,K=V' -> (id, {K: V}); exits with a usage error otherwise."""
    ident, sep, rest = spec.partition(":")
    if not sep or not re.fullmatch(r"[A-Za-z0-9_.-]+", ident):
        sys.exit("sweep: error: job %r: expected ID:NAME=VALUE[,NAME=VALUE]... (ID of letters, digits, _ . -)" % spec)
    env = {}
    for kv in filter(None, rest.split(",")):
        k, eq, v = kv.partition("=")
        if not eq or not re.fullmatch(r"[A-Z_][A-Z0-9_]*", k) or "\t" in v:
            sys.exit("sweep: error: job %r: %r is not NAME=VALUE" % (spec, kv))
        env[k] = v
    return ident, env


def job_env(env):
    full = {"CUDA_MODULE_LOADING": "EAGER"}
    if env.get("BAM_BACKEND") == "emu":
        full.update(matrix.EMU_ENV)
        full["BAM_EMU_DIR"] = "/tmp"
    full.update(env)
    return full


def start_blocker(blocker, leave_mib):
    """Holds all but leave_mib of what a new process sees free (plus one
    context, measured as the matrix does). Returns the process."""
    q = subprocess.run([blocker, "--query"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    m = re.search(r"free_bytes=(\d+) total_bytes=(\d+)", q.stdout)
    if q.returncode != 0 or not m:
        sys.exit("sweep: error: %s --query failed: %s" % (blocker, q.stdout.strip()))
    ctx_mib = (int(m.group(2)) - int(m.group(1))) >> 20
    p = subprocess.Popen([blocker, str(leave_mib + ctx_mib)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    line = p.stdout.readline()
    if "ready" not in line:
        p.kill()
        sys.exit("sweep: error: the blocker did not start: " + line.strip())
    print("sweep: " + line.strip())
    return p


def read(path):
    try:
        return open(path, errors="replace").read()
    except OSError:
        return ""


def messages_of(err_text):
    """The lines of a job's stderr worth a glance besides its time: the fork
    point's budget, CUDA errors, the runtime's and the shim's messages."""
    keep = [l.strip()[:400] for l in err_text.splitlines()
            if l.startswith(("forkpoint:", "bam:", "CUDA error", "memmode:"))]
    return " | ".join(keep[-4:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("program", choices=sorted(matrix.PROGRAMS))
    ap.add_argument("jobs", nargs="+", help="ID:NAME=VALUE[,NAME=VALUE]...")
    ap.add_argument("--variant", choices=["orig", "auto", "opt"], default="opt",
                    help="the original, the --auto port or the --auto --opt auto port (default opt)")
    ap.add_argument("--size", choices=["fit", "nofit", "qfit", "qnofit"], default="nofit")
    ap.add_argument("--leave-mib", type=int, help="run under the blocker, leaving this much GPU memory free")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per job (default 120)")
    ap.add_argument("--skip-build", action="store_true", help="use OUTDIR/bin from an earlier build")
    a = ap.parse_args()
    jobs = [parse_job(s) for s in a.jobs]
    if len({j[0] for j in jobs}) != len(jobs):
        sys.exit("sweep: error: two jobs have the same ID")
    if a.leave_mib is not None and a.leave_mib <= 0:
        sys.exit("sweep: error: --leave-mib must be positive")
    os.makedirs(os.path.join(a.outdir, "logs"), exist_ok=True)
    if not a.skip_build:
        b = subprocess.run([sys.executable, os.path.join(here, "matrix.py"), a.outdir, "--programs", a.program,
                            "--build-only"], cwd=ROOT)
        if b.returncode != 0:
            sys.exit("sweep: error: the build failed (matrix.py --build-only)")
    exe = os.path.join(a.outdir, "bin", "%s.%s" % (a.program, a.variant))
    if not os.access(exe, os.X_OK):
        sys.exit("sweep: error: %s is missing; build without --skip-build" % exe)
    logs = os.path.join(a.outdir, "logs")
    jf, rf = os.path.join(logs, "sweep.jobs"), os.path.join(logs, "sweep.result")
    with open(jf, "w") as f:
        for ident, env in jobs:
            f.write(matrix.job_line("sweep." + ident, os.path.join(logs, ident + ".out"),
                                    os.path.join(logs, ident + ".err"), a.timeout, job_env(env)) + "\n")
    if os.path.exists(rf):
        os.remove(rf)
    args = matrix.PROGRAMS[a.program][a.size].split() + ["--no-verify"]
    blocker = start_blocker(os.path.join(a.outdir, "bin", "blocker"), a.leave_mib) if a.leave_mib else None
    t0 = time.time()
    try:
        gen_timeout = a.timeout * len(jobs) + 600
        with open(os.path.join(logs, "sweep.gen.log"), "w") as glog:
            r = subprocess.run([exe] + args, cwd=ROOT, stdout=glog, stderr=subprocess.STDOUT, timeout=gen_timeout,
                               env=dict(os.environ, BENCH_JOBS=jf, BENCH_JOBS_RESULT=rf))
        if r.returncode != 0:
            print("sweep: the program stopped before its jobs (exit %d): see %s" % (r.returncode, glog.name))
    finally:
        if blocker is not None:
            blocker.stdin.close()
            blocker.wait(timeout=60)
    status = matrix.read_job_results(rf)
    rows, all_ok = [], True
    for ident, env in jobs:
        st, wall = status.get("sweep." + ident, (None, None))
        all_ok = all_ok and st == 0
        err = read(os.path.join(logs, ident + ".err"))
        ms, _ = matrix.parse_ms(a.program, err)  # the time the matrix reports for this program
        check = matrix.checksum_of(read(os.path.join(logs, ident + ".out")))
        rows.append(dict(id=ident, status="" if st is None else st, wall_s="" if wall is None else wall,
                         ms="" if ms is None else "%.3f" % ms, checksum=check or "",
                         env=",".join("%s=%s" % x for x in sorted(env.items())), messages=messages_of(err)))
        print("%-12s %-8s %8s %12s  %s" % (ident, "not run" if st is None else "exit %d" % st,
                                           "" if wall is None else "%.1f s" % wall,
                                           "" if ms is None else "%.3f ms" % ms, rows[-1]["messages"]))
    with open(os.path.join(a.outdir, "sweep.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["id", "status", "wall_s", "ms", "checksum", "env", "messages"])
        w.writeheader()
        w.writerows(rows)
    print("sweep: %d jobs in %.0f s; %s" % (len(jobs), time.time() - t0, os.path.join(a.outdir, "sweep.csv")))
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
