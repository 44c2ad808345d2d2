#include "processor/regions/core_address_check.h"

#include <elf.h>

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "processor/regions/region.h"

namespace pageblame::regions {
namespace {

// One range to check: [start, end), and how an error names it.
struct Span {
  uint64_t start, end;
  std::string name;
};

absl::Status CheckSpan(const Span& s, uint64_t user_end) {
  if (s.start % kPageSize != 0 || s.end % kPageSize != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s [0x%x, 0x%x) is not page-aligned (4 KiB pages)", s.name, s.start, s.end));
  }
  if (s.end > user_end) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s [0x%x, 0x%x) ends past the user address range (0x%x)", s.name,
                        s.start, s.end, user_end));
  }
  return absl::OkStatus();
}

// Two of `spans` that share an address, if any.
absl::Status CheckDisjoint(std::vector<Span> spans) {
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& b) { return a.start < b.start; });
  for (size_t i = 1; i < spans.size(); ++i) {
    if (spans[i].start < spans[i - 1].end) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s [0x%x, 0x%x) and %s [0x%x, 0x%x) overlap", spans[i - 1].name,
                          spans[i - 1].start, spans[i - 1].end, spans[i].name, spans[i].start,
                          spans[i].end));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckAll(const std::vector<Span>& spans, uint64_t user_end) {
  for (const Span& s : spans) {
    if (absl::Status st = CheckSpan(s, user_end); !st.ok()) return st;
  }
  return CheckDisjoint(spans);
}

}  // namespace

uint64_t CoreAddressCheck::UserAddressEnd(uint16_t machine, bool is64) {
  if (!is64) return uint64_t{1} << 32;
  switch (machine) {
    case EM_X86_64: return uint64_t{1} << 47;
    case EM_AARCH64: return uint64_t{1} << 52;
    default: return UINT64_MAX;
  }
}

absl::Status CoreAddressCheck::CheckLoads(const std::vector<LoadSegment>& loads,
                                          uint16_t machine, bool is64) {
  const uint64_t user_end = UserAddressEnd(machine, is64);
  std::vector<Span> spans;
  for (const LoadSegment& l : loads) {
    if (l.memsz == 0) continue;
    Span s{l.vaddr, l.vaddr + l.memsz, absl::StrFormat("PT_LOAD (program header %d)", l.index)};
    // [vsyscall] lies above user space on purpose, but is one page like any
    // other: listed twice, it is two regions at one address.
    const bool vsyscall = machine == EM_X86_64 && l.vaddr == kVsyscallPage && l.memsz == kPageSize;
    if (!vsyscall) {
      if (absl::Status st = CheckSpan(s, user_end); !st.ok()) return st;
    }
    spans.push_back(std::move(s));
  }
  return CheckDisjoint(std::move(spans));
}

absl::Status CoreAddressCheck::CheckFiles(const std::vector<FileMapping>& files,
                                          uint16_t machine, bool is64) {
  std::vector<Span> spans;
  for (const FileMapping& f : files) {
    spans.push_back({f.start, f.end, absl::StrFormat("NT_FILE entry %d (%s)", f.entry, f.path)});
  }
  return CheckAll(spans, UserAddressEnd(machine, is64));
}

}  // namespace pageblame::regions
