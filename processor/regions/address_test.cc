#include "processor/regions/address.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pageblame::regions {
namespace {

using ::testing::HasSubstr;

TEST(ParseAddressTest, AcceptsThreeSpellings) {
  EXPECT_EQ(*ParseAddress("0x7d1898000000"), 0x7d1898000000u);
  EXPECT_EQ(*ParseAddress("0X7D1898000000"), 0x7d1898000000u);
  EXPECT_EQ(*ParseAddress("7d1898000000"), 0x7d1898000000u);
  EXPECT_EQ(*ParseAddress("7d18`98000000"), 0x7d1898000000u);
  EXPECT_EQ(*ParseAddress("0x7d18`98000000"), 0x7d1898000000u);
  EXPECT_EQ(*ParseAddress("0`00000000"), 0u);
  EXPECT_EQ(*ParseAddress("ffffffff`ffffffff"), ~uint64_t{0});
  EXPECT_EQ(*ParseAddress("0000ffffffffffffffff"), ~uint64_t{0});  // leading zeros are free
}

TEST(ParseAddressTest, RejectsMalformed) {
  for (const char* bad : {"", "0x", "xyz", "7d18`9800", "`98000000", "7d18`98000000`1",
                          "12345678901234567", "1`ffffffff0", " 0x10", "0x10 ", "-1", "+1",
                          "0x1g"}) {
    absl::StatusOr<uint64_t> a = ParseAddress(bad);
    EXPECT_FALSE(a.ok()) << bad;
    if (!a.ok()) {
      EXPECT_THAT(std::string(a.status().message()), HasSubstr("bad address")) << bad;
    }
  }
  EXPECT_THAT(std::string(ParseAddress("1ffffffffffffffff").status().message()), HasSubstr("64 bits"));
  EXPECT_THAT(std::string(ParseAddress("7d18`9800").status().message()), HasSubstr("8 digits"));
}

TEST(ParseAddressTest, FormatRoundTrips) {
  EXPECT_EQ(FormatAddress(0x78e8c18e7000), "0x78e8c18e7000");
  EXPECT_EQ(*ParseAddress(FormatAddress(0x1234)), 0x1234u);
}

}  // namespace
}  // namespace pageblame::regions
