// libFuzzer target: an ELF core file (program headers, PT_LOAD segments,
// the NT_FILE note; both classes and byte orders, PN_XNUM) read as a region
// table by CoreFileParser, from memory (ParseBytes) and from a descriptor
// (ParseFile). The two must agree; a table must be what the core checks
// (core_address_check.h) promise: regions non-empty, page-aligned, inside the
// user address range of the core's machine (or x86-64's [vsyscall] page),
// sorted and disjoint.
#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>

#include "absl/status/statusor.h"
#include "processor/regions/core_address_check.h"
#include "processor/regions/core_file_parser.h"
#include "processor/regions/region.h"
#include "tests/fuzz/mem_file.h"

namespace {

using pageblame::regions::CoreAddressCheck;
using pageblame::regions::kPageSize;
using pageblame::regions::Region;
using pageblame::regions::RegionTable;

[[noreturn]] void Fail(const char* what, const Region& r) {
  std::fprintf(stderr, "core_file: %s: [0x%llx, 0x%llx) line %d\n", what,
               static_cast<unsigned long long>(r.start), static_cast<unsigned long long>(r.end),
               r.line);
  std::abort();
}

auto Key(const Region& r) {
  return std::tie(r.start, r.end, r.type, r.state, r.protect, r.usage, r.line);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using pageblame::regions::CoreFileParser;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<RegionTable> mem = CoreFileParser::ParseBytes(bytes, "fuzz.core");

  pageblame::fuzz::MemFile f(data, size);
  const int fd = ::open(f.path().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) std::abort();  // a broken setup, not a finding
  absl::StatusOr<RegionTable> file = CoreFileParser::ParseFile(fd, size, "fuzz.core");
  ::close(fd);

  if (mem.ok() != file.ok()) {
    std::fprintf(stderr, "core_file: memory and file disagree: %s / %s\n",
                 mem.status().ToString().c_str(), file.status().ToString().c_str());
    std::abort();
  }
  if (!mem.ok()) return 0;
  if (mem->regions.size() != file->regions.size()) std::abort();
  for (size_t i = 0; i < mem->regions.size(); ++i) {
    if (Key(mem->regions[i]) != Key(file->regions[i])) Fail("memory and file disagree", mem->regions[i]);
  }

  // A table parsed: the ELF header is there. e_machine at 18, in the core's byte order.
  const bool is64 = data[EI_CLASS] == ELFCLASS64;
  const bool big_endian = data[EI_DATA] == ELFDATA2MSB;
  const uint16_t machine = big_endian ? (data[18] << 8 | data[19]) : (data[19] << 8 | data[18]);
  const uint64_t user_end = CoreAddressCheck::UserAddressEnd(machine, is64);
  if (mem->regions.empty()) std::abort();  // documented: an error, not an empty table
  uint64_t prev_end = 0;
  for (const Region& r : mem->regions) {
    if (r.start >= r.end) Fail("empty or inverted region", r);
    if (r.start % kPageSize != 0 || r.end % kPageSize != 0) Fail("region not page-aligned", r);
    const bool vsyscall = machine == EM_X86_64 && r.start == CoreAddressCheck::kVsyscallPage &&
                          r.end == r.start + kPageSize;
    if (r.end > user_end && !vsyscall) Fail("region past the user address range", r);
    if (r.start < prev_end) Fail("regions overlap or are not sorted", r);
    prev_end = r.end;
  }
  return 0;
}
