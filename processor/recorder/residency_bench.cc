// residency_bench: how long a residency snapshot takes and how big it is in
// TRACE.rss, on a helper process (a fork of this one) that maps a given
// amount of accessible memory and touches part of it, in layouts from
// friendly to hostile for the run-length coding. Prints a Markdown table
// (docs/residency.md quotes it): the snapshot's wall time (median and
// fastest of 7), its CPU time (median: what it costs whatever else the
// machine runs), the time to encode it, its size in TRACE.rss. Not a test:
// run by hand.
//
//   build/bin/residency_bench                 # 400 MiB and 8 GiB, each layout
//   build/bin/residency_bench 1024 runs       # 1 GiB accessible, one layout
//
// Layouts (of each 64 MiB mapping of the helper):
//   runs       every other 1 MiB resident (half resident, few runs)
//   chunks     every other 64 KiB resident (half resident, allocator-like)
//   alternate  every other page resident (half resident: the most runs)
//   sparse     one page in 64 resident (a big reservation, lightly used)
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "processor/residency/pagemap_sampler.h"
#include "processor/residency/snapshot_file.h"

namespace {

using pageblame::residency::EncodeSnapshot;
using pageblame::residency::PagemapSampler;
using pageblame::residency::ResidencySnapshot;
using pageblame::residency::SnapshotReason;

constexpr uint64_t kPage = 4096;
constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t kMapping = 64 * kMiB;

struct Layout {
  const char* name;
  uint64_t run;     // bytes resident, then
  uint64_t period;  // every this many bytes
};
constexpr Layout kLayouts[] = {
    {"runs", kMiB, 2 * kMiB}, {"chunks", 64 * 1024, 128 * 1024}, {"alternate", kPage, 2 * kPage}, {"sparse", kPage, 64 * kPage}};

// The helper: maps `bytes` accessible in 64 MiB mappings (MAP_NORESERVE:
// untouched pages cost nothing), touches them per `layout`, says so on
// `ready` and waits until its parent kills it.
[[noreturn]] void Helper(uint64_t bytes, const Layout& layout, int ready) {
  for (uint64_t done = 0; done < bytes; done += kMapping) {
    char* p = static_cast<char*>(mmap(nullptr, kMapping, PROT_READ | PROT_WRITE,
                                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
    if (p == MAP_FAILED) _exit(1);
    // A guard page between mappings, as allocators leave: the kernel
    // cannot merge them into one mapping.
    mprotect(p + kMapping - kPage, kPage, PROT_NONE);
    for (uint64_t at = 0; at + layout.run <= kMapping - kPage; at += layout.period) {
      for (uint64_t off = 0; off < layout.run; off += kPage) p[at + off] = 1;
    }
  }
  char c = 1;
  if (write(ready, &c, 1) != 1) _exit(1);
  for (;;) pause();
}

// This thread's CPU time, ms: the snapshot's own cost, whatever else the
// machine runs (wall time is printed too).
double ThreadCpuMs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Measure(uint64_t accessible_mib, const Layout& layout, int runs) {
  int pipefd[2];
  if (pipe(pipefd) != 0) return;
  const pid_t helper = fork();
  if (helper == 0) Helper(accessible_mib * kMiB, layout, pipefd[1]);
  char c;
  if (helper < 0 || read(pipefd[0], &c, 1) != 1) {
    std::fprintf(stderr, "residency_bench: the helper failed\n");
    return;
  }
  close(pipefd[0]);
  close(pipefd[1]);
  PagemapSampler sampler;
  std::vector<double> take_ms, cpu_ms, encode_ms;
  ResidencySnapshot s;
  size_t bytes = 0;
  for (int i = 0; i < runs; ++i) {
    const double c0 = ThreadCpuMs();
    const auto t0 = std::chrono::steady_clock::now();
    auto taken = sampler.Take(static_cast<uint32_t>(helper), SnapshotReason::kPeriodic);
    const auto t1 = std::chrono::steady_clock::now();
    cpu_ms.push_back(ThreadCpuMs() - c0);
    if (!taken.ok()) {
      std::fprintf(stderr, "residency_bench: %s\n", std::string(taken.status().message()).c_str());
      break;
    }
    bytes = EncodeSnapshot(*taken).size();
    const auto t2 = std::chrono::steady_clock::now();
    take_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    encode_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    s = std::move(*taken);
  }
  kill(helper, SIGKILL);
  waitpid(helper, nullptr, 0);
  if (take_ms.empty()) return;
  const double resident_gib = s.present.total() / double(uint64_t{1} << 30);
  std::printf("| %6.1f GiB | %-9s | %8.1f MiB | %8.2f ms | %8.2f ms | %8.2f ms | %8.2f ms | %9zu | %10.1f KiB |\n",
              s.read.total() / double(uint64_t{1} << 30), layout.name, s.present.total() / double(kMiB),
              Median(take_ms), *std::min_element(take_ms.begin(), take_ms.end()), Median(cpu_ms), Median(encode_ms), bytes,
              resident_gib > 0 ? bytes / 1024.0 / resident_gib : 0.0);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<uint64_t> sizes = {400, 8192};
  std::vector<const Layout*> layouts;
  if (argc >= 2) sizes = {std::strtoull(argv[1], nullptr, 10)};
  for (const Layout& l : kLayouts) {
    if (argc < 3 || std::strcmp(argv[2], l.name) == 0) layouts.push_back(&l);
  }
  if (sizes[0] == 0 || layouts.empty()) {
    std::fprintf(stderr, "usage: residency_bench [ACCESSIBLE_MIB [runs|chunks|alternate|sparse]]\n");
    return 2;
  }
  std::printf("| accessible | layout    | resident     | snapshot   | (fastest)  | (its CPU)  | encode     | .rss bytes | per GiB resident |\n");
  std::printf("|-----------:|-----------|-------------:|-----------:|-----------:|-----------:|-----------:|----------:|-----------------:|\n");
  for (uint64_t mib : sizes) {
    for (const Layout* l : layouts) Measure(mib, *l, 7);
  }
  return 0;
}
