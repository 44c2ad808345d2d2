// General text forms every stage prints: times as perf script prints them,
// hexadecimal, and byte counts in binary units.
//
//   FormatTime(216083882731)  -> "216.083882"  (perf script: truncated µs)
//   FormatTime(kEndOfTime)    -> "end"
//   ParseTime("216.083882")   -> 216083882999 (the last ns of that instant)
//   Hex(4096)                 -> "0x1000"
//   HumanBytes(1572864)       -> "1.5 MiB"
#ifndef PAGEBLAME_BASE_FORMAT_H_
#define PAGEBLAME_BASE_FORMAT_H_

#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/statusor.h"

namespace pageblame {

// A time meaning "the end": of a trace (index::kEndOfTrace), of anything.
inline constexpr uint64_t kEndOfTime = std::numeric_limits<uint64_t>::max();

std::string FormatTime(uint64_t ns);
// The same value as a JSON number (seconds, microsecond precision).
double TimeSeconds(uint64_t ns);
// Parses a time as perf script prints it ("216.083882") into the last
// nanosecond of that printed instant, so "--at T" includes events printed as T.
// "end" gives kEndOfTime.
absl::StatusOr<uint64_t> ParseTime(const std::string& text);

std::string Hex(uint64_t v);
std::string HumanBytes(uint64_t bytes);

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_FORMAT_H_
