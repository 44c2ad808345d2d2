// The exit-code contract of every pageblame command, in one place:
//   0  answered;
//   1  an input file or stream cannot be read or parsed (the message names
//      the file and the byte offset or line), or the output cannot be written;
//   2  usage: an unknown option or command, a malformed address, time or pid,
//      a --pid not in the trace, a time outside the trace.
// Usage errors are made with UsageError() (base/usage_error.h: a status
// carrying a marker), so that no reader's status code is mistaken for one:
// every other error is 1.
//
//   if (bad) return UsageError("bad --pid 'x': expected a number");
//   return ExitCodeFor(status);   // 1 or 2
#ifndef PAGEBLAME_CLI_USAGE_H_
#define PAGEBLAME_CLI_USAGE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "processor/base/usage_error.h"

namespace pageblame::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 1;
inline constexpr int kExitUsage = 2;

using ::pageblame::IsUsage;
using ::pageblame::UsageError;
int ExitCodeFor(const absl::Status& s);

// Runs a command; an exception that escapes it (a library's, or
// std::bad_alloc) becomes "pageblame: internal error: what" on stderr and
// exit 1 instead of std::terminate's abort.
int RunGuarded(const std::function<int()>& run);

// The candidate closest to `word` by edit distance, if it is close enough to
// be a likely typo ("--histroy" -> "--history"), else "".
std::string Closest(absl::string_view word, const std::vector<std::string>& candidates);
// " (did you mean --history?)" or "".
std::string DidYouMean(absl::string_view word, const std::vector<std::string>& candidates);

}  // namespace pageblame::cli

#endif  // PAGEBLAME_CLI_USAGE_H_
