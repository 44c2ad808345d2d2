// Times a user gives (the CLI's --at, --from, --to; the plugin's at=), parsed
// before the trace is read (a typo fails fast) and resolved against it after:
//   216.083882   perf's seconds: everything perf script prints at or before
//                that instant (up to 6 decimals: to the end of that µs;
//                7 to 9 decimals: that nanosecond)
//   +12.5        seconds after the trace's first event
//   -2           seconds before its last event
//   end          the end of the trace (the default)
//   peak         when the selected processes had the most bytes mapped
//                (committed, for --by commit)
// A resolved time outside the trace is a usage error naming the trace's span.
// The span runs to the last memory call, or further when the recording is
// known to have gone on (a residency snapshot taken after the last call: an
// idle service still recorded); "-S" counts from the last memory call.
//
//   ASSIGN_OR_RETURN(TimeSpec at, ParseTimeSpec("+1.5"));
//   ASSIGN_OR_RETURN(uint64_t ns, ResolveTime(at, idx, peak));
#ifndef PAGEBLAME_SESSION_TIME_SPEC_H_
#define PAGEBLAME_SESSION_TIME_SPEC_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "processor/index/trace_index.h"

namespace pageblame::session {

struct TimeSpec {
  enum class Kind { kEnd, kAbsolute, kFromStart, kBeforeEnd, kPeak };
  Kind kind = Kind::kEnd;
  uint64_t ns = 0;   // kAbsolute: the instant; kFromStart/kBeforeEnd: the offset
  std::string text;  // as typed, for messages
};

// Syntax only; errors are usage errors (base/usage_error.h).
absl::StatusOr<TimeSpec> ParseTimeSpec(const std::string& text, const std::string& flag = "--at");
// The instant in the trace's clock (index::kEndOfTrace for kEnd). `peak` answers
// kPeak; it is only called for that kind. `reached`: when the recording is
// known to have still run (0: only its memory calls say).
absl::StatusOr<uint64_t> ResolveTime(const TimeSpec& spec, const index::TraceIndex& idx,
                                     const std::function<uint64_t()>& peak, uint64_t reached = 0);

}  // namespace pageblame::session

#endif  // PAGEBLAME_SESSION_TIME_SPEC_H_
