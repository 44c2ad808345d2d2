// Human-readable forms of times, protections, flags and calls, matching what
// perf script and strace print so users can grep across tools.
//
//   FormatTime(216083882731)         -> "216.083882"  (perf script: truncated µs)
//   ProtString(PROT_READ|PROT_WRITE) -> "rw-"
//   ProtFlags(3)                     -> "PROT_READ|PROT_WRITE"
//   MapFlags(0x22)                   -> "MAP_PRIVATE|MAP_ANONYMOUS"
//   DescribeCall(ev) -> "mmap(addr=NULL, len=0x100000, prot=PROT_READ|PROT_WRITE,
//                        flags=MAP_PRIVATE|MAP_ANONYMOUS, fd=-1, off=0x0) = 0x7f3bad120000"
#ifndef PAGEBLAME_ANALYSIS_SYSCALL_FORMAT_H_
#define PAGEBLAME_ANALYSIS_SYSCALL_FORMAT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "processor/index/timeline_types.h"

namespace pageblame::analysis {

std::string FormatTime(uint64_t ns);
// The same value as a JSON number (seconds, microsecond precision).
double TimeSeconds(uint64_t ns);
// Parses a time as perf script prints it ("216.083882") into the last
// nanosecond of that printed instant, so "--at T" includes events printed as T.
// "end" gives index::kEndOfTrace.
absl::StatusOr<uint64_t> ParseTime(const std::string& text);

std::string ProtString(uint32_t prot);
// ProtString, or "???" when the trace does not know the prot.
std::string RegionProt(const index::RegionAttrs& attrs);
std::string ProtFlags(uint32_t prot);
std::string MapFlags(uint32_t flags);
std::string MremapFlags(uint32_t flags);
// "MADV_DONTNEED", or the number for an advice this build does not know.
std::string MadviseAdvice(uint64_t advice);
std::string Hex(uint64_t v);
std::string HumanBytes(uint64_t bytes);
std::string DescribeCall(const index::CallEvent& ev);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_SYSCALL_FORMAT_H_
