#include "processor/decode/callchain.h"

#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pageblame::decode {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using perf::kContextHv;
using perf::kContextKernel;
using perf::kContextUser;

// The rule, written the plain way: every ip while the last marker was USER
// (or before any marker).
std::vector<uint64_t> Reference(const std::vector<uint64_t>& chain) {
  std::vector<uint64_t> out;
  bool user = true;
  for (uint64_t ip : chain) {
    if (ip >= perf::kContextMax) {
      user = ip == kContextUser;
    } else if (user) {
      out.push_back(ip);
    }
  }
  return out;
}

std::vector<uint64_t> Frames(const std::vector<uint64_t>& chain) {
  std::vector<uint64_t> scratch;
  absl::Span<const uint64_t> s = UserFrames(chain, &scratch);
  return std::vector<uint64_t>(s.begin(), s.end());
}

TEST(UserFramesTest, TheUsualChainIsReturnedInPlace) {
  const std::vector<uint64_t> chain = {kContextKernel, 0xffff1, 0xffff2, kContextUser, 0x401, 0x402};
  std::vector<uint64_t> scratch;
  absl::Span<const uint64_t> s = UserFrames(chain, &scratch);
  EXPECT_THAT(s, ElementsAre(0x401, 0x402));
  EXPECT_EQ(s.data(), chain.data() + 4);  // a part of the chain, not a copy
  EXPECT_THAT(scratch, IsEmpty());
  EXPECT_THAT(Frames({0x1, 0x2}), ElementsAre(0x1, 0x2));  // no markers: all user
  EXPECT_THAT(Frames({kContextUser, 0x1}), ElementsAre(0x1));
  EXPECT_THAT(Frames({kContextKernel, 0xffff1}), IsEmpty());
  EXPECT_THAT(Frames({}), IsEmpty());
}

TEST(UserFramesTest, SeveralUserRunsAreJoined) {
  EXPECT_THAT(Frames({kContextUser, 0x1, kContextKernel, 0xf, kContextUser, 0x2, 0x3}),
              ElementsAre(0x1, 0x2, 0x3));
  EXPECT_THAT(Frames({0x1, kContextHv, 0xf, kContextUser, 0x2}), ElementsAre(0x1, 0x2));
}

TEST(UserFramesTest, MatchesThePlainRuleOnRandomChains) {
  std::mt19937_64 rng(5);
  const uint64_t markers[] = {kContextUser, kContextKernel, kContextHv};
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<uint64_t> chain(rng() % 12);
    for (uint64_t& ip : chain) ip = rng() % 3 == 0 ? markers[rng() % 3] : 0x1000 + rng() % 100;
    ASSERT_EQ(Frames(chain), Reference(chain)) << "trial " << trial;
  }
}

// Real chains: tens of ips, markers rare, anywhere (the scan looks at four
// ips at a time), and ips on both sides of the marker bound.
TEST(UserFramesTest, MatchesThePlainRuleOnLongChainsWithFewMarkers) {
  std::mt19937_64 rng(7);
  const uint64_t markers[] = {kContextUser, kContextKernel, kContextHv, perf::kContextMax,
                              ~uint64_t{0}};
  const uint64_t near_bound[] = {perf::kContextMax - 1, 0xfffffffffffff000, 0xffffffff81000000};
  for (int trial = 0; trial < 5000; ++trial) {
    std::vector<uint64_t> chain(rng() % 70);
    const unsigned one_in = 2 + rng() % 40;
    for (uint64_t& ip : chain) {
      if (rng() % one_in == 0) {
        ip = markers[rng() % 5];
      } else {
        ip = rng() % 8 == 0 ? near_bound[rng() % 3] : 0x400000 + rng() % 0x100000;
      }
    }
    ASSERT_EQ(Frames(chain), Reference(chain)) << "trial " << trial;
  }
}

TEST(UserFramesTest, NextMarkerFindsTheFirstMarkerAtOrAfterI) {
  std::vector<uint64_t> chain(11, 0x401);
  EXPECT_EQ(NextMarker(chain, 0), 11u);
  chain[9] = kContextUser;
  EXPECT_EQ(NextMarker(chain, 0), 9u);
  EXPECT_EQ(NextMarker(chain, 9), 9u);
  EXPECT_EQ(NextMarker(chain, 10), 11u);
  chain[2] = perf::kContextMax;
  EXPECT_EQ(NextMarker(chain, 0), 2u);
  EXPECT_EQ(NextMarker(chain, 3), 9u);
  chain[2] = perf::kContextMax - 1;  // the highest ip that is not a marker
  EXPECT_EQ(NextMarker(chain, 0), 9u);
  EXPECT_EQ(NextMarker(chain, 11), 11u);
}

}  // namespace
}  // namespace pageblame::decode
