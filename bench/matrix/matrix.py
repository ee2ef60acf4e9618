#!/usr/bin/env python3
"""The benchmark users would run (issue 18, item 6): every corpus program as
it is and ported, at a size that fits in GPU memory and one that does not fit
a GPU-memory budget, in one run on one GPU.

    bench/matrix/run.sh OUTDIR [--quick] [--dry-run] [--programs a,b] [--reps N]

Rows, per program and size class (fit / nofit):

  original  gpu       the program as written, data in GPU memory (memmode.h)
  original  uvm       cudaMallocManaged + read-mostly/prefetch hints; only when
                      the data fits in free GPU memory, never oversubscribed
  original  zerocopy  the data the host fills in cudaHostAlloc mapped memory
  port      hbm/host/emu   `bamgen port --auto` (opt none) and
                      `--auto --opt auto` (opt auto); emu as an SSD
                      (10 us, 1 M IOPS); hbm only where the data fits

nofit runs (except the reference) run under bench/matrix/blocker, which holds
all but --budget-mib (640) of GPU memory as a new process sees it; each
blocked ported job measures what is free once its context exists and sets
BAM_GPU_BUDGET = free - cache - reserve (forkpoint.h). The reference of the
nofit class is the original in GPU memory *without* the blocker (the GPU has
room), marked gpu-unblocked.

Every row's checksum is compared with the original-in-GPU-memory run of the
same program and size. Output: OUTDIR/results.csv, jobs.csv, meta.json,
summary.txt, logs under OUTDIR/logs; --export DIR: results.csv, summary.txt
and matrix.tgz (all of it but the binaries) in DIR. Exit status 1 when any
row's checksum differs, a run failed or was not run (--deadline-s). Only the Python standard library is used.
"""
import argparse
import concurrent.futures as cf
import csv
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.join(ROOT, "bench", "matrix")

# Per program: arguments per size class (full, then --quick), the regular
# expressions whose numbers (ms) are summed as the program's kernel time,
# what that time covers (for docs/benchmarks.md), and a relative checksum
# tolerance (pagerank: FMA contraction differs between builds, see
# bench/difftest/configs/pagerank.tol).
PROGRAMS = {
    "bfs_thread": dict(
        fit="1048573 1 16", nofit="13631477 1 16",
        qfit="262139 1 16", qnofit="9437167 1 16",
        time=[r"bfs: \d+ levels, ([0-9.]+) ms"],
        timed="the level loop (chrono, every launch and flag copy)"),
    "bfs_warp": dict(
        fit="4194301 42 -d 16", nofit="13107197 42 -d 16",
        qfit="1048573 42 -d 16", qnofit="8388593 42 -d 16",
        time=[r"levels \d+ time ([0-9.]+) ms"],
        timed="the level loop (cudaEvents)"),
    "bfs_chunk": dict(
        fit="4194301 2024 16", nofit="13107197 2024 16",
        qfit="1048573 2024 16", qnofit="8388593 2024 16",
        time=[r"levels=\d+ time=([0-9.]+) ms"],
        timed="the level loop (chrono)"),
    "cc": dict(
        fit="4194301 99 8", nofit="23068667 99 8",
        qfit="1048573 99 8", qnofit="15099493 99 8",
        time=[r"sweeps=([0-9.]+) ms"],
        gpu_seqs="2",  # labels: cudaMallocManaged like the graph, but filled by cc_init on the GPU
        timed="the propagation launches (chrono, each followed by a synchronisation; the port's per-sweep array_from_host/copy_to_host of labels included)"),
    "sssp": dict(
        fit="1048573 5 8", nofit="12582917 5 8",
        qfit="262139 5 8", qnofit="8388593 5 8",
        time=[r"rounds=\d+ time=([0-9.]+) ms"],
        timed="the relaxation rounds (chrono)"),
    "pagerank": dict(
        fit="1048573 3 16 10", nofit="11534329 3 16 3",
        qfit="262139 3 16 5", qnofit="7340009 3 16 3",
        time=[r"^time=([0-9.]+) ms"],
        timed="the iterations (chrono; the port's array_from_host of the in-edge list included)",
        tol=1e-6),
    "spmv": dict(
        fit="1048573 11", nofit="7340033 11",
        qfit="262139 11", qnofit="4718579 11",
        time=[r"scalar ([0-9.]+) ms", r"vector<32> ([0-9.]+) ms", r"vector<4> ([0-9.]+) ms"],
        timed="the three SpMV kernels, summed (cudaEvents)"),
    "query": dict(
        fit="67108879 17", nofit="75497467 17",
        qfit="16777259 17", qnofit="50331653 17",
        time=[r"q1 ([0-9.]+) ms", r"q2 ([0-9.]+) ms"],
        timed="Q1 + Q2 (chrono)"),
    "embedding": dict(
        fit="1000003 1048576 128", nofit="2000003 262144 128",
        qfit="250003 262144 128", qnofit="1350001 131072 128",
        time=[r"dim=\d+\s+([0-9.]+) ms"],
        timed="gather_rows + gather_sum (chrono)"),
    "vectoradd": dict(
        fit="67108864", nofit="89478485",
        qfit="16777216", qnofit="60397977",
        time=[r"vector_add ([0-9.]+) ms", r"gridstride ([0-9.]+) ms"],
        timed="vector_add + vector_add_gridstride (chrono each)"),
    "mesh_flux": dict(
        fit="4194301 4 5", nofit="16777213 4 5",
        qfit="1048573 4 5", qnofit="12582917 4 5",
        time=[r"^time ([0-9.]+) ms"],
        # nofit: the arrays the GPU fills (values, old_values, fluxes,
        # step_factors) are most of the data, so zero-copy puts every data
        # allocation in host memory, as a user whose data does not fit would.
        host_seqs_nofit="0,1,2,3,4,5",
        timed="the time steps (chrono: the copy, step factors and RK flux/advance launches)"),
    "reduction": dict(
        fit="16777216", nofit="67108864",
        qfit="4194304", qnofit="16777216",
        time=[r"time=([0-9.]+) ms"],
        timed="both reductions (chrono)", optional=True),
}
DEFAULT_PROGRAMS = [p for p, c in PROGRAMS.items() if not c.get("optional")]

EMU_ENV = {"BAM_EMU_LATENCY_US": "10", "BAM_EMU_IOPS": "1000000", "BAM_EMU_THREADS": "8"}
DECL = "bam::runtime& bam_rt = bam::default_runtime();"

# ---------------------------------------------------------------- helpers

_print_lock = threading.Lock()
_console = []  # every line said, for OUTDIR/summary.txt


def say(*a):
    with _print_lock:
        line = " ".join(str(x) for x in a)
        _console.append(line)
        print(line, flush=True)


def parse_bytes(v):
    """'64M' / '1G' / '4096' -> bytes."""
    m = re.fullmatch(r"\s*(\d+)\s*([KMG]?)i?B?\s*", str(v), re.I)
    if not m:
        sys.exit("matrix: %r: expected a size like 64M" % v)
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2).upper()]


