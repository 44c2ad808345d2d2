#include "plugin/perf_frame_names.h"

namespace pageblame::plugin {

void PerfFrameNames::Note(uint32_t pid, absl::Span<const uint64_t> ips, Resolver resolve) {
  for (uint64_t ip : ips) {
    auto [it, inserted] = names_.try_emplace(std::make_pair(pid, ip));
    if (!inserted) continue;
    ++asked_;
    PerfFrame f;
    if (resolve(ip, &f)) it->second = std::move(f);
  }
}

const PerfFrame* PerfFrameNames::Find(uint32_t pid, uint64_t ip) const {
  auto it = names_.find(std::make_pair(pid, ip));
  return it == names_.end() || !it->second ? nullptr : &*it->second;
}

}  // namespace pageblame::plugin
