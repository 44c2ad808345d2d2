// Human-readable forms of protections, flags and calls, matching what
// perf script and strace print so users can grep across tools (times, hex
// and byte counts: base/format.h).
//
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

std::string ProtString(uint32_t prot);
// ProtString, or "???" when the trace does not know the prot.
std::string RegionProt(const index::RegionAttrs& attrs);
std::string ProtFlags(uint32_t prot);
std::string MapFlags(uint32_t flags);
std::string MremapFlags(uint32_t flags);
// "MADV_DONTNEED", or the number for an advice this build does not know.
std::string MadviseAdvice(uint64_t advice);
std::string DescribeCall(const index::CallEvent& ev);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_SYSCALL_FORMAT_H_
