#include "processor/regions/nt_file_note.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/regions/core_builder_for_test.h"

namespace pageblame::regions {
namespace {

using ::testing::HasSubstr;

std::string Message(const absl::StatusOr<std::vector<FileMapping>>& s) {
  return std::string(s.status().message());
}

TEST(NtFileNoteTest, KernelLayout) {
  CoreBuilder b;
  std::string d = b.NtFile({{0x1000, 0x3000, 0}, {0x5000, 0x6000, 2}}, {"/bin/a", "/lib/b c.so"});
  absl::StatusOr<std::vector<FileMapping>> f = NtFileNote::Parse(d, 8, false);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->size(), 2u);
  EXPECT_EQ((*f)[0].start, 0x1000u);
  EXPECT_EQ((*f)[0].end, 0x3000u);
  EXPECT_EQ((*f)[0].path, "/bin/a");
  EXPECT_EQ((*f)[0].entry, 1);
  EXPECT_EQ((*f)[1].offset, 2 * 4096u);  // the kernel counts pages
  EXPECT_EQ((*f)[1].path, "/lib/b c.so");
}

TEST(NtFileNoteTest, GdbByteOffsetsAndCreatedumpPadding) {
  CoreBuilder b;
  // gdb: page size 1, offsets in bytes; createdump: zeros after the names.
  std::string d = b.NtFile({{0x1000, 0x2000, 0x1234}}, {"/x"}, 1) + std::string(4, '\0');
  absl::StatusOr<std::vector<FileMapping>> f = NtFileNote::Parse(d, 8, false);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)[0].offset, 0x1234u);
}

TEST(NtFileNoteTest, ThirtyTwoBitBigEndian) {
  CoreBuilder b(/*is64=*/false, /*big_endian=*/true);
  std::string d = b.NtFile({{0x8000, 0x9000, 1}}, {"/lib/libc.so.6"});
  absl::StatusOr<std::vector<FileMapping>> f = NtFileNote::Parse(d, 4, true);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)[0].start, 0x8000u);
  EXPECT_EQ((*f)[0].end, 0x9000u);
  EXPECT_EQ((*f)[0].offset, 4096u);
}

TEST(NtFileNoteTest, CountsAreCheckedAgainstTheNoteSize) {
  CoreBuilder b;
  EXPECT_THAT(Message(NtFileNote::Parse(b.Word(1), 8, false)), HasSubstr("too short"));
  // A count of 2^64 - 1 must not wrap the size check.
  std::string huge = b.Word(~uint64_t{0}) + b.Word(4096) + b.Word(0x1000) + b.Word(0x2000) + b.Word(0);
  EXPECT_THAT(Message(NtFileNote::Parse(huge, 8, false)), HasSubstr("room for 1"));
  std::string two = b.NtFile({{0x1000, 0x2000, 0}, {0x3000, 0x4000, 0}}, {"/a", "/b"});
  two[0] = 3;  // count 3, room for 2
  EXPECT_THAT(Message(NtFileNote::Parse(two, 8, false)), HasSubstr("count 3"));
}

TEST(NtFileNoteTest, BadEntriesAndMissingNames) {
  CoreBuilder b;
  EXPECT_THAT(Message(NtFileNote::Parse(b.NtFile({{0x2000, 0x2000, 0}}, {"/a"}), 8, false)),
              HasSubstr("entry 1: end 0x2000 is not above start 0x2000"));
  EXPECT_THAT(Message(NtFileNote::Parse(b.NtFile({{0x1000, 0x2000, 0}, {0x3000, 0x4000, 0}}, {"/a"}),
                                        8, false)),
              HasSubstr("2 entries but only 1 file names"));
  std::string unterminated = b.NtFile({{0x1000, 0x2000, 0}}, {"/a"});
  unterminated.pop_back();
  EXPECT_THAT(Message(NtFileNote::Parse(unterminated, 8, false)), HasSubstr("only 0 file names"));
  EXPECT_THAT(Message(NtFileNote::Parse(b.NtFile({{0x1000, 0x2000, ~uint64_t{0}}}, {"/a"}), 8, false)),
              HasSubstr("runs past 2^64"));
}

}  // namespace
}  // namespace pageblame::regions
