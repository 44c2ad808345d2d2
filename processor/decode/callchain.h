// User frames of a perf callchain. perf's chains are leaf first and mix
// kernel and user ips separated by PERF_CONTEXT_* markers
// (include/uapi/linux/perf_event.h); we keep only PERF_CONTEXT_USER ips,
// since the kernel side of a syscall says nothing about who called it.
#ifndef PAGEBLAME_DECODE_CALLCHAIN_H_
#define PAGEBLAME_DECODE_CALLCHAIN_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "processor/perf/perf_records.h"

namespace pageblame::decode {

// Where the first PERF_CONTEXT_* marker at or after `i` is (chain.size() if
// none). Four ips per step with one branch: a branch per ip made this scan,
// over every call's ~30 user ips, 8 % of the reading thread's time.
inline size_t NextMarker(absl::Span<const uint64_t> chain, size_t i) {
  const uint64_t* p = chain.data();
  const size_t n = chain.size();
  for (; i + 4 <= n; i += 4) {
    if ((p[i] >= perf::kContextMax) | (p[i + 1] >= perf::kContextMax) |
        (p[i + 2] >= perf::kContextMax) | (p[i + 3] >= perf::kContextMax)) {
      break;
    }
  }
  for (; i < n; ++i) {
    if (p[i] >= perf::kContextMax) return i;
  }
  return n;
}

// The user ips of `chain`, leaf first. Chains without any marker are taken
// as all-user. A chain's user ips are nearly always one run (after its
// PERF_CONTEXT_USER marker): that run is returned in place, as a part of
// `chain`; only a chain with several user runs is copied, into `scratch`.
// Called for every sample, so the common case copies nothing.
inline absl::Span<const uint64_t> UserFrames(absl::Span<const uint64_t> chain,
                                             std::vector<uint64_t>* scratch) {
  size_t begin = 0, end = 0;  // the user run found so far
  int runs = 0;
  bool user = true;
  size_t start = 0;  // where the current segment (after the last marker) starts
  while (true) {
    const size_t i = NextMarker(chain, start);
    // [start, i) is a segment of ips in one context.
    if (user && i > start) {
      if (++runs > 1) break;
      begin = start;
      end = i;
    }
    if (i == chain.size()) break;
    user = chain[i] == perf::kContextUser;
    start = i + 1;
  }
  if (runs <= 1) return chain.subspan(begin, end - begin);
  scratch->clear();
  user = true;
  for (uint64_t ip : chain) {
    if (ip >= perf::kContextMax) {
      user = (ip == perf::kContextUser);
      continue;
    }
    if (user) scratch->push_back(ip);
  }
  return *scratch;
}

}  // namespace pageblame::decode

#endif  // PAGEBLAME_DECODE_CALLCHAIN_H_