def mib(b):
    return "%.0f MiB" % (b / 2**20)


def strip_code(text):
    """text with comments and the contents of string/char literals replaced
    by spaces (same length, newlines kept), for scanning C++ structure."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if text[k] != "\n":
                    out[k] = " "
            i = j
        elif c in "\"'":
            # a digit separator (1'000) is not a literal
            if c == "'" and i > 0 and text[i - 1].isalnum() and text[i - 1] not in "uUL":
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                if text[k] != "\n":
                    out[k] = " "
            i = j + 1
        else:
            i += 1
    return "".join(out)


CUDA_USE = re.compile(r"\bcuda[A-Z]\w*\s*\(|\bbam_rt\b|<<<|\bbam::(?!stats_at_exit)\w")


def add_fork_point(text):
    """Moves the port's runtime declaration from the top of main to the
    top-level statement of main that first uses CUDA or the runtime, with a
    call of bench_fork::point() before it, on the same line (line numbers
    stay). Returns (new_text, None) or (None, why)."""
    if text.count(DECL) != 1:
        return None, "the port has %d runtime declarations (want 1)" % text.count(DECL)
    i = text.index(DECL)
    code = strip_code(text)
    depth = 0
    for ch in code[:i]:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
    d0 = depth
    start = i + len(DECL)
    m = CUDA_USE.search(code, start)
    if not m:
        return None, "no use of CUDA or the runtime after the declaration"
    d, paren, last = d0, 0, start
    k = start
    while k < m.start():
        ch = code[k]
        if ch == "(":
            paren += 1
        elif ch == ")":
            paren -= 1
        elif ch == "{":
            d += 1
        elif ch == "}":
            d -= 1
            if d < d0:
                return None, "main ends before the first use"
            if d == d0 and paren == 0:
                rest = code[k + 1:k + 40].lstrip()
                if not (rest.startswith(";") or rest.startswith(",") or rest.startswith(")")
                        or re.match(r"(while|else)\b", rest)):
                    last = k + 1
        elif ch == ";" and d == d0 and paren == 0:
            last = k + 1
        k += 1
    insert = " bench_fork::point(); " + DECL + " "
    new = text[:last] + insert + text[last:]
    new = new[:i] + new[i + len(DECL):]
    return new, None


def parse_ms(prog, err_text):
    """Sum of the program's kernel times from its stderr, or None."""
    total, parts = 0.0, []
    for pat in PROGRAMS[prog]["time"]:
        m = re.search(pat, err_text, re.M)
        if not m:
            return None, ""
        v = float(m.group(1))
        total += v
        parts.append("%.3f" % v)
    return total, "+".join(parts)


def job_line(ident, out, err, timeout_s, env):
    """One job of a BENCH_JOBS file (forkpoint.h): ID, stdout, stderr,
    timeout, then NAME=VALUE fields, tab-separated."""
    return "\t".join([ident, out, err, str(timeout_s)] + ["%s=%s" % kv for kv in sorted(env.items())])


def read_job_results(path):
    """BENCH_JOBS_RESULT (forkpoint.h): {id: (exit status, wall seconds)};
    empty when the file is missing (the parent never reached its jobs)."""
    results = {}
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            if len(f) == 3:
                results[f[0]] = (int(f[1]), float(f[2]))
    return results


def checksum_of(out_text):
    got = None
    for line in out_text.splitlines():
        if line.startswith("checksum:"):
            got = line.split(":", 1)[1].strip()
    return got


def same_checksum(want, got, tol):
    if want is None or got is None:
        return False
    if want == got:
        return True
    if not tol:
        return False
    try:
        a, b = float(want), float(got)
    except ValueError:
        return False
    return abs(a - b) <= tol * abs(a)


# ---------------------------------------------------------------- the run


