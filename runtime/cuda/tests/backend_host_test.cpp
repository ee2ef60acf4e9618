// The backends' host side without a GPU: size arithmetic, array_from_file's
// checks, and the emu backend's backing file and trace (links libcudart;
// with no GPU the emu controller serves from host memory).
#include "../src/backends.h"
#include "../src/backing.h"
#include "../src/checked.h"

#include <bam/config.h>
#include <bam/error.h>
#include <bam/nvme/emu.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

int failures = 0;

void expect(bool ok, const std::string& what)
{
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  failures += ok ? 0 : 1;
}

// f() must throw bam::error containing every one of `parts`.
void expect_error(const std::string& what, const std::function<void()>& f, std::initializer_list<const char*> parts)
{
  try {
    f();
    expect(false, what + ": no error");
  } catch (const bam::error& e) {
    const std::string msg = e.what();
    bool all = true;
    for (const char* p : parts)
      all = all && msg.find(p) != std::string::npos;
    expect(all, what + ": " + msg);
  }
}

int entries(const std::string& dir) // files in dir, . and .. excluded
{
  int n = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      n += std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0;
    closedir(d);
  }
  return n;
}

void write_file(const std::string& path, const std::vector<unsigned char>& bytes)
{
  FILE* f = std::fopen(path.c_str(), "wb");
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}

} // namespace

