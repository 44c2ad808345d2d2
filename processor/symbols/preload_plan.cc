#include "processor/symbols/preload_plan.h"

#include <algorithm>
#include <numeric>

#include "processor/symbols/symbolizer.h"

namespace pageblame::symbols {

PreloadPlan PreloadPlan::Of(const MappingHistory& history) {
  PreloadPlan plan;
  for (const MappingHistory::Mapping& m : history.mappings()) {
    if (Symbolizer::MayHaveElf(m.path)) {
      plan.AddMapping(m.start, m.end - m.start, m.path, m.build_id);
    }
  }
  return plan;
}

void PreloadPlan::AddMapping(uint64_t start, uint64_t len, std::string_view path,
                             std::string_view build_id) {
  if (len == 0) return;
  auto [known, added] =
      dso_index_.try_emplace(std::make_pair(std::string(path), std::string(build_id)), dsos_.size());
  if (added) dsos_.push_back(Dso{std::string(path), std::string(build_id), 0});
  const size_t dso = known->second;
  const uint64_t end = start + len < start ? UINT64_MAX : start + len;
  // Every exec of a program maps the same ranges again: kept once.
  if (seen_.insert(std::make_tuple(start, end, dso)).second) mappings_.push_back(Mapping{start, end, dso});
}

std::vector<PreloadPlan::Dso> PreloadPlan::Needed(absl::Span<const uint64_t> ips) const {
  std::vector<uint64_t> sorted(ips.begin(), ips.end());
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::vector<size_t> frames(dsos_.size(), 0);
  for (const Mapping& m : mappings_) {
    frames[m.dso] += std::lower_bound(sorted.begin(), sorted.end(), m.end) -
                     std::lower_bound(sorted.begin(), sorted.end(), m.start);
  }
  std::vector<size_t> order(dsos_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return frames[a] > frames[b]; });
  std::vector<Dso> out;
  for (size_t i : order) {
    if (frames[i] == 0) break;
    out.push_back(dsos_[i]);
    out.back().frames = frames[i];
  }
  return out;
}

}  // namespace pageblame::symbols
