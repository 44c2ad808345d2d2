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

// Appends the user ips of `chain` (leaf first) to `out` (cleared first).
// Chains without any marker are taken as all-user.
inline void UserFrames(absl::Span<const uint64_t> chain, std::vector<uint64_t>* out) {
  out->clear();
  bool user = true;
  for (uint64_t ip : chain) {
    if (ip >= perf::kContextMax) {
      user = (ip == perf::kContextUser);
      continue;
    }
    if (user) out->push_back(ip);
  }
}

}  // namespace pageblame::decode

#endif  // PAGEBLAME_DECODE_CALLCHAIN_H_
