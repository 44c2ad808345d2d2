#include "processor/regions/region.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace pageblame::regions {

void RegionTable::Skip(int line, absl::string_view reason) {
  ++skipped;
  if (static_cast<int>(skip_reasons.size()) < kMaxSkipReasons)
    skip_reasons.push_back(absl::StrCat(line, ": ", reason));
}

namespace {

bool Committed(bool has_state, const std::string& state, const std::string& protect) {
  if (has_state) return state == "MEM_COMMIT";
  // /proc maps and pmap: a mapping no access reaches ("---p") is a
  // reservation (the .NET GC's, the JVM's, glibc's arena tails, thread
  // stacks' guards), not memory in use.
  return !absl::StartsWith(protect, "---");
}

bool Claimed(bool has_state, const std::string& state) {
  return !has_state || (!state.empty() && state != "MEM_FREE");
}

}  // namespace

bool RegionTable::IsCommitted(const Region& r) const { return Committed(has_state, r.state, r.protect); }
bool RegionTable::IsCommitted(const RegionText& t) const { return Committed(has_state, t.state, t.protect); }
bool RegionTable::IsClaimed(const Region& r) const { return Claimed(has_state, r.state); }
bool RegionTable::IsClaimed(const RegionText& t) const { return Claimed(has_state, t.state); }

}  // namespace pageblame::regions