int main()
{
  using bam::detail::backing_region;
  using bam::detail::backing_store;
  using bam::detail::checked_add;
  using bam::detail::checked_bytes;
  using bam::detail::emu_backend;
  using bam::detail::open_array_file;
  char tmpl[] = "/tmp/bam_backend_host_test_XXXXXX";
  const std::string dir = mkdtemp(tmpl);

  // ---- size arithmetic (runtime::create, copy_to_host)
  expect(checked_bytes(1000, 8, "x") == 8000, "checked_bytes: 1000 x 8");
  expect(checked_bytes(UINT64_MAX / 8, 8, "x") == UINT64_MAX / 8 * 8, "checked_bytes: largest product that fits");
  expect_error("checked_bytes: (2^64/8 + 1) x 8", [] { checked_bytes(UINT64_MAX / 8 + 1, 8, "bam::runtime: making an array"); },
               {"bam::runtime: making an array", "2305843009213693952 elements of 8 bytes do not fit in 64 bits"});
  expect_error("checked_add: offset + size wraps", [] { checked_add(UINT64_MAX - 10, 11, "array_from_file: offset + size"); },
               {"array_from_file: offset + size", "does not fit in 64 bits"});

  // ---- array_from_file's source checks
  const std::string data = dir + "/data.bin";
  std::vector<unsigned char> bytes(10000);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<unsigned char>(i * 7);
  write_file(data, bytes);
  {
    int fd = open_array_file(data, 100, 9900);
    expect(fd >= 0, "open_array_file: bytes [100, 10000) of a 10000-byte file");
    close(fd);
  }
  expect_error("open_array_file: past the end", [&] { close(open_array_file(data, 100, 9901)); },
               {"has 10000 bytes, but offset 100 + 9901 bytes were asked for"});
  expect_error("open_array_file: offset + n wraps around 2^64",
               [&] { close(open_array_file(data, UINT64_MAX - 5, 10)); },
               {"has 10000 bytes, but offset 18446744073709551610 + 10 bytes were asked for"});
  expect_error("open_array_file: a directory", [&] { close(open_array_file(dir, 0, 1)); },
               {"is not a regular file (a directory)"});
  const std::string fifo = dir + "/fifo";
  if (mkfifo(fifo.c_str(), 0600) == 0) // must be refused, not block waiting for a writer
    expect_error("open_array_file: a FIFO", [&] { close(open_array_file(fifo, 0, 1)); },
                 {"is not a regular file (a FIFO)"});
  unlink(fifo.c_str());
  expect_error("open_array_file: a character device", [&] { close(open_array_file("/dev/zero", 0, 1)); },
               {"is not a regular file (a character device)"});
  expect_error("open_array_file: missing", [&] { close(open_array_file(dir + "/none", 0, 1)); },
               {"cannot open", "No such file"});

  // ---- the emu backend's host side
  bam::config cfg;
  cfg.kind = bam::backend::emu;
  cfg.emu_dir = dir + "/emu";
  mkdir(cfg.emu_dir.c_str(), 0700);
  {
    std::unique_ptr<backing_store> st = emu_backend::setup(cfg);
    const backing_region a = st->allocate(1 << 20);
    expect(entries(cfg.emu_dir) == 0, "emu: the backing file has no name in BAM_EMU_DIR (O_TMPFILE)");
    st->write_from_host(a, bytes.data(), bytes.size());
    const backing_region b = st->allocate(1 << 20);
    st->write_from_file(b, data, 100, 9900); // generic path: through write_from_host
    std::vector<unsigned char> back(9900);
    st->read_to_host(b, back.data(), back.size());
    expect(std::memcmp(back.data(), bytes.data() + 100, back.size()) == 0, "emu: array_from_file bytes read back");
    std::vector<unsigned char> first(bytes.size());
    st->read_to_host(a, first.data(), first.size());
    expect(first == bytes, "emu: array_from_host bytes read back");
    expect_error("emu: allocate past 2^62 (used + bytes would wrap)", [&] { st->allocate(UINT64_MAX - 4096); },
                 {"more were asked for", "at most 4611686018427387904 bytes"});
    expect_error("emu: array_from_file offset + n wraps", [&] { st->write_from_file(b, data, UINT64_MAX, 2); },
                 {"offset 18446744073709551615 + 2 bytes"});
    const backing_region c = st->allocate(4096); // still usable after the refused allocation
    expect(c.offset == b.offset + b.bytes, "emu: a refused allocation takes no space");
  }
  expect(entries(cfg.emu_dir) == 0, "emu: nothing left in BAM_EMU_DIR after the store is gone");
  {
    bam::config bad = cfg;
    bad.emu_dir = dir + "/no/such/dir";
    expect_error("emu: unwritable BAM_EMU_DIR", [&] { emu_backend::setup(bad); },
                 {"cannot create a backing file in BAM_EMU_DIR=", "set BAM_EMU_DIR"});
  }

  // ---- BAM_EMU_TRACE: never through a symbolic link, never a non-file
  const std::string victim = dir + "/victim", link = dir + "/trace.csv";
  write_file(victim, {'k', 'e', 'e', 'p'});
  if (symlink(victim.c_str(), link.c_str()) == 0) {
    bam::config t = cfg;
    t.emu_trace = link;
    expect_error("emu: BAM_EMU_TRACE naming a symbolic link", [&] {
      auto st = emu_backend::setup(t);
      st->allocate(4096); // the controller starts on the first allocation
    }, {"BAM_EMU_TRACE", "is a symbolic link"});
    struct ::stat sb;
    expect(::stat(victim.c_str(), &sb) == 0 && sb.st_size == 4, "emu: the link's target was not truncated");
  }
  {
    bam::config t = cfg;
    t.emu_trace = dir;
    expect_error("emu: BAM_EMU_TRACE naming a directory", [&] { emu_backend::setup(t)->allocate(4096); },
                 {"BAM_EMU_TRACE", dir.c_str()});
  }
  {
    const std::string hard = dir + "/hard.csv";
    if (::link(victim.c_str(), hard.c_str()) == 0) {
      bam::config t = cfg;
      t.emu_trace = hard;
      expect_error("emu: BAM_EMU_TRACE naming a file with a second name", [&] { emu_backend::setup(t)->allocate(4096); },
                   {"not a regular file with a single name"});
      unlink(hard.c_str());
    }
  }
  {
    bam::config t = cfg;
    t.emu_trace = dir + "/ok.csv";
    { emu_backend::setup(t)->allocate(4096); }
    struct ::stat sb;
    expect(::stat(t.emu_trace.c_str(), &sb) == 0 && S_ISREG(sb.st_mode), "emu: BAM_EMU_TRACE to a new file is written");
    unlink(t.emu_trace.c_str());
  }

  unlink(link.c_str());
  unlink(victim.c_str());
  unlink(data.c_str());
  rmdir(cfg.emu_dir.c_str());
  rmdir(dir.c_str());
  if (failures == 0)
    std::printf("backend_host_test: all passed\n");
  return failures != 0;
}
