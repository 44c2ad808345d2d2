#include "processor/replay/call_check.h"

#include "processor/base/format.h"

#include <sys/mman.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif

namespace pageblame::replay {
namespace {

using decode::Syscall;

constexpr uint64_t kPageMask = 4095;

std::string Hex(uint64_t v) { return absl::StrFormat("0x%x", v); }

absl::Status Impossible(Syscall sc, absl::string_view what) {
  return absl::DataLossError(
      absl::StrCat(absl::string_view(decode::SyscallName(sc).data(), decode::SyscallName(sc).size()),
                   " succeeded with ", what));
}

// The length a call covers, rounded up to `unit` (a power of two), or
// false if that wraps.
bool RoundUp(uint64_t len, uint64_t unit, uint64_t* out) {
  if (len > UINT64_MAX - (unit - 1)) return false;
  *out = (len + unit - 1) & ~(unit - 1);
  return true;
}

// Checks that [start, start + len rounded up to `unit`) lies in user space
// (the kernel's checks against TASK_SIZE).
absl::Status CheckRange(Syscall sc, const char* start_name, uint64_t start, uint64_t len,
                        uint64_t unit = kPageMask + 1) {
  if (start & kPageMask) {
    return Impossible(sc, absl::StrCat("an unaligned ", start_name, " ", Hex(start)));
  }
  uint64_t rounded;
  if (!RoundUp(len, unit, &rounded) || start >= kUserSpaceEnd ||
      rounded > kUserSpaceEnd - start) {
    return Impossible(sc, absl::StrCat("the range ", start_name, " ", Hex(start), " + length ",
                                       Hex(len), ", which leaves user space"));
  }
  return absl::OkStatus();
}

// mmap's page size: 4 KiB, or the huge page size in the flags (MmapLength).
uint64_t MmapUnit(uint64_t flags) {
  if (!(flags & MAP_HUGETLB)) return kPageMask + 1;
  const uint64_t shift = (flags >> MAP_HUGE_SHIFT) & 0x3f;
  return shift ? (uint64_t{1} << shift) : (uint64_t{2} << 20);
}

absl::Status CheckMmap(const uint64_t a[6], int64_t ret) {
  if (a[1] == 0) return Impossible(Syscall::kMmap, "length 0");
  return CheckRange(Syscall::kMmap, "address", static_cast<uint64_t>(ret), a[1], MmapUnit(a[3]));
}

absl::Status CheckMremap(const uint64_t a[6], int64_t ret) {
  if (a[2] == 0) return Impossible(Syscall::kMremap, "new length 0");
  // old_len 0 (a shared mapping duplicated) covers no old pages.
  if (absl::Status s = CheckRange(Syscall::kMremap, "old address", a[0], a[1]); !s.ok()) return s;
  return CheckRange(Syscall::kMremap, "returned address", static_cast<uint64_t>(ret), a[2]);
}

}  // namespace

absl::Status CheckCall(Syscall sc, const uint64_t a[6], int64_t ret) {
  switch (sc) {
    case Syscall::kMmap:
      return decode::IsErrorReturn(ret) ? absl::OkStatus() : CheckMmap(a, ret);
    case Syscall::kMremap:
      return decode::IsErrorReturn(ret) ? absl::OkStatus() : CheckMremap(a, ret);
    case Syscall::kMunmap:
      if (ret != 0) return absl::OkStatus();
      if (a[1] == 0) return Impossible(sc, "length 0");
      return CheckRange(sc, "address", a[0], a[1]);
    case Syscall::kMprotect:
    case Syscall::kPkeyMprotect:
    case Syscall::kMadvise:
      // Length 0 succeeds and changes nothing. (mprotect's ENOMEM on a
      // valid range may have changed a prefix of it, protect_rule.cc; on an
      // invalid one it changed nothing: IsUserRange.)
      return ret == 0 ? CheckRange(sc, "start", a[0], a[1]) : absl::OkStatus();
    case Syscall::kBrk:
      // brk answers the break, moved or not: always a user address.
      if (static_cast<uint64_t>(ret) >= kUserSpaceEnd) {
        return Impossible(sc, absl::StrCat("the break ", Hex(static_cast<uint64_t>(ret))));
      }
      return absl::OkStatus();
    case Syscall::kCount:
      break;
  }
  return absl::OkStatus();
}

bool IsUserRange(uint64_t start, uint64_t len) {
  return CheckRange(Syscall::kMprotect, "start", start, len).ok();
}

absl::Status CheckMappingRecord(uint64_t start, uint64_t len) {
  if (len > UINT64_MAX - kPageMask - start) {
    return absl::DataLossError(absl::StrCat("a mapping record of ", Hex(start), " + length ",
                                            Hex(len), " wraps the address space"));
  }
  return absl::OkStatus();
}

}  // namespace pageblame::replay
