#include "processor/analysis/region_label.h"

#include <sys/mman.h>

#include "absl/strings/str_cat.h"

namespace pageblame::analysis {

std::string RegionLabel(const index::TraceIndex& idx, const index::Version& v) {
  std::string_view path = idx.strings().Get(v.attrs.path);
  if (!path.empty()) return std::string(path);
  if (v.origin.valid()) {
    const index::CallEvent& ev = idx.event(v.origin);
    if (ev.syscall == decode::Syscall::kMmap && !(ev.args[3] & MAP_ANONYMOUS)) {
      return absl::StrCat("[file fd=", static_cast<int32_t>(ev.args[4]), "]");
    }
  }
  return "[anon]";
}

}  // namespace pageblame::analysis
