#include "processor/analysis/syscall_format.h"

#include "processor/base/format.h"

#include <sys/mman.h>

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace pageblame::analysis {
namespace {

std::string FlagNames(uint64_t v, const std::vector<std::pair<uint64_t, const char*>>& names,
                      const char* zero) {
  std::vector<std::string> parts;
  for (const auto& [bit, name] : names) {
    if ((v & bit) == bit && bit != 0) {
      parts.push_back(name);
      v &= ~bit;
    }
  }
  if (v != 0) parts.push_back(absl::StrCat("0x", absl::Hex(v)));
  return parts.empty() ? zero : absl::StrJoin(parts, "|");
}

}  // namespace

std::string ProtString(uint32_t prot) {
  std::string s = "---";
  if (prot & PROT_READ) s[0] = 'r';
  if (prot & PROT_WRITE) s[1] = 'w';
  if (prot & PROT_EXEC) s[2] = 'x';
  return s;
}

std::string RegionProt(const index::RegionAttrs& attrs) {
  return attrs.prot_known ? ProtString(attrs.prot) : "???";
}

std::string ProtFlags(uint32_t prot) {
  return FlagNames(prot, {{PROT_READ, "PROT_READ"}, {PROT_WRITE, "PROT_WRITE"},
                          {PROT_EXEC, "PROT_EXEC"}, {PROT_GROWSDOWN, "PROT_GROWSDOWN"},
                          {PROT_GROWSUP, "PROT_GROWSUP"}},
                   "PROT_NONE");
}

std::string MapFlags(uint32_t flags) {
  // The mapping type is a 4-bit field (MAP_TYPE), not independent bits.
  static const char* kTypes[] = {"0", "MAP_SHARED", "MAP_PRIVATE", "MAP_SHARED_VALIDATE"};
  uint32_t type = flags & 0x0f;
  std::string out = type < 4 ? kTypes[type] : absl::StrCat("0x", absl::Hex(type));
  std::string rest = FlagNames(
      flags & ~0x0fu,
      {{MAP_FIXED, "MAP_FIXED"}, {MAP_ANONYMOUS, "MAP_ANONYMOUS"},
       {MAP_GROWSDOWN, "MAP_GROWSDOWN"}, {MAP_DENYWRITE, "MAP_DENYWRITE"},
       {MAP_EXECUTABLE, "MAP_EXECUTABLE"}, {MAP_LOCKED, "MAP_LOCKED"},
       {MAP_NORESERVE, "MAP_NORESERVE"}, {MAP_POPULATE, "MAP_POPULATE"},
       {MAP_NONBLOCK, "MAP_NONBLOCK"}, {MAP_STACK, "MAP_STACK"}, {MAP_HUGETLB, "MAP_HUGETLB"},
       {MAP_SYNC, "MAP_SYNC"}, {MAP_FIXED_NOREPLACE, "MAP_FIXED_NOREPLACE"},
       {0x40, "MAP_32BIT"}},
      "");
  return rest.empty() ? out : absl::StrCat(out, "|", rest);
}

std::string MremapFlags(uint32_t flags) {
  return FlagNames(flags, {{1, "MREMAP_MAYMOVE"}, {2, "MREMAP_FIXED"}, {4, "MREMAP_DONTUNMAP"}},
                   "0");
}

std::string MadviseAdvice(uint64_t advice) {
  // include/uapi/asm-generic/mman-common.h; glibc's headers lack the newest.
  static const std::pair<uint64_t, const char*> kNames[] = {
      {0, "MADV_NORMAL"},       {1, "MADV_RANDOM"},         {2, "MADV_SEQUENTIAL"},
      {3, "MADV_WILLNEED"},     {4, "MADV_DONTNEED"},       {8, "MADV_FREE"},
      {9, "MADV_REMOVE"},       {10, "MADV_DONTFORK"},      {11, "MADV_DOFORK"},
      {12, "MADV_MERGEABLE"},   {13, "MADV_UNMERGEABLE"},   {14, "MADV_HUGEPAGE"},
      {15, "MADV_NOHUGEPAGE"},  {16, "MADV_DONTDUMP"},      {17, "MADV_DODUMP"},
      {18, "MADV_WIPEONFORK"},  {19, "MADV_KEEPONFORK"},    {20, "MADV_COLD"},
      {21, "MADV_PAGEOUT"},     {22, "MADV_POPULATE_READ"}, {23, "MADV_POPULATE_WRITE"},
      {24, "MADV_DONTNEED_LOCKED"}, {25, "MADV_COLLAPSE"},  {100, "MADV_HWPOISON"},
      {101, "MADV_SOFT_OFFLINE"},
  };
  for (const auto& [value, name] : kNames) {
    if (value == advice) return name;
  }
  return absl::StrCat(advice);
}

std::string DescribeCall(const index::CallEvent& ev) {
  const uint64_t* a = ev.args;
  auto addr = [](uint64_t v) { return v == 0 ? std::string("NULL") : Hex(v); };
  std::string ret = decode::IsErrorReturn(ev.ret) ? absl::StrCat(ev.ret)
                                                  : Hex(static_cast<uint64_t>(ev.ret));
  switch (ev.syscall) {
    case decode::Syscall::kMmap:
      return absl::StrCat("mmap(addr=", addr(a[0]), ", len=", Hex(a[1]),
                          ", prot=", ProtFlags(static_cast<uint32_t>(a[2])),
                          ", flags=", MapFlags(static_cast<uint32_t>(a[3])),
                          ", fd=", static_cast<int32_t>(a[4]), ", off=", Hex(a[5]), ") = ", ret);
    case decode::Syscall::kMunmap:
      return absl::StrCat("munmap(addr=", Hex(a[0]), ", len=", Hex(a[1]), ") = ", ev.ret);
    case decode::Syscall::kBrk:
      return absl::StrCat("brk(", addr(a[0]), ") = ", ret);
    case decode::Syscall::kMremap:
      return absl::StrCat("mremap(old_addr=", Hex(a[0]), ", old_len=", Hex(a[1]),
                          ", new_len=", Hex(a[2]), ", flags=", MremapFlags(static_cast<uint32_t>(a[3])),
                          ", new_addr=", addr(a[4]), ") = ", ret);
    case decode::Syscall::kMprotect:
      return absl::StrCat("mprotect(start=", Hex(a[0]), ", len=", Hex(a[1]),
                          ", prot=", ProtFlags(static_cast<uint32_t>(a[2])), ") = ", ev.ret);
    case decode::Syscall::kPkeyMprotect:
      return absl::StrCat("pkey_mprotect(start=", Hex(a[0]), ", len=", Hex(a[1]),
                          ", prot=", ProtFlags(static_cast<uint32_t>(a[2])),
                          ", pkey=", static_cast<int32_t>(a[3]), ") = ", ev.ret);
    case decode::Syscall::kMadvise:
      return absl::StrCat("madvise(start=", Hex(a[0]), ", len=", Hex(a[1]),
                          ", advice=", MadviseAdvice(a[2]), ") = ", ev.ret);
    case decode::Syscall::kCount:
      break;
  }
  return "?";
}

}  // namespace pageblame::analysis
