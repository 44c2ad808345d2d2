#include "processor/regions/region.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace pageblame::regions {

void RegionTable::Skip(int line, absl::string_view reason) {
  ++skipped;
  if (static_cast<int>(skip_reasons.size()) < kMaxSkipReasons)
    skip_reasons.push_back(absl::StrCat(line, ": ", reason));
}

bool RegionTable::IsCommitted(const Region& r) const {
  if (has_state) return r.state == "MEM_COMMIT";
  // /proc maps and pmap: a mapping no access reaches ("---p") is a
  // reservation (the .NET GC's, the JVM's, glibc's arena tails, thread
  // stacks' guards), not memory in use.
  return !absl::StartsWith(r.protect, "---");
}

bool RegionTable::IsClaimed(const Region& r) const {
  return !has_state || (!r.state.empty() && r.state != "MEM_FREE");
}

}  // namespace pageblame::regions
