#include "processor/regions/text_encoding.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pageblame::regions {
namespace {

using ::testing::HasSubstr;

// "A\n€😀" in UTF-16LE: 'A', '\n', U+20AC, and U+1F600 as the surrogate pair D83D DE00.
const std::string kUtf16Le("A\0\n\0\xAC\x20\x3D\xD8\x00\xDE", 10);
const std::string kUtf8("A\n\xE2\x82\xAC\xF0\x9F\x98\x80");

std::string Swap16(std::string s) {
  for (size_t i = 0; i + 1 < s.size(); i += 2) std::swap(s[i], s[i + 1]);
  return s;
}

TEST(TextEncodingTest, Utf16LittleAndBigEndianWithMark) {
  absl::StatusOr<std::string> le = TextEncoding::ToUtf8("\xFF\xFE" + kUtf16Le, "t");
  ASSERT_TRUE(le.ok()) << le.status();
  EXPECT_EQ(*le, kUtf8);
  absl::StatusOr<std::string> be = TextEncoding::ToUtf8("\xFE\xFF" + Swap16(kUtf16Le), "t");
  ASSERT_TRUE(be.ok()) << be.status();
  EXPECT_EQ(*be, kUtf8);
}

TEST(TextEncodingTest, Utf8MarkIsDroppedAndPlainTextKept) {
  EXPECT_EQ(*TextEncoding::ToUtf8("\xEF\xBB\xBF" "0x1000\n", "t"), "0x1000\n");
  EXPECT_EQ(*TextEncoding::ToUtf8("0x1000\n", "t"), "0x1000\n");
  EXPECT_EQ(*TextEncoding::ToUtf8("", "t"), "");
  EXPECT_EQ(*TextEncoding::ToUtf8("\xFF\xFE", "t"), "");  // only the mark
}

TEST(TextEncodingTest, BrokenUtf16IsAnErrorWithTheLine) {
  absl::StatusOr<std::string> odd = TextEncoding::ToUtf8(std::string("\xFF\xFE" "A\0B", 5), "w.txt");
  ASSERT_FALSE(odd.ok());
  EXPECT_THAT(std::string(odd.status().message()), HasSubstr("w.txt: odd number of bytes (3"));
  // A high surrogate followed by 'B' on line 2.
  std::string lone("\xFF\xFE" "A\0\n\0\x3D\xD8" "B\0", 10);
  absl::StatusOr<std::string> s = TextEncoding::ToUtf8(lone, "w.txt");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(), "w.txt:2: invalid UTF-16LE: unpaired surrogate 0xD83D at byte 6");
  // A low surrogate first.
  s = TextEncoding::ToUtf8(std::string("\xFE\xFF\xDE\x00", 4), "w.txt");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("UTF-16BE: unpaired surrogate 0xDE00"));
  // A high surrogate at the very end.
  s = TextEncoding::ToUtf8(std::string("\xFF\xFE\x3D\xD8", 4), "w.txt");
  EXPECT_FALSE(s.ok());
}

TEST(TextEncodingTest, Utf16WithoutMarkIsRecognizedForTheHint) {
  EXPECT_TRUE(TextEncoding::LooksLikeUtf16WithoutBom(std::string(" \0 \0B\0a\0s\0e\0", 12)));
  EXPECT_TRUE(TextEncoding::LooksLikeUtf16WithoutBom(std::string("\0 \0 \0B\0a\0s\0e", 12)));
  EXPECT_FALSE(TextEncoding::LooksLikeUtf16WithoutBom("BaseAddress EndAddress+1"));
  EXPECT_FALSE(TextEncoding::LooksLikeUtf16WithoutBom(std::string("PERFILE2\0\0\0\0", 12)));
  EXPECT_FALSE(TextEncoding::LooksLikeUtf16WithoutBom(std::string("A\0", 2)));
}

}  // namespace
}  // namespace pageblame::regions
