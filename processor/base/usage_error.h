// A usage mistake as a status: what the caller asked for cannot be meant
// (a malformed time, a pid the trace does not have), as opposed to an input
// that cannot be read. Every layer that checks a request (session/, cli/,
// the plugin) makes them here; the CLI turns them into exit 2
// (cli/usage.h), every other error into exit 1. A marker payload, not the
// status code, tells them apart: readers return InvalidArgument too.
//
//   if (bad) return UsageError("bad --pid 'x': expected a number");
//   if (IsUsage(status)) ...
#ifndef PAGEBLAME_BASE_USAGE_ERROR_H_
#define PAGEBLAME_BASE_USAGE_ERROR_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace pageblame {

// A usage mistake, with `message` as said to the user.
absl::Status UsageError(absl::string_view message);
bool IsUsage(const absl::Status& s);

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_USAGE_ERROR_H_
