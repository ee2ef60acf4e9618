// bench/matrix/forkpoint.h: generate a program's input once, run it many
// times. bench_fork::point() is called after a corpus program has built its
// input on the host and before its first CUDA call (memmode.h calls it at
// the program's first allocation; in a ported program bench/matrix/prepare.py
// puts a call just before the runtime is made, which it moves from the top
// of main to its first use). With BENCH_JOBS unset it does nothing.
//
// With BENCH_JOBS=FILE, one job per line, tab-separated:
//
//   ID <TAB> STDOUT_PATH <TAB> STDERR_PATH <TAB> TIMEOUT_S [<TAB> NAME=VALUE]...
//
// the process takes the lock file BENCH_GPU_LOCK (flock; one process on the
// GPU at a time, while others may still be generating their input), then
// for each job forks a child that sets the job's environment, sends its
// stdout/stderr to the job's files and goes on with the program from here,
// and waits for it (killed after TIMEOUT_S: status 124). Each job's result is
// appended to BENCH_JOBS_RESULT as `ID STATUS WALL_S` (STATUS: the exit status,
// or 128 + signal). Then the parent exits with status 0 without touching
// CUDA. The parent must not have initialised CUDA before this point: a child
// of a process with a CUDA context cannot use CUDA.
//
// BENCH_GPU_BUDGET_AUTO="CACHE_BYTES RESERVE_BYTES" (the ported runs under
// the blocker): the job measures the GPU memory free to it once its own
// CUDA context exists (cudaMemGetInfo, at the fork point, before the
// program's first CUDA call: the context is the one the program then uses)
// and sets BAM_GPU_BUDGET = free - CACHE_BYTES - RESERVE_BYTES (the reserve
// covers the runtime's own small allocations and the program's arrays that
// stay plain cudaMalloc), printing "forkpoint: free_bytes=N gpu_budget=N"
// on stderr. When free memory does not cover cache + reserve it stops with
// status 4 and says so (no run with a budget the GPU does not have).
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace bench_fork {

struct job {
  std::string id, out, err;
  double timeout_s = 600;
  std::vector<std::string> env;
};

inline std::vector<job> read_jobs(const char* path)
{
  std::vector<job> jobs;
  FILE* f = std::fopen(path, "r");
  if (!f) {
    std::fprintf(stderr, "forkpoint: error: BENCH_JOBS=%s: cannot open\n", path);
    std::_Exit(3);
  }
  char line[8192];
  while (std::fgets(line, sizeof line, f)) {
    std::string s(line);
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
      s.pop_back();
    if (s.empty() || s[0] == '#')
      continue;
    std::vector<std::string> cols;
    size_t a = 0;
    for (;;) {
      const size_t b = s.find('\t', a);
      cols.push_back(s.substr(a, b == std::string::npos ? std::string::npos : b - a));
      if (b == std::string::npos)
        break;
      a = b + 1;
    }
    if (cols.size() < 4) {
      std::fprintf(stderr, "forkpoint: error: %s: a job needs ID, STDOUT, STDERR and TIMEOUT_S: %s\n", path,
                   s.c_str());
      std::_Exit(3);
    }
    job j;
    j.id = cols[0];
    j.out = cols[1];
    j.err = cols[2];
    j.timeout_s = std::atof(cols[3].c_str());
    for (size_t i = 4; i < cols.size(); i++)
      j.env.push_back(cols[i]);
    jobs.push_back(j);
  }
  std::fclose(f);
  return jobs;
}

inline int redirect(int fd, const std::string& path)
{
  const int o = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (o < 0)
    return -1;
  dup2(o, fd);
  close(o);
  return 0;
}


// BENCH_GPU_BUDGET_AUTO: see the top of this file.
inline void apply_budget()
{
  const char* v = std::getenv("BENCH_GPU_BUDGET_AUTO");
  if (!v || !*v)
    return;
  unsigned long long cache = 0, reserve = 0;
  if (std::sscanf(v, "%llu %llu", &cache, &reserve) != 2) {
    std::fprintf(stderr, "forkpoint: error: BENCH_GPU_BUDGET_AUTO=%s: expected \"CACHE_BYTES RESERVE_BYTES\"\n", v);
    std::_Exit(3);
  }
  // Free memory as the program finds it. The stack limit is left alone:
  // the runtime raises it (BAM_STACK_BYTES) only when an array is read
  // through the cache, and then takes what the driver reserved for it off
  // BAM_GPU_BUDGET itself (runtime.cu, ensure_stack).
  size_t free_b = 0, total_b = 0;
  const cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
  if (e != cudaSuccess) {
    std::fprintf(stderr, "forkpoint: error: cudaMemGetInfo: %s\n", cudaGetErrorString(e));
    std::_Exit(4);
  }
  if (free_b < cache + reserve) {
    std::fprintf(stderr,
                 "forkpoint: error: %zu MiB free on the GPU at the job's start (its context made), less than the "
                 "cache (%llu MiB) + reserve (%llu MiB); leave more with --budget-mib\n",
                 free_b >> 20, cache >> 20, reserve >> 20);
    std::_Exit(4);
  }
  const unsigned long long budget = free_b - cache - reserve;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%llu", budget);
  setenv("BAM_GPU_BUDGET", buf, 1);
  std::fprintf(stderr, "forkpoint: free_bytes=%zu gpu_budget=%llu\n", free_b, budget);
}

inline void point()
{
  static bool done = false;
  if (done)
    return;
  done = true;
  const char* path = std::getenv("BENCH_JOBS");
  if (!path || !*path) { // one process per job (--no-fork): its environment is already set
    apply_budget();
    return;
  }
  // A child of a process with a CUDA context cannot use CUDA: refuse when
  // the CUDA driver is already loaded here.
  if (FILE* maps = std::fopen("/proc/self/maps", "r")) {
    char line[1024];
    bool cuda = false;
    while (std::fgets(line, sizeof line, maps))
      if (std::strstr(line, "libcuda.so"))
        cuda = true;
    std::fclose(maps);
    if (cuda) {
      std::fprintf(stderr, "forkpoint: error: the program used CUDA before the fork point; run each job in its "
                           "own process (bench/matrix/matrix.py --no-fork)\n");
      std::_Exit(3);
    }
  }
  const std::vector<job> jobs = read_jobs(path);
  const char* res_path = std::getenv("BENCH_JOBS_RESULT");
  FILE* res = res_path && *res_path ? std::fopen(res_path, "a") : nullptr;
  int lock_fd = -1;
  if (const char* lock = std::getenv("BENCH_GPU_LOCK"); lock && *lock) {
    lock_fd = open(lock, O_CREAT | O_RDWR, 0644);
    if (lock_fd < 0 || flock(lock_fd, LOCK_EX) != 0) {
      std::fprintf(stderr, "forkpoint: error: BENCH_GPU_LOCK=%s: cannot lock\n", lock);
      std::_Exit(3);
    }
  }
  std::fflush(stdout);
  std::fflush(stderr);
  for (const job& j : jobs) {
    const auto t0 = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid < 0) {
      std::fprintf(stderr, "forkpoint: error: fork failed\n");
      std::_Exit(3);
    }
    if (pid == 0) { // the child goes on with the program
      if (lock_fd >= 0)
        close(lock_fd); // the parent keeps the lock
      if (res)
        std::fclose(res);
      for (const std::string& kv : j.env) {
        const size_t eq = kv.find('=');
        if (eq == std::string::npos)
          continue;
        setenv(kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), 1);
      }
      unsetenv("BENCH_JOBS");
      if (redirect(1, j.out) != 0 || redirect(2, j.err) != 0) {
        std::fprintf(stderr, "forkpoint: error: cannot open %s or %s\n", j.out.c_str(), j.err.c_str());
        std::_Exit(3);
      }
      apply_budget();
      return;
    }
    int status = 0, rc = -1;
    for (;;) {
      const pid_t w = waitpid(pid, &status, WNOHANG);
      if (w == pid) {
        rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        break;
      }
      const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (el > j.timeout_s) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        rc = 124;
        break;
      }
      usleep(5000);
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (res) {
      std::fprintf(res, "%s %d %.3f\n", j.id.c_str(), rc, wall);
      std::fflush(res);
    }
  }
  if (res)
    std::fclose(res);
  if (lock_fd >= 0)
    close(lock_fd);
  std::_Exit(0);
}

} // namespace bench_fork
