#include "processor/render/rss_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "processor/base/format.h"
#include "processor/index/trace_index.h"

namespace pageblame::render {

std::string HumanRss(std::optional<uint64_t> bytes) { return bytes ? HumanBytes(*bytes) : "?"; }

std::string JsonRss(std::optional<uint64_t> bytes) { return bytes ? absl::StrCat(*bytes) : "null"; }

std::string DescribeSnapshot(const residency::ResidencySnapshot* s, uint64_t at) {
  if (s == nullptr) return "no residency snapshot of this process at or before this moment";
  std::string out = absl::StrCat("snapshot at ", FormatTime(s->time), ", ", residency::ReasonName(s->reason));
  if (at != index::kEndOfTrace) {
    absl::StrAppend(&out, absl::StrFormat(", %.3f s before the moment asked", (at - s->time) / 1e9));
  }
  return out;
}

}  // namespace pageblame::render
