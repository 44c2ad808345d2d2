#include "plugin/dlfilter_options.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "processor/base/status_macros.h"
#include "processor/regions/address.h"
#include "processor/regions/region_table_reader.h"

namespace pageblame::plugin {
namespace {

absl::Status Bad(const std::string& arg, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("bad --dlarg '", arg, "': ", why));
}

absl::Status AddPages(const std::string& arg, const std::string& value, DlfilterOptions* o) {
  for (absl::string_view piece : absl::StrSplit(value, ',')) {
    if (piece.empty()) return Bad(arg, "empty address in the list");
    absl::StatusOr<uint64_t> a = regions::ParseAddress(piece);
    if (!a.ok()) return Bad(arg, a.status().message());
    o->pages.push_back(*a);
  }
  return absl::OkStatus();
}

absl::Status AddRegions(const std::string& arg, const std::string& path, DlfilterOptions* o) {
  absl::StatusOr<regions::RegionTable> t = regions::RegionTableReader::DetectAndParse(path);
  if (!t.ok()) return Bad(arg, t.status().message());
  size_t before = o->regions.size();
  for (const regions::Region& r : t->regions) {
    // Free rows of a debugger table are not memory anyone can have created.
    if (!t->IsClaimed(r) || r.end <= r.start) continue;
    o->regions.push_back(RequestedRegion{r.start, r.end, path, r.line});
  }
  if (o->regions.size() == before) return Bad(arg, "the table lists no allocated region");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DlfilterOptions> ParseDlfilterArgs(const std::vector<std::string>& args) {
  DlfilterOptions o;
  for (const std::string& arg : args) {
    size_t eq = arg.find('=');
    if (eq == std::string::npos) {
      return Bad(arg, "expected KEY=VALUE (pages=, regions=, pid=, summary=, trace=, at=)");
    }
    const std::string key = arg.substr(0, eq);
    const std::string value = arg.substr(eq + 1);
    if (value.empty()) return Bad(arg, "empty value");
    if (key == "pages") {
      RETURN_IF_ERROR(AddPages(arg, value, &o));
    } else if (key == "regions") {
      RETURN_IF_ERROR(AddRegions(arg, value, &o));
    } else if (key == "pid") {
      uint32_t pid;
      if (!absl::SimpleAtoi(value, &pid)) return Bad(arg, "expected a process id");
      o.pid = pid;
    } else if (key == "summary") {
      if (value == "text") {
        o.summary = Summary::kText;
      } else if (value == "json") {
        o.summary = Summary::kJson;
      } else if (value == "none") {
        o.summary = Summary::kNone;
      } else {
        return Bad(arg, "expected text, json or none");
      }
    } else if (key == "trace") {
      o.trace = value;
    } else if (key == "at") {
      absl::StatusOr<session::TimeSpec> at = session::ParseTimeSpec(value, "at");
      if (!at.ok()) return Bad(arg, at.status().message());
      o.at = *at;
    } else {
      return Bad(arg, "unknown key (known: pages, regions, pid, summary, trace, at)");
    }
  }
  return o;
}

}  // namespace pageblame::plugin
