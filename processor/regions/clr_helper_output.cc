#include "processor/regions/clr_helper_output.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace pageblame::regions {
namespace {

absl::Status Range(const TextLines& text, int n, absl::string_view a, absl::string_view b, uint64_t* start,
                   uint64_t* end) {
  if (a.empty() || b.empty() || a.size() > 16 || b.size() > 16 || !absl::SimpleHexAtoi(a, start) ||
      !absl::SimpleHexAtoi(b, end) || *end <= *start)
    return text.Error(n, absl::StrCat("expected START and END in hex with START < END, got '", a, "' '", b, "'"));
  return absl::OkStatus();
}

absl::Status Record(const TextLines& text, int n, const std::vector<absl::string_view>& f, ClrHelperOutput& out,
                    int* records, int* targets, int* runtimes) {
  auto want = [&](size_t count) {
    return f.size() == count ? absl::OkStatus()
                             : text.Error(n, absl::StrCat("a '", f[0], "' record has ", count, " fields, got ",
                                                          f.size(), ": ", TextLines::Quote(text.line(n))));
  };
  if (f[0] == "range") {
    if (absl::Status s = want(5); !s.ok()) return s;
    ClrRange r{0, 0, std::string(f[3]), std::string(f[4]), n};
    if (absl::Status s = Range(text, n, f[1], f[2], &r.start, &r.end); !s.ok()) return s;
    if (r.kind.empty()) return text.Error(n, "a range without its kind");
    out.ranges.push_back(std::move(r));
    ++*records;
  } else if (f[0] == "image") {
    if (absl::Status s = want(4); !s.ok()) return s;
    ClrImage i{0, 0, std::string(f[3]), n};
    if (absl::Status s = Range(text, n, f[1], f[2], &i.start, &i.end); !s.ok()) return s;
    out.images.push_back(std::move(i));
    ++*records;
  } else if (f[0] == "maps") {
    if (absl::Status s = want(2); !s.ok()) return s;
    absl::StrAppend(&out.maps, f[1], "\n");
  } else if (f[0] == "warning") {
    if (absl::Status s = want(2); !s.ok()) return s;
    out.warnings.emplace_back(f[1]);
  } else if (f[0] == "target") {
    if (absl::Status s = want(3); !s.ok()) return s;
    if (f[1] != "core" && f[1] != "pid") return text.Error(n, "the target is 'core' or 'pid'");
    out.live = f[1] == "pid";
    out.target = std::string(f[2]);
    ++*targets;
  } else if (f[0] == "runtime") {
    if (absl::Status s = want(5); !s.ok()) return s;
    out.runtime = std::string(f[1]);
    out.build_id = std::string(f[2]);
    out.dac = std::string(f[3]);
    out.clrmd_version = std::string(f[4]);
    ++*runtimes;
  } else {
    return text.Error(n, absl::StrCat("unknown record ", TextLines::Quote(text.line(n))));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ClrHelperOutput> ClrHelperOutputParser::Parse(const TextLines& text) {
  if (text.size() < 1 || text.line(1) != kMagic)
    return text.FileError(absl::StrCat("not the dotnet-regions helper's output (first line '", kMagic, "' expected)"));
  ClrHelperOutput out;
  int records = 0, targets = 0, runtimes = 0;
  for (int n = 2; n <= text.size(); ++n) {
    const std::vector<absl::string_view> f = absl::StrSplit(text.line(n), '\t');
    if (f[0] == "end") {
      int count = -1;
      if (f.size() != 2 || !absl::SimpleAtoi(f[1], &count) || count != records)
        return text.Error(n, absl::StrCat("the end record says ", f.size() == 2 ? f[1] : "?",
                                          " ranges and images, the output has ", records));
      if (n != text.size()) return text.Error(n + 1, "a record after the end record");
      if (targets != 1 || runtimes != 1)
        return text.Error(n, "expected one target and one runtime record before the end");
      return out;
    }
    if (absl::Status s = Record(text, n, f, out, &records, &targets, &runtimes); !s.ok()) return s;
  }
  return text.Error(text.size(), "the output ends without its end record (the helper stopped midway?)");
}

}  // namespace pageblame::regions
