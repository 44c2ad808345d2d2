#include "processor/session/time_spec.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "processor/base/format.h"
#include "processor/base/usage_error.h"

namespace pageblame::session {
namespace {

constexpr uint64_t kNsPerSecond = 1000000000;

// "216.083882" as nanoseconds, and how many decimals were typed. `typed`:
// the whole argument as the user gave it ("-216.083882"), for messages.
absl::StatusOr<uint64_t> Seconds(const std::string& text, const std::string& typed, const std::string& flag,
                                 size_t* decimals) {
  const std::vector<std::string> parts = absl::StrSplit(text, '.');
  uint64_t secs = 0, frac = 0;
  bool ok = parts.size() <= 2 && !parts[0].empty() &&
            parts[0].find_first_not_of("0123456789") == std::string::npos &&
            absl::SimpleAtoi(parts[0], &secs);
  const size_t digits = parts.size() == 2 ? parts[1].size() : 0;
  if (ok && parts.size() == 2) {
    ok = digits >= 1 && digits <= 9 && parts[1].find_first_not_of("0123456789") == std::string::npos &&
         absl::SimpleAtoi(parts[1], &frac);
  }
  if (!ok) {
    return UsageError(absl::StrCat("bad ", flag, " '", typed,
                                   "': expected seconds as perf script prints them (216.083882), "
                                   "+S after the trace's start, -S before its end, 'end' or 'peak'"));
  }
  // The largest time a u64 of ns holds, with room for what callers add.
  if (secs > (std::numeric_limits<uint64_t>::max() - kNsPerSecond) / kNsPerSecond) {
    return UsageError(absl::StrCat("bad ", flag, " '", typed, "': too large for perf's clock"));
  }
  uint64_t scale = 1;
  for (size_t i = digits; i < 9; ++i) scale *= 10;
  *decimals = digits;
  return secs * kNsPerSecond + frac * scale;
}

// A moment before the index was thinned (record --max-size) has no whole
// state kept: said, never answered from what is left.
absl::StatusOr<uint64_t> NotThinned(const TimeSpec& spec, const index::TraceIndex& idx, uint64_t at) {
  const index::TraceStats& s = idx.stats();
  if (s.thinned_before == 0 || at >= s.thinned_before) return at;
  return UsageError(absl::StrCat("time ", spec.text, " (", FormatTime(at),
                                 ") is before ", FormatTime(s.thinned_before),
                                 ", where record --max-size thinned this recording's history (",
                                 s.thinned_calls, " calls of regions gone by then are not kept): ask at ",
                                 FormatTime(s.thinned_before), " or later"));
}

}  // namespace

absl::StatusOr<TimeSpec> ParseTimeSpec(const std::string& text, const std::string& flag) {
  TimeSpec t;
  t.text = text;
  if (text == "end") return t;
  if (text == "peak") {
    t.kind = TimeSpec::Kind::kPeak;
    return t;
  }
  std::string number = text;
  t.kind = TimeSpec::Kind::kAbsolute;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    t.kind = text[0] == '+' ? TimeSpec::Kind::kFromStart : TimeSpec::Kind::kBeforeEnd;
    number = text.substr(1);
  }
  size_t decimals = 0;
  absl::StatusOr<uint64_t> ns = Seconds(number, text, flag, &decimals);
  if (!ns.ok()) return ns.status();
  t.ns = *ns;
  // perf script prints times truncated to µs: an event printed as T happened
  // in [T, T + 1 µs), so an instant typed to the µs means its whole µs. An
  // offset is a length of time: taken as typed.
  if (t.kind == TimeSpec::Kind::kAbsolute && decimals <= 6) t.ns += 999;
  return t;
}

absl::StatusOr<uint64_t> ResolveTime(const TimeSpec& spec, const index::TraceIndex& idx,
                                     const std::function<uint64_t()>& peak, uint64_t reached) {
  const uint64_t first = idx.stats().first_time, last = idx.stats().last_time;
  uint64_t at = 0;
  switch (spec.kind) {
    case TimeSpec::Kind::kEnd:
      return index::kEndOfTrace;
    case TimeSpec::Kind::kPeak:
      return NotThinned(spec, idx, peak());
    case TimeSpec::Kind::kAbsolute:
      at = spec.ns;
      break;
    case TimeSpec::Kind::kFromStart:
      at = spec.ns > std::numeric_limits<uint64_t>::max() - first ? std::numeric_limits<uint64_t>::max()
                                                                  : first + spec.ns;
      break;
    case TimeSpec::Kind::kBeforeEnd:
      at = spec.ns > last ? 0 : last - spec.ns;
      break;
  }
  // The trace's span as perf script prints it: [first µs, last µs + 1 µs).
  const uint64_t end = std::max(last, reached);
  const uint64_t lo = first - first % 1000, hi = end - end % 1000 + 999;
  if (at < lo || at > hi) {
    return UsageError(absl::StrCat(
        "time ", spec.text, " is outside the trace, which spans ", FormatTime(first), " to ",
        FormatTime(end), " (", FormatTime(end - first), " s); use a time in it, ",
        "+S from its start, -S before its end, 'end' or 'peak'"));
  }
  return NotThinned(spec, idx, at);
}

}  // namespace pageblame::session
