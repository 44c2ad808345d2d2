#include "processor/symbols/build_id.h"

#include <string>

#include "gtest/gtest.h"

namespace pageblame::symbols {
namespace {

std::string Bytes(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

TEST(BuildIdTest, HexIsLowercaseTwoDigitsPerByte) {
  EXPECT_EQ(BuildIdToHex(Bytes({0x00, 0x0f, 0xab, 0xff, 0x10})), "000fabff10");
  EXPECT_EQ(BuildIdToHex(""), "");
}

TEST(BuildIdTest, PerfPaddingIsDropped) {
  std::string id(20, '\x5a');
  std::string padded = id + std::string(4, '\0');
  EXPECT_EQ(NormalizeBuildId(padded), id);
  EXPECT_EQ(BuildIdToHex(padded), BuildIdToHex(id));
  EXPECT_EQ(BuildIdToHex(padded).size(), 40u);
  // Non-zero bytes past 20 are part of the id.
  std::string long_id = id + "\x01\x02";
  EXPECT_EQ(NormalizeBuildId(long_id), long_id);
  // A 20-byte id ending in zero bytes is left alone.
  std::string zero_tail = std::string(18, '\x11') + std::string(2, '\0');
  EXPECT_EQ(NormalizeBuildId(zero_tail), zero_tail);
}

TEST(BuildIdTest, Matches) {
  std::string id(20, '\x42');
  EXPECT_TRUE(BuildIdMatches(id, id));
  EXPECT_TRUE(BuildIdMatches(id + std::string(4, '\0'), id));
  std::string other = id;
  other[19] = '\x43';
  EXPECT_FALSE(BuildIdMatches(id, other));
  // A 16-byte (md5) id in perf's zero-padded 24-byte field.
  std::string md5(16, '\x77');
  EXPECT_TRUE(BuildIdMatches(md5 + std::string(8, '\0'), md5));
  EXPECT_FALSE(BuildIdMatches(md5 + std::string(8, '\1'), md5));
  EXPECT_FALSE(BuildIdMatches("", id));
  EXPECT_FALSE(BuildIdMatches(id, ""));
}

}  // namespace
}  // namespace pageblame::symbols