class Matrix:
    def __init__(self, a):
        self.a = a
        self.out = os.path.abspath(a.outdir)
        self.logs = os.path.join(self.out, "logs")
        self.bin = os.path.join(self.out, "bin")
        self.src = os.path.join(self.out, "src")
        self.dry = a.dry_run
        self.quick = a.quick
        self.reps = a.reps if a.reps else (1 if a.quick else 2)
        # nofit rows: the ported runs read ~1 GB from host memory or the
        # emulated SSD, seconds each; one run keeps the matrix in its time
        self.nofit_reps = a.nofit_reps if a.nofit_reps else (a.reps if a.reps else 1)
        # what a new process sees free under the blocker, its own context made
        self.budget = (a.budget_mib if a.budget_mib else (384 if a.quick else 640)) << 20
        self.cache = a.cache if a.cache else ("16M" if a.quick else "64M")
        self.cache_bytes = parse_bytes(self.cache)
        self.reserve = (a.reserve_mib if a.reserve_mib is not None else 192) << 20
        self.deadline = a.deadline_s
        self.timeout = a.timeout if a.timeout else (60 if a.quick else 120)
        self.programs = a.programs.split(",") if a.programs else list(DEFAULT_PROGRAMS)
        self.port_backends = [b for b in a.port_backends.split(",") if b]
        for b in self.port_backends:
            if b not in ("hbm", "host", "emu"):
                sys.exit("matrix: --port-backends: unknown backend %s (known: hbm, host, emu)" % b)
        for p in self.programs:
            if p not in PROGRAMS:
                sys.exit("matrix: unknown program %s (known: %s)" % (p, ", ".join(PROGRAMS)))
        self.nvcc = a.nvcc or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        self.bamgen = a.bamgen or os.environ.get("BAMGEN", "")
        self.arch = a.arch
        self.jobs = a.jobs or os.cpu_count() or 4
        self.gen_parallel = a.gen_parallel
        self.lock = os.path.join(self.out, "gpu.lock")
        self.gate = os.path.join(self.out, "gpu.lock.B")  # phase B's GPU lock, held by the runner until then
        self.gate_opened = None
        self.phase_ends = {}
        self.procs = set()  # program processes running now
        self.status = {}        # (prog, binary) -> "ok" or why not
        self.identical = {}     # prog -> True when --opt auto made the same source as --auto
        self.jobs_run = []      # job records
        self.meta = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        self.t0 = time.time()

    # --- shell ---------------------------------------------------------
    def sh(self, cmd, log=None, timeout=None, env=None):
        """Runs cmd (a list) from ROOT; returns (rc, output). In a dry run it
        prints the command and returns (0, "")."""
        line = " ".join(shlex.quote(c) for c in cmd)
        if self.dry:
            say("  $ " + line)
            return 0, ""
        try:
            p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=timeout, env=env, text=True, errors="replace")
            rc, text = p.returncode, p.stdout
        except subprocess.TimeoutExpired as e:
            rc, text = 124, (e.stdout or "") if isinstance(e.stdout, str) else ""
        except OSError as e:
            rc, text = 127, str(e)
        if log:
            with open(log, "w") as f:
                f.write("$ " + line + "\n" + text)
        return rc, text

    # --- build -----------------------------------------------------------
    def build(self):
        t = time.time()
        say("matrix: build (arch %s, %d jobs)" % (self.arch, self.jobs))
        for d in (self.bin, self.src, self.logs):
            os.makedirs(d, exist_ok=True)
        if not self.dry and not (self.bamgen and os.access(self.bamgen, os.X_OK)):
            sys.exit("matrix: give the bamgen binary with --bamgen PATH or BAMGEN=PATH (no Go on the GPU machine)")
        rc, text = self.sh(["make", "-C", "runtime/cuda", "ARCH=" + self.arch, "-j%d" % self.jobs, "lib"],
                           log=os.path.join(self.logs, "build-runtime.log"))
        if rc != 0:
            sys.exit("matrix: make -C runtime/cuda lib failed; see logs/build-runtime.log\n" + text[-2000:])
        self.bamflags = ["-std=c++17", "-Iruntime/cuda/include", "-Lruntime/cuda/build", "-lbam", "-lpthread"]
        if not self.dry:  # stdout only: a warning on stderr is not a flag
            p = subprocess.run([self.bamgen, "flags", "--prefix", "runtime/cuda"], cwd=ROOT, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            if p.returncode != 0 or not p.stdout.split():
                sys.exit("matrix: bamgen flags failed: " + p.stderr)
            self.bamflags = p.stdout.split()
        else:
            self.sh([self.bamgen or "BAMGEN", "flags", "--prefix", "runtime/cuda"])
        tasks = [("blocker", None)]
        for p in self.programs:
            tasks += [(p, "orig"), (p, "auto"), (p, "opt")]
        with cf.ThreadPoolExecutor(max_workers=self.jobs) as ex:
            list(ex.map(lambda t: self.build_one(*t), tasks))
        # --opt auto that chose nothing gives the --auto source: run it once
        for p in self.programs:
            a, o = os.path.join(self.src, p + ".auto.cu"), os.path.join(self.src, p + ".opt.cu")
            if not self.dry and os.path.exists(a) and os.path.exists(o):
                self.identical[p] = open(a).read() == open(o).read()
        self.meta["build_s"] = round(time.time() - t, 1)
        bad = ["%s/%s: %s" % (k[0], k[1], v) for k, v in sorted(self.status.items()) if v != "ok"]
        say("matrix: build done in %.0f s%s" % (time.time() - t, "; " + "; ".join(bad) if bad else ""))

    def build_one(self, prog, kind):
        nv = [self.nvcc, "-std=c++17", "-O3", "-arch=" + self.arch]
        if prog == "blocker":
            rc, _ = self.sh(nv + ["bench/matrix/blocker.cu", "-o", os.path.join(self.bin, "blocker")],
                            log=os.path.join(self.logs, "build-blocker.log"))
            if rc != 0:
                sys.exit("matrix: building the blocker failed; see logs/build-blocker.log")
            return
        src = "testdata/kernels/%s/%s.cu" % (prog, prog)
        inc = ["-I", "testdata/kernels/" + prog]
        exe = os.path.join(self.bin, "%s.%s" % (prog, kind))
        log = os.path.join(self.logs, "build-%s.%s.log" % (prog, kind))
        if kind == "orig":
            rc, _ = self.sh(nv + ["-include", "bench/matrix/memmode.h"] + inc + [src, "-o", exe], log=log)
            self.status[(prog, kind)] = "ok" if rc == 0 else "build-failed"
            return
        port_src = os.path.join(self.src, "%s.%s.cu" % (prog, kind))
        extra = ["--opt", "auto"] if kind == "opt" else []
        rc, text = self.sh([self.bamgen or "BAMGEN", "port", "-q", "--auto"] + extra + ["-o", port_src, src],
                           log=os.path.join(self.logs, "port-%s.%s.log" % (prog, kind)))
        if rc != 0:
            self.status[(prog, kind)] = "port-failed"
            return
        fork = True
        if not self.dry:
            text = open(port_src).read()
            new, why = add_fork_point(text)
            if new is None:
                say("matrix: %s %s: no fork point (%s): every job generates its input" % (prog, kind, why))
                fork = False
            else:
                with open(port_src, "w") as f:
                    f.write(new)
        self.status[(prog, kind + ".fork")] = "ok" if fork else "no"
        cmd = [self.nvcc, "-O3", "-arch=" + self.arch] + self.bamflags[:2] + [
            "-include", "bench/matrix/forkpoint.h"] + inc + [port_src] + self.bamflags[2:] + ["-o", exe]
        rc, _ = self.sh(cmd, log=log)
        self.status[(prog, kind)] = "ok" if rc == 0 else "build-failed"

    # --- GPU memory ------------------------------------------------------
    def query_free(self):
        if self.dry:
            self.sh([os.path.join(self.bin, "blocker"), "--query"])
            return 80 << 30, 80 << 30
        rc, text = self.sh([os.path.join(self.bin, "blocker"), "--query"], timeout=60)
        m = re.search(r"free_bytes=(\d+) total_bytes=(\d+)", text)
        if rc != 0 or not m:
            sys.exit("matrix: blocker --query failed: " + text)
        return int(m.group(1)), int(m.group(2))

    def start_blocker(self):
        """Holds GPU memory so that a new process sees about self.budget free.
        Returns (process, free bytes a new process sees)."""
        free0, total = self.free0, self.total
        ctx = total - free0  # one process's context (and anything else on the GPU)
        leave = self.budget + ctx
        for attempt in range(3):
            cmd = [os.path.join(self.bin, "blocker"), str(leave >> 20)]
            if self.dry:
                say("  $ %s &   # holds all but %s; a new process then sees ~%s" % (
                    " ".join(cmd), mib(leave), mib(self.budget)))
                return None, self.budget
            p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True)
            line = p.stdout.readline()
            if "ready" not in line:
                p.kill()
                sys.exit("matrix: blocker did not start: " + line + p.stdout.read())
            seen, _ = self.query_free()
            say("matrix: blocker %s; a new process sees %s free (want %s)" % (line.strip(), mib(seen),
                                                                             mib(self.budget)))
            if abs(seen - self.budget) <= (32 << 20) or attempt == 2:
                return p, seen
            self.stop_blocker(p)
            leave += self.budget - seen
        return None, self.budget

    def check_contexts(self, blk):
        """Before the blocked phase: the processes holding GPU memory (a CUDA
        context) besides the blocker, as nvidia-smi lists them. No process of
        this runner holds one then (input generation happens before the fork
        point, the phase A blocker is gone, each job's child exits before the
        next starts); anything else listed here eats the budget."""
        if self.dry:
            return
        try:
            p = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=20)
        except Exception as e:
            say("matrix: nvidia-smi --query-compute-apps: %s" % e)
            return
        apps = [l.strip() for l in p.stdout.splitlines() if l.strip()] if p.returncode == 0 else []
        others = [a for a in apps if blk is None or a.split(",")[0].strip() != str(blk.pid)]
        self.meta["compute_apps_phase_B"] = apps
        say("matrix: processes on the GPU before phase B: %s" % ("; ".join(apps) or "none listed"))
        if others and blk is not None and len(apps) > 1:
            say("matrix: *** other processes than the blocker hold GPU memory: %s ***" % "; ".join(others))

    def stop_blocker(self, p):
        if p is None:
            return
        try:
            p.stdin.close()
            p.wait(timeout=30)
        except Exception:
            p.kill()
            p.wait()

    # --- jobs ------------------------------------------------------------
    def job(self, prog, size, variant, backend, opt, binary, env, rep, note=""):
        jid = "%s.%s.%s.%s.%s.%d" % (prog, size, variant, backend, opt, rep)
        base = os.path.join(self.logs, jid)
        rec = dict(id=jid, prog=prog, size=size, variant=variant, backend=backend, opt=opt, binary=binary,
                   env=env, rep=rep, out=base + ".out", err=base + ".err", note=note, rc=None, wall=None)
        self.jobs_run.append(rec)
        return rec

    def env_for(self, prog, backend, size, blocked, alloc_log=None):
        env = {"CUDA_MODULE_LOADING": "EAGER"}
        if backend in ("gpu", "uvm", "zerocopy"):
            env["BENCH_MEM"] = backend
            if PROGRAMS[prog].get("gpu_seqs"):
                env["BENCH_GPU_SEQS"] = PROGRAMS[prog]["gpu_seqs"]
            if alloc_log and backend == "gpu":
                env["BENCH_ALLOC_LOG"] = alloc_log
            elif alloc_log:
                env["BENCH_HOST_SEQS"] = PROGRAMS[prog].get("host_seqs_" + size) or "@" + alloc_log
            return env
        env.update({"BAM_BACKEND": backend, "BAM_CACHE_BYTES": self.cache, "BAM_STATS": "0"})
        if backend == "emu":
            env.update(EMU_ENV)
            env["BAM_EMU_DIR"] = self.a.emu_dir
        if blocked:
            # the job measures what is free once its context exists and sets
            # BAM_GPU_BUDGET = free - cache - reserve (forkpoint.h)
            env["BENCH_GPU_BUDGET_AUTO"] = "%d %d" % (self.cache_bytes, self.reserve)
        return env

    def args_of(self, prog, size):
        c = PROGRAMS[prog]
        key = ("q" if self.quick else "") + size
        return c[key].split() + ["--no-verify"]

    def run_parent(self, prog, size, binary, jobs, phase="A"):
        """One process: generates the input, then forks each job (forkpoint.h);
        or one process per job where the binary has no fork point. Phase B
        processes may start (and generate their input) while phase A runs:
        their GPU lock is the gate, which the runner holds until the blocker
        is in place."""
        exe = os.path.join(self.bin, "%s.%s" % (prog, binary))
        args = self.args_of(prog, size)
        fork = binary == "orig" or self.status.get((prog, binary + ".fork")) == "ok"
        if self.a.no_fork:
            fork = False
        lock = self.gate if phase == "B" else self.lock
        phase_end = self.phase_ends.get(phase)
        if phase_end and not self.dry:
            left = phase_end - time.time()
            if left < 5:
                for j in jobs:
                    j["rc"] = 126
                    j["note"] = (j["note"] + "; " if j["note"] else "") + "not run: --deadline-s reached"
                say("matrix: %-34s not run (--deadline-s)" % ("%s.%s.%s" % (prog, size, binary)))
                return
        if not fork:
            return self.run_unforked(prog, size, binary, exe, args, jobs, lock)
        for g in [jobs]:
            # phase in the name: a nofit class has a group in each phase, and a
            # phase B process may start (and truncate its files) while
            # phase A's group of the same program still runs
            name = "%s.%s.%s.%s%s" % (prog, size, binary, g[0]["rep"] if len(g) == 1 else "all",
                                      ".B" if phase == "B" else "")
            jf = os.path.join(self.logs, name + ".jobs")
            rf = os.path.join(self.logs, name + ".result")
            lines = [job_line(j["id"], j["out"], j["err"], self.timeout, j["env"]) for j in g]
            env = dict(os.environ, BENCH_JOBS=jf, BENCH_JOBS_RESULT=rf, BENCH_GPU_LOCK=lock)
            if self.dry:
                say("  # %s: %d job(s) from one input (%s)" % (name, len(g), "fork" if fork else "own process"))
                for j in g:
                    say("  #   %-40s %s" % (j["id"], " ".join("%s=%s" % kv for kv in sorted(j["env"].items()))))
                self.sh([exe] + args)
                continue
            with open(jf, "w") as f:
                f.write("\n".join(lines) + "\n")
            if os.path.exists(rf):
                os.remove(rf)
            gen_log = os.path.join(self.logs, name + ".gen.log")
            total_timeout = self.timeout * len(g) + self.a.gen_timeout
            why = "input generation: see %s" % os.path.basename(gen_log)
            with open(gen_log, "w") as glog:
                # its own process group: a timeout kills the parent and the
                # job it forked, so nothing is left on the GPU
                p = subprocess.Popen([exe] + args, cwd=ROOT, env=env, stdout=glog, stderr=subprocess.STDOUT,
                                     start_new_session=True)
                self.procs.add(p)
                t_start = time.time()
                prc = None
                while prc is None:
                    # the time limit counts from the gate's opening in phase B
                    opened = self.gate_opened if phase == "B" else t_start
                    limit = (opened + total_timeout) if opened else None
                    if phase_end:
                        limit = min(limit, phase_end) if limit else phase_end
                    step = 1.0 if limit is None else max(0.0, min(1.0, limit - time.time()))
                    try:
                        prc = p.wait(timeout=step)
                    except subprocess.TimeoutExpired:
                        if limit is not None and time.time() >= limit:
                            try:
                                os.killpg(p.pid, 9)
                            except OSError:
                                pass
                            p.wait()
                            prc = 124
                            if phase_end and time.time() >= phase_end - 1:
                                why = "killed at --deadline-s"
                self.procs.discard(p)
            results = read_job_results(rf)
            for j in g:
                if j["id"] in results:
                    j["rc"], j["wall"] = results[j["id"]]
                else:
                    j["rc"] = prc if prc != 0 else 125  # the parent never ran it
                    j["note"] = (j["note"] + "; " if j["note"] else "") + "not run (%s)" % why
            say("matrix: %-34s %s" % (name, " ".join("%s=%s" % (j["backend"], j["rc"]) for j in g)))

    def run_unforked(self, prog, size, binary, exe, args, jobs, lock):
        """One process per job, its environment set here, one at a time on
        the GPU (the same lock file as the fork point's)."""
        import fcntl
        for j in jobs:
            if self.dry:
                say("  $ %s %s" % (" ".join("%s=%s" % kv for kv in sorted(j["env"].items())),
                                   " ".join(shlex.quote(c) for c in [exe] + args)))
                continue
            env = dict(os.environ)
            env.pop("BENCH_JOBS", None)
            env.update(j["env"])
            with open(lock, "a+") as lk, open(j["out"], "w") as o, open(j["err"], "w") as e:
                fcntl.flock(lk, fcntl.LOCK_EX)
                t = time.time()
                try:
                    j["rc"] = subprocess.run([exe] + args, cwd=ROOT, env=env, stdout=o, stderr=e,
                                             timeout=self.timeout + self.a.gen_timeout).returncode
                except subprocess.TimeoutExpired:
                    j["rc"] = 124
                j["wall"] = round(time.time() - t, 3)
        say("matrix: %-34s %s (one process per job)" % ("%s.%s.%s" % (prog, size, binary),
                                                        " ".join("%s=%s" % (j["backend"], j["rc"]) for j in jobs)))

    def phases(self, A, B):
        """Phase A (no blocker), then phase B (under the blocker). All
        processes share one pool of --gen-parallel: A's first, then B's, so
        that B's inputs are generated while A's jobs run; B's processes wait
        at the gate (their GPU lock, held here) until the blocker is in place.
        Returns nothing; self.blocked_free is what a new process saw free."""
        import fcntl
        t = time.time()
        self.phase_ends = {}
        if self.deadline:
            left = self.deadline - (t - self.t0)
            # phase A (no blocker) may use 55% of what is left, so that the
            # blocked runs of phase B always get their turn
            self.phase_ends = {"A": t + 0.55 * left, "B": t + left}
        say("matrix: phase A: %d processes, %d jobs; phase B: %d processes, %d jobs" % (
            len(A), sum(len(p[3]) for p in A), len(B), sum(len(p[3]) for p in B)))
        if self.dry:
            for p in A:
                self.run_parent(*p, phase="A")
            blk, self.blocked_free = self.start_blocker()
            for p in B:
                self.run_parent(*p, phase="B")
            return
        gate = open(self.gate, "a+")
        fcntl.flock(gate, fcntl.LOCK_EX)
        self.gate_opened = None
        # A process that holds a context (and no memory) through phase A, so
        # that the driver stays initialised between the jobs' processes
        # (without persistence mode each first context would pay for it).
        keep = subprocess.Popen([os.path.join(self.bin, "blocker"), str(1 << 30)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        keep.stdout.readline()
        blk = None
        # the longest input generations first, so that short ones fill in
        order = lambda ps: sorted(ps, key=lambda p: -self.gen_s(p[0], p[1]))
        ex = cf.ThreadPoolExecutor(max_workers=self.gen_parallel)
        try:
            fa = [ex.submit(self.run_parent, *p, phase="A") for p in order(A)]
            fb = [ex.submit(self.run_parent, *p, phase="B") for p in order(B)]
            for f in fa:
                f.result()
            self.meta["phase_A_s"] = round(time.time() - t, 1)
            self.stop_blocker(keep)
            keep = None
            blk, self.blocked_free = self.start_blocker()
            self.check_contexts(blk)
            self.gate_opened = time.time()
            fcntl.flock(gate, fcntl.LOCK_UN)
            for f in fb:
                f.result()
            self.meta["phase_B_s"] = round(time.time() - self.gate_opened, 1)
        except BaseException:
            # an error or ^C: no program may stay behind (B's would wait at
            # the gate for ever)
            try:
                ex.shutdown(wait=False, cancel_futures=True)
            except TypeError:  # Python < 3.9
                pass
            for p in list(self.procs):
                try:
                    os.killpg(p.pid, 9)
                except OSError:
                    pass
            raise
        finally:
            ex.shutdown(wait=True)
            gate.close()
            self.stop_blocker(keep)
            self.stop_blocker(blk)

    def plan(self):
        """The jobs of both phases: A without the blocker, B with it."""
        A, B = [], []
        self.skipped = []
        for prog in self.programs:
            for size in ("fit", "nofit"):
                log = os.path.join(self.logs, "%s.%s.alloc" % (prog, size))
                ok = lambda b: self.status.get((prog, b)) == "ok" or self.dry
                if ok("orig"):
                    ref = [self.job(prog, size, "original", "gpu" if size == "fit" else "gpu-unblocked", "-", "orig",
                                    self.env_for(prog, "gpu", size, False, log), r) for r in range(self.reps_of(size))]
                    if size == "fit":
                        rest = [self.job(prog, size, "original", b, "-", "orig", self.env_for(prog, b, size, False, log), r)
                                for b in ("uvm", "zerocopy") for r in range(self.reps_of(size))]
                        A.append((prog, size, "orig", ref + rest))
                    else:
                        A.append((prog, size, "orig", ref))
                        B.append((prog, size, "orig", [
                            self.job(prog, size, "original", "zerocopy", "-", "orig",
                                     self.env_for(prog, "zerocopy", size, True, log), r) for r in range(self.reps_of(size))]))
                        self.skipped.append((prog, size, "original", "uvm", "-",
                                             "skipped: the data does not fit the free GPU memory; managed memory is never oversubscribed"))
                else:
                    self.skipped.append((prog, size, "original", "gpu", "-", self.status.get((prog, "orig"), "?")))
                for binary, opt in (("auto", "none"), ("opt", "auto")):
                    if not ok(binary):
                        self.skipped.append((prog, size, "port", "*", opt, self.status.get((prog, binary), "?")))
                        continue
                    if binary == "opt" and self.identical.get(prog):
                        self.skipped.append((prog, size, "port", "*", opt,
                                             "same source as --auto (no rewrite chosen): see the opt=none rows"))
                        continue
                    backends = [b for b in (("hbm", "host", "emu") if size == "fit" else ("host", "emu"))
                                if b in self.port_backends]
                    for b in ("hbm", "host", "emu"):
                        if b not in self.port_backends and (b != "hbm" or size == "fit"):
                            self.skipped.append((prog, size, "port", b, opt, "skipped: not in --port-backends"))
                    jobs = [self.job(prog, size, "port", b, opt, binary, self.env_for(prog, b, size, size == "nofit"), r)
                            for b in backends for r in range(self.reps_of(size))]
                    (A if size == "fit" else B).append((prog, size, binary, jobs))
                    if size == "nofit":
                        self.skipped.append((prog, size, "port", "hbm", opt,
                                             "skipped: the hbm backend keeps the data in GPU memory, which it does not fit"))
        return A, B

    def reps_of(self, size):
        return self.reps if size == "fit" else self.nofit_reps

    def gen_s(self, prog, size):
        """Guessed input generation time on one core of the GPU host (R-MAT
        graphs ~0.25 us per edge, the others a second or two at most)."""
        n = float(self.args_of(prog, size)[0])
        if prog in ("bfs_thread", "bfs_warp", "bfs_chunk", "pagerank"):
            return n * 16 * 0.3e-6 * (1 if prog != "pagerank" else 1.3)
        if prog in ("cc", "sssp"):
            return n * 8 * 0.3e-6 * 1.3
        return n * 1e-7 + 0.3

    def estimate(self, A, B):
        njobs = sum(len(p[3]) for p in A + B)
        nproc = len(A) + len(B)
        gen = sum(self.gen_s(p[0], p[1]) for p in A + B)
        gpu = njobs * (1.0 if not self.quick else 0.7)
        est = max(gpu, gen / max(1, self.gen_parallel)) + 0.3 * gen / max(1, self.gen_parallel)
        say("matrix: estimate: %d jobs in %d processes; input generation ~%.0f s of CPU (%d at a time), "
            "GPU jobs ~%.0f s; runs ~%.0f s plus the build (~%s)" % (
                njobs, nproc, gen, self.gen_parallel, gpu, est, "90-150 s" if not self.a.skip_build else "skipped"))
        self.meta["estimate_run_s"] = round(est)

    # --- results ---------------------------------------------------------
    def collect(self):
        rows = []
        groups = {}
        for j in self.jobs_run:
            groups.setdefault((j["prog"], j["size"], j["variant"], j["backend"], j["opt"]), []).append(j)
        ref = {}
        for key, js in groups.items():
            prog, size, variant, backend, opt = key
            times, sums, notes, footprint = [], [], [], ""
            gpu_free, gpu_budget = "", ""
            rc_bad = []
            for j in js:
                out = open(j["out"], errors="replace").read() if os.path.exists(j["out"]) else ""
                err = open(j["err"], errors="replace").read() if os.path.exists(j["err"]) else ""
                ms, detail = parse_ms(prog, err)
                j["ms"], j["detail"] = ms, detail
                j["checksum"] = checksum_of(out)
                m = re.search(r"memmode: mode=\S+ data_allocs=\d+ peak_data_bytes=(\d+)", err)
                if m:
                    footprint = m.group(1)
                m = re.search(r"forkpoint: free_bytes=(\d+) gpu_budget=(\d+)", err)
                if m and not gpu_free:
                    gpu_free, gpu_budget = str(int(m.group(1)) >> 20), str(int(m.group(2)) >> 20)
                if j["rc"] == 126 and "not run: --deadline-s" in j["note"]:
                    pass
                elif j["rc"] == 77:
                    notes.append("skipped by the shim: " + (re.search(r"memmode: skip: (.*)", err).group(1)
                                                            if "memmode: skip:" in err else "exit 77"))
                elif j["rc"] != 0:
                    last = [l for l in err.strip().splitlines() if l.strip()][-1:] or [""]
                    # 124 is also what a job killed at --deadline-s gets
                    # (its note says so); otherwise it ran past its limit,
                    # which says "slow", not "wrong": name the limit.
                    why = ""
                    if j["rc"] == 124 and "--deadline-s" not in j["note"]:
                        why = " (ran past the job limit of %d s; --timeout raises it)" % self.timeout
                    rc_bad.append("exit %s%s: %s" % (j["rc"], why, last[0][:160]))
                if ms is not None and j["rc"] == 0:
                    times.append(ms)
                sums.append(j["checksum"])
                if j["note"]:
                    notes.append(j["note"])
            row = dict(program=prog, size_class=size, variant=variant, backend=backend, opt=opt,
                       reps=len(times), ms_median=("%.3f" % statistics.median(times)) if times else "",
                       ms_min=("%.3f" % min(times)) if times else "", ms_max=("%.3f" % max(times)) if times else "",
                       checksum=next((s for s in sums if s), "") or "", data_bytes=footprint,
                       job_free_mib=gpu_free, gpu_budget_mib=gpu_budget,
                       detail=js[0].get("detail", ""), note="; ".join(dict.fromkeys(notes + rc_bad)),
                       _sums=sums, _failed=bool(rc_bad), _skipped=any(j["rc"] == 77 for j in js),
                       _notrun=not times and any(j["rc"] == 126 and "--deadline-s" in j["note"] for j in js))
            rows.append(row)
            if variant == "original" and backend in ("gpu", "gpu-unblocked"):
                ref[(prog, size)] = row
        # the same program and size: reference checksum, ratios
        for (prog, size), r in ref.items():
            r["_ref_sum"] = r["checksum"]
        for r in rows:
            rr = ref.get((r["program"], r["size_class"]))
            zc = next((x for x in rows if x["program"] == r["program"] and x["size_class"] == r["size_class"]
                       and x["variant"] == "original" and x["backend"] == "zerocopy"), None)
            tol = PROGRAMS[r["program"]].get("tol")
            want = rr["checksum"] if rr else None
            if r["_skipped"]:
                r["checksum_ok"] = "skipped"
            elif r["_notrun"]:
                r["checksum_ok"] = "NOT-RUN"
            elif r["_failed"] or not r["ms_median"]:
                r["checksum_ok"] = "FAILED"
            elif not want:
                r["checksum_ok"] = "no-reference"
            elif all(same_checksum(want, s, tol) for s in r["_sums"]):
                r["checksum_ok"] = "yes"
            else:
                r["checksum_ok"] = "MISMATCH"
            def ratio(base):
                if base and base["ms_median"] and r["ms_median"] and float(base["ms_median"]) > 0:
                    return "%.3f" % (float(r["ms_median"]) / float(base["ms_median"]))
                return ""
            r["ratio_to_gpu"] = ratio(rr)
            r["ratio_to_zerocopy"] = ratio(zc)
        for prog, size, variant, backend, opt, why in self.skipped:
            rows.append(dict(program=prog, size_class=size, variant=variant, backend=backend, opt=opt, reps=0,
                             ms_median="", ms_min="", ms_max="", ratio_to_gpu="", ratio_to_zerocopy="",
                             checksum="", checksum_ok="skipped", data_bytes="", job_free_mib="",
                             gpu_budget_mib="", detail="", note=why))
        order = {p: i for i, p in enumerate(self.programs)}
        vorder = {"gpu": 0, "gpu-unblocked": 0, "uvm": 1, "zerocopy": 2, "hbm": 3, "host": 4, "emu": 5, "*": 6}
        oorder = {"-": 0, "none": 1, "auto": 2}
        rows.sort(key=lambda r: (order[r["program"]], r["size_class"] != "fit", r["variant"] != "original",
                                 oorder.get(r["opt"], 3), vorder.get(r["backend"], 9)))
        return rows

    def write(self, rows):
        cols = ["program", "size_class", "variant", "backend", "opt", "ms_median", "ratio_to_gpu",
                "ratio_to_zerocopy", "checksum_ok", "reps", "ms_min", "ms_max", "checksum", "data_bytes",
                "job_free_mib", "gpu_budget_mib", "detail", "note"]
        path = os.path.join(self.out, "results.csv")
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
            w.writeheader()
            for r in rows:
                w.writerow(r)
        with open(os.path.join(self.out, "jobs.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["id", "rc", "wall_s", "ms", "detail", "checksum"])
            for j in self.jobs_run:
                w.writerow([j["id"], j["rc"], j["wall"], j.get("ms"), j.get("detail"), j.get("checksum")])
        # the table
        say("")
        say("%-10s %-5s %-8s %-13s %-4s %10s %8s %8s  %s" % (
            "program", "size", "variant", "backend", "opt", "ms", "x gpu", "x zc", "checksum"))
        for r in rows:
            flag = r["checksum_ok"]
            if flag in ("MISMATCH", "FAILED", "NOT-RUN"):
                flag = "*** %s ***" % flag
            say("%-10s %-5s %-8s %-13s %-4s %10s %8s %8s  %s%s" % (
                r["program"], r["size_class"], r["variant"], r["backend"], r["opt"], r["ms_median"] or "-",
                r["ratio_to_gpu"] or "-", r["ratio_to_zerocopy"] or "-", flag,
                ("  (" + r["note"][:90] + ")") if r["note"] and flag != "yes" else ""))
        bad = [r for r in rows if r["checksum_ok"] in ("MISMATCH", "FAILED", "no-reference", "NOT-RUN")]
        good = [r for r in rows if r["checksum_ok"] == "yes"]
        self.meta["bars"] = self.bars(rows)
        walls = [j["wall"] for j in self.jobs_run if j.get("wall")]
        if walls:
            self.meta["jobs"] = dict(n=len(walls), wall_mean_s=round(sum(walls) / len(walls), 2),
                                     wall_max_s=round(max(walls), 1), wall_sum_s=round(sum(walls), 1))
            say("matrix: %d jobs, %.2f s each on average (max %.1f s), %.0f s on the GPU in all" % (
                len(walls), sum(walls) / len(walls), max(walls), sum(walls)))
            per = {}
            for j in self.jobs_run:
                if j.get("wall"):
                    per[j["prog"]] = per.get(j["prog"], 0.0) + j["wall"]
            say("matrix: GPU seconds per program (jobs' wall time, context and teardown included): " +
                ", ".join("%s %.1f" % (p, per[p]) for p in self.programs if p in per))
            slow = sorted((j for j in self.jobs_run if j.get("wall")), key=lambda j: -j["wall"])[:6]
            say("matrix: slowest jobs: " + ", ".join("%s %.1f s" % (j["id"], j["wall"]) for j in slow))
            self.meta["gpu_s_per_program"] = {p: round(v, 1) for p, v in per.items()}
        self.meta.update(dict(finished=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                              total_s=round(time.time() - self.t0, 1), reps=self.reps, nofit_reps=self.nofit_reps, quick=self.quick,
                              budget_bytes=self.budget, blocked_free_bytes=getattr(self, "blocked_free", None),
                              free_at_start_bytes=getattr(self, "free0", None),
                              total_bytes=getattr(self, "total", None), cache=self.cache, arch=self.arch,
                              emu=EMU_ENV, programs={p: {s: " ".join(self.args_of(p, s)) for s in ("fit", "nofit")}
                                                     for p in self.programs},
                              timed={p: PROGRAMS[p]["timed"] for p in self.programs},
                              rows_ok=len(good), rows_bad=len(bad)))
        try:
            smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                                  "--format=csv,noheader"], stdout=subprocess.PIPE, text=True, timeout=20)
            self.meta["gpu"] = smi.stdout.strip()
        except Exception:
            pass
        with open(os.path.join(self.out, "meta.json"), "w") as f:
            json.dump(self.meta, f, indent=1)
        say("")
        if bad:
            say("matrix: *** %d ROWS WITHOUT A MATCHING CHECKSUM OR WITHOUT A RESULT ***" % len(bad))
            for r in bad:
                say("matrix: ***   %s %s %s %s opt=%s: %s %s" % (r["program"], r["size_class"], r["variant"],
                                                                  r["backend"], r["opt"], r["checksum_ok"],
                                                                  r["note"][:200]))
        say("matrix: %d rows with the original's checksum, %d bad, %d skipped; %s; %.0f s in all" % (
            len(good), len(bad), len([r for r in rows if r["checksum_ok"] == "skipped"]), path,
            time.time() - self.t0))
        return 1 if bad else 0

    # --- main ------------------------------------------------------------
    def run(self):
        os.makedirs(self.logs, exist_ok=True)
        if self.a.skip_build:
            for p in self.programs:
                for b in ("orig", "auto", "opt"):
                    self.status[(p, b)] = "ok" if os.path.exists(os.path.join(self.bin, "%s.%s" % (p, b))) else "missing"
                    src = os.path.join(self.src, "%s.%s.cu" % (p, b))
                    self.status[(p, b + ".fork")] = "ok" if os.path.exists(src) and "bench_fork::point()" in open(src).read() else "no"
                a, o = os.path.join(self.src, p + ".auto.cu"), os.path.join(self.src, p + ".opt.cu")
                if os.path.exists(a) and os.path.exists(o):
                    self.identical[p] = open(a).read() == open(o).read()
        else:
            self.build()
        if self.a.build_only:
            return 0
        self.free0, self.total = self.query_free()
        say("matrix: GPU memory: %s free of %s for a new process" % (mib(self.free0), mib(self.total)))
        self.blocked_free = self.budget  # refined when the blocker runs
        A, B = self.plan()
        self.estimate(A, B)
        self.phases(A, B)
        if self.dry:
            say("matrix: dry run: nothing was built or run")
            return 0
        self.check_nofit()
        rc = self.write(self.collect())
        self.write_summary()
        if self.a.export:
            self.export(self.a.export)
        return rc

    def bars(self, rows):
        """Issue 18's bars from the rows (only rows whose checksum matched),
        printed and kept in meta.json."""
        import math
        def get(prog, size, variant, backend, opt):
            for r in rows:
                if (r["program"], r["size_class"], r["variant"], r["backend"], r["opt"]) == (
                        prog, size, variant, backend, opt) and r["checksum_ok"] == "yes" and r["ms_median"]:
                    return float(r["ms_median"])
            if variant == "port" and opt == "auto":  # --opt auto that chose nothing ran as --auto
                if any(r["program"] == prog and r["size_class"] == size and r["backend"] == "*"
                       and r["opt"] == "auto" for r in rows):
                    return get(prog, size, variant, backend, "none")
            return None
        out = {}
        say("")
        # per program: the two ratios issue 18's bars are about
        cols = [("fit", "hbm", "gpu", "none"), ("fit", "hbm", "gpu", "auto"),
                ("fit", "host", "zerocopy", "none"), ("fit", "host", "zerocopy", "auto"),
                ("nofit", "host", "zerocopy", "none"), ("nofit", "host", "zerocopy", "auto")]
        say("matrix: per program (rows with the original's checksum only; '-': no such pair)")
        say("%-10s %12s %12s %14s %14s %16s %16s" % (
            "program", "hbm/gpu", "hbm/gpu", "host/zc fit", "host/zc fit", "host/zc nofit", "host/zc nofit"))
        say("%-10s %12s %12s %14s %14s %16s %16s" % ("", "opt none", "opt auto", "opt none", "opt auto",
                                                     "opt none", "opt auto"))
        table = {}
        for p in self.programs:
            cells = []
            for size, pb, ob, opt in cols:
                o, h = get(p, size, "original", ob, "-"), get(p, size, "port", pb, opt)
                v = h / o if o and h else None
                table.setdefault(p, {})["%s_%s_over_%s_opt_%s" % (size, pb, ob, opt)] = round(v, 3) if v else None
                cells.append("%.2fx" % v if v else "-")
            say("%-10s %12s %12s %14s %14s %16s %16s" % tuple([p] + cells))
        out["per_program"] = table
        say("")
        for opt in ("none", "auto"):
            fit = {}
            for p in self.programs:
                o, h = get(p, "fit", "original", "gpu", "-"), get(p, "fit", "port", "hbm", opt)
                if o and h:
                    fit[p] = h / o
            if fit:
                worst = max(fit, key=fit.get)
                line = "data fits, port hbm / original (opt %s): max %.2fx (%s); %d of %d programs <= 1.15x" % (
                    opt, fit[worst], worst, sum(v <= 1.15 for v in fit.values()), len(fit))
                say("matrix: bar: " + line)
                out["fit_hbm_over_gpu_opt_" + opt] = {p: round(v, 3) for p, v in fit.items()}
            for size in ("fit", "nofit"):
                zc = {}
                uvm_lose = []
                for p in self.programs:
                    z, h = get(p, size, "original", "zerocopy", "-"), get(p, size, "port", "host", opt)
                    if z and h:
                        zc[p] = h / z
                    u = get(p, size, "original", "uvm", "-")
                    if u and h and h >= u:
                        uvm_lose.append(p)
                if zc:
                    g = math.exp(sum(math.log(v) for v in zc.values()) / len(zc))
                    worst = max(zc, key=zc.get)
                    say("matrix: bar: %s, port host / zero-copy (opt %s): geomean %.2fx, max %.2fx (%s), "
                        "%d above 1.25x; not faster than UVM: %s" % (
                            size, opt, g, zc[worst], worst, sum(v > 1.25 for v in zc.values()),
                            ", ".join(uvm_lose) or "none"))
                    out["%s_host_over_zerocopy_opt_%s" % (size, opt)] = dict(
                        geomean=round(g, 3), per_program={p: round(v, 3) for p, v in zc.items()},
                        not_faster_than_uvm=uvm_lose)
        return out

    def export(self, dest):
        """Writes three files to dest (a tool that brings back only a few
        files gets them all): results.csv, summary.txt (the console: table,
        per-program ratios, bars) and matrix.tgz with results.csv, jobs.csv,
        meta.json, summary.txt, the plot (PNG + SVG, where matplotlib is
        installed), the logs and the ported sources (not the binaries)."""
        os.makedirs(dest, exist_ok=True)
        p = subprocess.run([sys.executable, os.path.join(HERE, "plot.py"), os.path.join(self.out, "results.csv"),
                            os.path.join(self.out, "benchmarks")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        say("matrix: plot: %s" % ("benchmarks.png, benchmarks.svg" if p.returncode == 0
                                  else "none (" + p.stdout.strip()[-200:] + ")"))
        say("matrix: exported to %s: results.csv, summary.txt, matrix.tgz" % dest)
        self.write_summary()
        members = [n for n in ("results.csv", "jobs.csv", "meta.json", "summary.txt", "benchmarks.png",
                               "benchmarks.svg", "logs", "src") if os.path.exists(os.path.join(self.out, n))]
        rc = subprocess.run(["tar", "czf", os.path.join(dest, "matrix.tgz"), "-C", self.out] + members).returncode
        if rc != 0:
            say("matrix: *** tar of %s failed (status %d) ***" % (dest, rc))
        for name in ("results.csv", "summary.txt"):
            shutil.copy(os.path.join(self.out, name), dest)

    def write_summary(self):
        with _print_lock:
            text = "\n".join(_console) + "\n"
        with open(os.path.join(self.out, "summary.txt"), "w") as f:
            f.write(text)

    def check_nofit(self):
        """Loud note when a nofit size would have fit in the budget."""
        for prog in self.programs:
            log = os.path.join(self.logs, "%s.nofit.alloc" % prog)
            if not os.path.exists(log):
                continue
            total = sum(int(l.split()[1]) for l in open(log) if l.strip())
            if total <= self.blocked_free:
                say("matrix: *** %s nofit: its data (%s) fits the %s budget: the size does not model data that "
                    "does not fit ***" % (prog, mib(total), mib(self.blocked_free)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--quick", action="store_true", help="smaller sizes, 1 repetition (a first trial, ~3 min)")
    ap.add_argument("--dry-run", action="store_true", help="print the build commands and jobs, run nothing")
    ap.add_argument("--programs", help="comma-separated subset (default: %s)" % ",".join(DEFAULT_PROGRAMS))
    ap.add_argument("--reps", type=int, help="runs per row (median); default 2, --quick 1")
    ap.add_argument("--nofit-reps", type=int, help="runs per row of the nofit class (default 1, or --reps if given)")
    ap.add_argument("--budget-mib", type=int,
                    help="GPU memory a new process sees free (its context made) in the nofit runs (default 640, "
                         "--quick 384); the blocker leaves this plus one context")
    ap.add_argument("--reserve-mib", type=int,
                    help="of what a blocked ported job sees free, what is not given to BAM_GPU_BUDGET besides the "
                         "cache: the runtime's own allocations, the program's plain cudaMalloc arrays and local "
                         "memory a first launch may add (default 192)")
    ap.add_argument("--deadline-s", type=int, default=0,
                    help="stop starting programs after this many seconds from the start (build included): phase A "
                         "gets 55%% of what is left, the blocked phase B the rest; rows not run are NOT-RUN")
    ap.add_argument("--cache", help="BAM_CACHE_BYTES of the ported runs (default 64M, --quick 16M)")
    ap.add_argument("--timeout", type=int, help="seconds per job (default 120, --quick 60)")
    ap.add_argument("--gen-timeout", type=int, default=300, help="seconds for a process's input generation")
    ap.add_argument("--gen-parallel", type=int, default=10,
                    help="processes generating their input at once while one uses the GPU (default 10)")
    ap.add_argument("--no-fork", action="store_true", help="one process per job (each generates its input)")
    ap.add_argument("--bamgen", help="the bamgen binary (or BAMGEN=...)")
    ap.add_argument("--nvcc")
    ap.add_argument("--arch", default=os.environ.get("ARCH", "sm_90"))
    ap.add_argument("--jobs", type=int, help="parallel compiles (default: all cores)")
    ap.add_argument("--emu-dir", default=os.environ.get("BAM_EMU_DIR", "/tmp"))
    ap.add_argument("--port-backends", default="hbm,host,emu",
                    help="comma-separated backends of the ported rows (default hbm,host,emu); the others are "
                         "listed as skipped")
    ap.add_argument("--skip-build", action="store_true", help="use OUTDIR/bin from an earlier --build-only")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--export", help="also write results.csv, summary.txt and matrix.tgz (CSVs, meta.json, plot, "
                                     "logs, ported sources; not the binaries) to this folder")
    a = ap.parse_args()
    sys.exit(Matrix(a).run())


if __name__ == "__main__":
    main()
