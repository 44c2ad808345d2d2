#include "processor/symbols/debug_section_limit.h"

#include <gelf.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/str_format.h"

namespace pageblame::symbols {
namespace {

// What a GNU-style .zdebug_* section claims: its first 12 bytes are "ZLIB"
// and the inflated size, big-endian (binutils' bfd/compress.c).
std::optional<uint64_t> ZdebugClaim(Elf_Scn* scn) {
  Elf_Data* raw = elf_rawdata(scn, nullptr);
  if (raw == nullptr || raw->d_buf == nullptr || raw->d_size < 12) return std::nullopt;
  const unsigned char* p = static_cast<const unsigned char*>(raw->d_buf);
  if (std::memcmp(p, "ZLIB", 4) != 0) return std::nullopt;
  uint64_t size = 0;
  for (int i = 4; i < 12; ++i) size = (size << 8) | p[i];
  return size;
}

// The inflated size a section claims; 0 if it is not compressed; nullopt if
// it says it is but its header cannot be read.
std::optional<uint64_t> ClaimOf(Elf_Scn* scn, const GElf_Shdr& shdr, const char* name) {
  if (shdr.sh_type == SHT_NOBITS) return 0;
  if ((shdr.sh_flags & SHF_COMPRESSED) != 0) {
    GElf_Chdr chdr;
    if (gelf_getchdr(scn, &chdr) == nullptr) return std::nullopt;
    return chdr.ch_size;
  }
  if (name != nullptr && std::strncmp(name, ".zdebug", 7) == 0) return ZdebugClaim(scn);
  return 0;
}

}  // namespace

uint64_t DebugSectionLimit::LimitFor(uint64_t file_size) {
  const uint64_t scaled =
      file_size > UINT64_MAX / kMaxRatio ? UINT64_MAX : file_size * kMaxRatio;
  return std::max(kFloorBytes, scaled);
}

absl::Status DebugSectionLimit::Check(Elf* elf, uint64_t file_size) {
  size_t strndx = 0;
  if (elf_getshdrstrndx(elf, &strndx) != 0) return absl::OkStatus();  // libdw finds nothing
  const uint64_t limit = LimitFor(file_size);
  uint64_t total = 0, largest = 0;
  const char* largest_name = "?";
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) continue;
    const char* name = elf_strptr(elf, strndx, shdr.sh_name);
    const std::optional<uint64_t> claim = ClaimOf(scn, shdr, name);
    if (!claim) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "compressed section %s has no readable compression header", name ? name : "?"));
    }
    total = *claim > UINT64_MAX - total ? UINT64_MAX : total + *claim;
    if (*claim > largest) {
      largest = *claim;
      largest_name = name ? name : "?";
    }
  }
  if (total <= limit) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrFormat(
      "compressed debug sections claim %u bytes in all (%s: %u), more than the %u allowed for "
      "a file of %u bytes (%ux its size, at least %u)",
      total, largest_name, largest, limit, file_size, kMaxRatio, kFloorBytes));
}

}  // namespace pageblame::symbols
