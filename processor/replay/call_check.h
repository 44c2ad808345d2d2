// Checks a completed memory call's values against what the kernel can have
// done before replay trusts them. A call whose exit says it succeeded with
// values the kernel refuses or never returns (an mmap whose length wraps the
// address space, an unaligned address, one above user space) comes from a
// damaged trace, not from the program: replaying it would make regions that
// end below their start or split pages (issue 21). Such a call is skipped and
// counted (TraceStats::impossible_calls), never applied.
//
//   if (absl::Status s = CheckCall(Syscall::kMmap, args, ret); !s.ok()) skip;  // s says why
//
// The rules mirror mm/mmap.c (do_mmap, __do_munmap, brk), mm/mremap.c and
// mm/mprotect.c, mm/madvise.c: EINVAL for an unaligned start, a zero
// length where it is refused; ENOMEM (or EINVAL) for a range that wraps or
// leaves user space. Failed calls are not checked: they change nothing
// (mprotect's partial ENOMEM is checked as a success over its range).
#ifndef PAGEBLAME_REPLAY_CALL_CHECK_H_
#define PAGEBLAME_REPLAY_CALL_CHECK_H_

#include <cstdint>

#include "absl/status/status.h"
#include "processor/decode/syscall_event.h"

namespace pageblame::replay {

// No user address is at or above this: 57 bits is x86-64's five-level paging
// (TASK_SIZE_MAX, 56 bits of user space) and arm64's 52 with room to spare.
inline constexpr uint64_t kUserSpaceEnd = uint64_t{1} << 57;

// OK if the kernel can have completed `syscall` with `args` (the enter's six
// arguments) and return value `ret`; DataLoss saying which value is
// impossible otherwise.
absl::Status CheckCall(decode::Syscall syscall, const uint64_t args[6], int64_t ret);

// True if [start, start + len rounded up to pages) is a page-aligned range
// of user space (what mm/mprotect.c checks before changing anything).
bool IsUserRange(uint64_t start, uint64_t len);

// CheckCall for a mapping perf reported (PERF_RECORD_MMAP/MMAP2): OK if
// [start, start + len) rounded out to pages does not wrap. (perf reports the
// kernel's [vsyscall] page at 0xffffffffff600000, so no user-space bound.)
absl::Status CheckMappingRecord(uint64_t start, uint64_t len);

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_CALL_CHECK_H_
