#include "processor/cli/damage_warnings.h"

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "processor/report/syscall_format.h"

namespace pageblame::cli {
namespace {

// Each span is said on its own line, up to this many (a trace damaged all
// over would otherwise bury the answer).
constexpr size_t kSpansSaid = 5;

std::string Counted(uint64_t n, const char* what) {
  return absl::StrCat(n, " ", what, n == 1 ? "" : "s");
}

void WarnUnparsed(const index::TraceStats& s) {
  for (size_t i = 0; i < s.unparsed.size() && i < kSpansSaid; ++i) {
    const index::UnparsedSpan& u = s.unparsed[i];
    std::string what;
    if (u.samples) what = Counted(u.samples, "sample");
    if (u.records) absl::StrAppend(&what, what.empty() ? "" : " and ", Counted(u.records, "record"));
    // 0: from the start, to the end of the trace (UnparsedSpan).
    const uint64_t from = u.t_from ? u.t_from : s.first_time;
    const uint64_t to = u.t_to ? u.t_to : s.last_time;
    std::fprintf(stderr,
                 "pageblame: warning: %s could not be parsed between %s and %s; pages changed "
                 "then may be misattributed\n",
                 what.c_str(), report::FormatTime(from).c_str(), report::FormatTime(to).c_str());
  }
  if (s.unparsed.size() > kSpansSaid) {
    std::fprintf(stderr, "pageblame: warning: and %zu more runs of records that could not be "
                 "parsed\n", s.unparsed.size() - kSpansSaid);
  }
  if (!s.unparsed.empty()) {
    std::fprintf(stderr, "pageblame: the first could not be parsed because: %s\n",
                 s.first_unparsed.c_str());
  }
}

void WarnImpossible(const index::TraceStats& s) {
  if (s.impossible_calls == 0) return;
  std::fprintf(stderr,
               "pageblame: warning: %s with values the kernel cannot have returned, between %s "
               "and %s, not replayed (the trace is damaged; the first: %s); pages changed then "
               "may be misattributed\n",
               Counted(s.impossible_calls, "call").c_str(),
               report::FormatTime(s.impossible_from).c_str(),
               report::FormatTime(s.impossible_to).c_str(), s.first_impossible.c_str());
}

}  // namespace

void WarnAboutDamage(const index::TraceStats& stats) {
  WarnUnparsed(stats);
  WarnImpossible(stats);
}

}  // namespace pageblame::cli
