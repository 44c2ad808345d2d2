#include "processor/symbols/debug_section_limit.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"
#include "processor/symbols/elf_handle.h"
#include "processor/symbols/inline_resolver.h"
#include "processor/symbols/raw_elf_for_test.h"
#include "processor/symbols/test_util.h"

namespace pageblame::symbols {
namespace {

using testing::RawElf;

// An SHF_COMPRESSED section's bytes: the compression header, then (not
// valid zlib: nothing may get as far as inflating it) a few bytes.
std::string CompressedBytes(uint64_t claimed) {
  Elf64_Chdr chdr{};
  chdr.ch_type = ELFCOMPRESS_ZLIB;
  chdr.ch_size = claimed;
  chdr.ch_addralign = 1;
  return std::string(reinterpret_cast<const char*>(&chdr), sizeof(chdr)) + std::string(64, 'x');
}

// A GNU .zdebug section: "ZLIB", the size big-endian, then the zlib stream.
std::string ZdebugBytes(uint64_t claimed) {
  std::string s = "ZLIB";
  for (int i = 7; i >= 0; --i) s.push_back(static_cast<char>(claimed >> (8 * i)));
  return s + std::string(64, 'x');
}

std::string WriteElf(const testing::TempDir& dir, const RawElf& elf) {
  const std::string path = dir.path() + "/bomb.debug";
  testing::WriteFile(path, elf.Build());
  return path;
}

TEST(DebugSectionLimitTest, LimitIsSixtyFourTimesTheFileWithAFloor) {
  EXPECT_EQ(DebugSectionLimit::LimitFor(1000), DebugSectionLimit::kFloorBytes);
  EXPECT_EQ(DebugSectionLimit::LimitFor(uint64_t{10} << 20), uint64_t{640} << 20);
  EXPECT_EQ(DebugSectionLimit::LimitFor(UINT64_MAX), UINT64_MAX);
}

TEST(DebugSectionLimitTest, ModestClaimsPass) {
  testing::TempDir dir;
  RawElf elf;
  elf.AddSection(".debug_info", SHT_PROGBITS, SHF_COMPRESSED, CompressedBytes(1 << 20));
  elf.AddSection(".zdebug_line", SHT_PROGBITS, 0, ZdebugBytes(1 << 20));
  elf.AddSection(".debug_str", SHT_PROGBITS, 0, "plain");
  absl::StatusOr<ElfHandle> h = ElfHandle::Open(WriteElf(dir, elf));
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_TRUE(DebugSectionLimit::Check(h->elf(), h->file_size()).ok());
}

// The fuzz campaign's bomb: a small file whose .debug_info says it
// inflates to 2 GiB (libdw allocated and inflated it: 2.03 GiB, 7 s).
TEST(DebugSectionLimitTest, TwoGibClaimIsRefusedByName) {
  testing::TempDir dir;
  RawElf elf;
  elf.AddSection(".debug_info", SHT_PROGBITS, SHF_COMPRESSED, CompressedBytes(uint64_t{2} << 30));
  absl::StatusOr<ElfHandle> h = ElfHandle::Open(WriteElf(dir, elf));
  ASSERT_TRUE(h.ok()) << h.status();
  absl::Status s = DebugSectionLimit::Check(h->elf(), h->file_size());
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find(".debug_info: 2147483648"), std::string::npos) << s;
}

TEST(DebugSectionLimitTest, ZdebugClaimsCountToo) {
  testing::TempDir dir;
  RawElf elf;
  elf.AddSection(".zdebug_info", SHT_PROGBITS, 0, ZdebugBytes(uint64_t{1} << 40));
  absl::StatusOr<ElfHandle> h = ElfHandle::Open(WriteElf(dir, elf));
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_FALSE(DebugSectionLimit::Check(h->elf(), h->file_size()).ok());
}

// Claims that are fine one by one but not together.
TEST(DebugSectionLimitTest, ClaimsAddUp) {
  testing::TempDir dir;
  RawElf elf;
  for (const char* name : {".debug_info", ".debug_line", ".debug_str"}) {
    elf.AddSection(name, SHT_PROGBITS, SHF_COMPRESSED, CompressedBytes(uint64_t{30} << 20));
  }
  absl::StatusOr<ElfHandle> h = ElfHandle::Open(WriteElf(dir, elf));
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_FALSE(DebugSectionLimit::Check(h->elf(), h->file_size()).ok());
}

TEST(DebugSectionLimitTest, InlineResolverSkipsTheFileAndSaysWhy) {
  testing::TempDir dir;
  RawElf elf;
  elf.AddSection(".debug_info", SHT_PROGBITS, SHF_COMPRESSED, CompressedBytes(uint64_t{2} << 30));
  DsoLocation loc;
  loc.debug_path = WriteElf(dir, elf);
  std::string refused;
  EXPECT_EQ(InlineResolver::Open(loc, false, &refused), nullptr);
  EXPECT_EQ(refused.rfind(loc.debug_path + ": compressed debug sections claim", 0), 0u) << refused;
}

}  // namespace
}  // namespace pageblame::symbols
