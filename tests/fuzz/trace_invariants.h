// The whole pipeline over fuzzed perf.data bytes (file or pipe mode): load
// (reader, decode, replay, index) must end in an error or in an index whose
// every region the kernel could have made: page-aligned, start below end
// (issue 21: a wrapping mmap length made end < start). Anything else aborts,
// which libFuzzer reports as a crash.
#ifndef PAGEBLAME_TESTS_FUZZ_TRACE_INVARIANTS_H_
#define PAGEBLAME_TESTS_FUZZ_TRACE_INVARIANTS_H_

#include <cstdio>
#include <cstdlib>
#include <string>

#include "processor/replay/trace_loader.h"

namespace pageblame::fuzz {

// Every region at the end of `idx` one the kernel could have made.
inline void CheckRegions(const index::TraceIndex& idx) {
  for (uint32_t p = 0; p < idx.num_processes(); ++p) {
    for (VersionId v : idx.RegionsAt(p, index::kEndOfTrace)) {
      const index::Version& r = idx.version(v);
      if (r.start >= r.end || r.start % 4096 != 0 || r.end % 4096 != 0) {
        std::fprintf(stderr, "impossible region [0x%llx, 0x%llx)\n", (unsigned long long)r.start,
                     (unsigned long long)r.end);
        std::abort();
      }
    }
  }
}

inline void LoadAndCheck(const std::string& path) {
  replay::LoadOptions o;
  o.path = path;
  o.symbols.trace_path = path;
  // Stacks are never printed here: no symbol tables to read.
  o.preload_symbols = false;
  auto trace = replay::LoadTrace(o);
  if (!trace.ok() || *trace == nullptr) return;
  CheckRegions((*trace)->index());
}

}  // namespace pageblame::fuzz

#endif  // PAGEBLAME_TESTS_FUZZ_TRACE_INVARIANTS_H_
