// heap_bench: how long the glibc heap walker takes on a running process and
// how big its snapshot is in TRACE.heap. A helper process (a fork of this
// one) builds a heap of a given size in its main arena in one of a few
// layouts, then waits; the bench walks it (LiveMemory + HeapWalker, as
// `pageblame heap -p` does, residency from pagemap included) 7 times and
// prints a Markdown table: the walk's wall time (median), per GiB of arena
// (system bytes) and per million chunks, the encoded snapshot's size, and
// the walking process's peak resident memory (each layout is walked by a
// process of its own, so that the peak is that layout's: the bench's own
// few MiB included, the helper's heap not).
// Not a test: run by hand (bench/heap.sh), as root.
//
//   build/bin/heap_bench              # 1 GiB, every layout
//   build/bin/heap_bench 256 typical  # 256 MiB, one layout
//
// Layouts:
//   typical   blocks of 16..4096 bytes (sizes spread like a service's),
//             one in three freed: a heap where most memory is in use
//   small     blocks of 24..64 bytes, one in four freed: the most chunks
//   retained  64 KiB blocks, 9 in 10 freed after: mostly free memory held
//             by glibc (the "leak or glibc?" case)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "processor/heap/heap_snapshot_file.h"
#include "processor/heap/heap_walker.h"
#include "processor/heap/live_memory.h"

namespace {

using pageblame::heap::HeapSnapshot;

// In the helper: fills the main arena with about `bytes` of blocks.
void Build(uint64_t bytes, const std::string& layout) {
  std::vector<void*> blocks;
  uint64_t made = 0, n = 0;
  uint64_t seed = 12345;
  auto next = [&seed] { return seed = seed * 6364136223846793005ULL + 1442695040888963407ULL; };
  while (made < bytes) {
    size_t size = layout == "small" ? 24 + next() % 41 : layout == "retained" ? 65536 : 16 + next() % 4081;
    if (layout == "typical" && next() % 8 != 0) size = 16 + next() % 240;  // most blocks are small
    char* p = static_cast<char*>(malloc(size));
    std::memset(p, 1, size);
    blocks.push_back(p);
    made += size;
    ++n;
  }
  const uint64_t every = layout == "small" ? 4 : layout == "retained" ? 10 : 3;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const bool free_it = layout == "retained" ? i % every != 0 : i % every == 0;
    if (free_it) free(blocks[i]);
  }
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Run(uint64_t mib, const std::string& layout) {
  int ready[2], go[2];
  if (pipe(ready) != 0 || pipe(go) != 0) return;
  const pid_t child = fork();
  if (child == 0) {
    close(go[1]);
    close(ready[0]);
    Build(mib << 20, layout);
    char c = 1;
    if (write(ready[1], &c, 1) != 1) _exit(1);
    if (read(go[0], &c, 1) < 0) _exit(1);
    _exit(0);
  }
  close(go[0]);
  close(ready[1]);
  char c;
  if (read(ready[0], &c, 1) != 1) return;
  close(ready[0]);
  std::vector<double> ms;
  HeapSnapshot s;
  for (int i = 0; i < 7; ++i) {
    auto memory = pageblame::heap::LiveMemory::Open(child);
    if (!memory.ok()) {
      std::fprintf(stderr, "heap_bench: %s\n", std::string(memory.status().message()).c_str());
      break;
    }
    const auto start = std::chrono::steady_clock::now();
    auto snapshot = pageblame::heap::HeapWalker::Walk(memory->get(), {});
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    if (!snapshot.ok()) {
      std::fprintf(stderr, "heap_bench: %s\n", std::string(snapshot.status().message()).c_str());
      break;
    }
    s = *std::move(snapshot);
  }
  close(go[1]);
  waitpid(child, nullptr, 0);
  if (ms.empty() || s.arenas.empty()) return;
  const double gib = s.Totals().system_bytes / double(1 << 30);
  uint64_t chunks = 0;
  for (const auto& a : s.arenas) chunks += a.chunks;
  const double median = Median(ms);
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  std::printf("| %-8s | %8.0f MiB | %7.2f M | %8.1f | %9.1f | %13.1f | %9.1f KiB | %11zu | %8.1f MiB |\n",
              layout.c_str(), gib * 1024, chunks / 1e6, median, median / gib, median / (chunks / 1e6),
              pageblame::heap::EncodeHeapSnapshot(s).size() / 1024.0, s.free_ranges.size(),
              usage.ru_maxrss / 1024.0);
  std::fflush(stdout);
  for (const auto& a : s.arenas)
    if (!a.damage.empty()) std::fprintf(stderr, "heap_bench: %s: damage: %s\n", layout.c_str(), a.damage.c_str());
  if (s.attempts > 1) std::fprintf(stderr, "heap_bench: %s: %u attempts\n", layout.c_str(), s.attempts);
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1024;
  std::vector<std::string> layouts = {"typical", "small", "retained"};
  if (argc > 2) layouts = {argv[2]};
  std::printf("| layout   |    arena     |  chunks   | walk ms  | ms / GiB  | ms / M chunks | snapshot      | free ranges | peak RSS     |\n");
  std::printf("|----------|--------------|-----------|----------|-----------|---------------|---------------|-------------|--------------|\n");
  std::fflush(stdout);
  for (const std::string& l : layouts) {
    const pid_t walker = fork();
    if (walker == 0) {
      Run(mib, l);
      std::fflush(stdout);
      _exit(0);
    }
    if (walker > 0) waitpid(walker, nullptr, 0);
  }
  return 0;
}
