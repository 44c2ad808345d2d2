// Sample layout arithmetic and sample-body parsing on hand-built bodies.
#include "processor/perf/sample_parser.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pageblame::perf {
namespace {

using ::testing::ElementsAre;

constexpr uint64_t kFixtureType = kSampleIp | kSampleTid | kSampleTime | kSampleCallchain |
                                  kSampleId | kSampleCpu | kSamplePeriod | kSampleRaw;

class Body {
 public:
  Body& U32(uint32_t v) { return Raw(v); }
  Body& U64(uint64_t v) { return Raw(v); }
  Body& Bytes(const std::string& s) {
    b_ += s;
    return *this;
  }
  const std::string& str() const { return b_; }
  absl::Span<const uint8_t> span() const {
    return {reinterpret_cast<const uint8_t*>(b_.data()), b_.size()};
  }

 private:
  template <typename T>
  Body& Raw(T v) {
    b_.append(reinterpret_cast<const char*>(&v), sizeof(v));
    return *this;
  }
  std::string b_;
};

TEST(SampleLayoutTest, IdPositions) {
  // The fixtures' sample_type: the id follows IP, TID, TIME; in the trailer
  // (TID, TIME, ID, CPU) it is second from the end. perf's records agree: a
  // COMM of "mmap_prog" is 0x40 bytes = 8 header + 8 pid/tid + 16 comm + 32
  // trailer (perf report -D on testdata/trace_record.data).
  EXPECT_EQ(SampleIdPos(kFixtureType), 3);
  EXPECT_EQ(TrailerIdPos(kFixtureType), 2);
  EXPECT_EQ(TrailerSize(kFixtureType), 32u);
  // PERF_SAMPLE_IDENTIFIER puts the id first in samples, last in trailers.
  EXPECT_EQ(SampleIdPos(kFixtureType | kSampleIdentifier), 0);
  EXPECT_EQ(TrailerIdPos(kFixtureType | kSampleIdentifier), 1);
  EXPECT_EQ(TrailerSize(kFixtureType | kSampleIdentifier), 40u);
  // ADDR counts before ID; STREAM_ID and CPU count after it in the trailer.
  const uint64_t st = kSampleTid | kSampleAddr | kSampleId | kSampleStreamId | kSampleCpu;
  EXPECT_EQ(SampleIdPos(st), 2);
  EXPECT_EQ(TrailerIdPos(st), 3);
  EXPECT_EQ(TrailerSize(st), 32u);
  // No id at all.
  EXPECT_EQ(SampleIdPos(kSampleIp | kSampleTid), -1);
  EXPECT_EQ(TrailerIdPos(kSampleIp | kSampleTid), -1);
  // Fields outside the trailer do not count.
  EXPECT_EQ(TrailerSize(kSampleIp | kSampleRaw | kSampleCallchain), 0u);
}

TEST(SampleParserTest, AllFieldsUpToRaw) {
  EventAttr attr;
  attr.sample_type = kSampleIdentifier | kSampleIp | kSampleTid | kSampleTime | kSampleAddr |
                     kSampleId | kSampleStreamId | kSampleCpu | kSamplePeriod | kSampleRead |
                     kSampleCallchain | kSampleRaw | kSampleBranchStack;
  // GROUP | ID | LOST | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING
  attr.read_format = (1 << 3) | (1 << 2) | (1 << 4) | (1 << 0) | (1 << 1);
  Body b;
  b.U64(77)                       // IDENTIFIER
      .U64(0x401000)              // IP
      .U32(10).U32(11)            // TID
      .U64(123456789)             // TIME
      .U64(0xdead)                // ADDR
      .U64(77)                    // ID
      .U64(5)                     // STREAM_ID
      .U32(3).U32(0)              // CPU
      .U64(1)                     // PERIOD
      .U64(2).U64(100).U64(90)    // READ group: nr, enabled, running
      .U64(1).U64(77).U64(0)      //   value, id, lost
      .U64(2).U64(78).U64(0)      //   value, id, lost
      .U64(3).U64(kContextUser).U64(0x401000).U64(0x402000)  // CALLCHAIN
      .U32(12).Bytes(std::string("\x2a\x00payload!!\0\0", 12))  // RAW (4 + 12 = 16)
      .U64(0);  // BRANCH_STACK nr: nothing after it
  Sample s;
  std::vector<uint64_t> scratch;
  ASSERT_TRUE(ParseSampleBody(attr, b.span(), &s, &scratch).ok());
  EXPECT_EQ(s.attr, &attr);
  EXPECT_EQ(s.id, 77u);
  EXPECT_EQ(s.ip, 0x401000u);
  EXPECT_EQ(s.pid, 10u);
  EXPECT_EQ(s.tid, 11u);
  EXPECT_EQ(s.time, 123456789u);
  EXPECT_EQ(s.cpu, 3u);
  EXPECT_THAT(s.callchain, ElementsAre(kContextUser, 0x401000u, 0x402000u));
  ASSERT_EQ(s.raw.size(), 12u);
  EXPECT_EQ(s.raw[0], 0x2a);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(s.raw.data()) + 2, 7), "payload");

  EXPECT_EQ(s.user_copy_error, UserCopyError::kNone);
  // Everything up to the end of RAW is required: every shorter body fails.
  const size_t needed = b.str().size() - 8;
  for (size_t n = 0; n < needed; ++n) {
    EXPECT_FALSE(ParseSampleBody(attr, b.span().subspan(0, n), &s, &scratch).ok()) << n;
  }
  // The branch stack is not: without it the sample is good, and says so.
  EXPECT_TRUE(ParseSampleBody(attr, b.span().subspan(0, needed), &s, &scratch).ok());
  EXPECT_EQ(s.user_copy_error, UserCopyError::kBranchStackCut);
}

// A --call-graph dwarf sample's tail: BRANCH_STACK (with its hw_idx word),
// REGS_USER, STACK_USER, then a field that is not read.
EventAttr DwarfAttr() {
  EventAttr attr;
  attr.sample_type = kSampleTid | kSampleRaw | kSampleBranchStack | kSampleRegsUser |
                     kSampleStackUser | kSampleWeight;
  attr.branch_sample_type = kBranchHwIndex;
  attr.sample_regs_user = 0b1010'0001;  // three registers
  attr.sample_stack_user = 32;
  return attr;
}

Body DwarfBody(uint64_t stack_size, uint64_t dyn_size) {
  Body b;
  b.U32(1).U32(2).U32(4).U32(0xabcd);                   // TID, RAW
  b.U64(1).U64(99).U64(0xa).U64(0xb).U64(0xc);          // BRANCH_STACK: nr, hw_idx, entry
  b.U64(kRegsAbi64).U64(0x111).U64(0x222).U64(0x333);  // REGS_USER
  b.U64(stack_size);
  for (uint64_t i = 0; i < stack_size / 8; ++i) b.U64(0x5000 + i);
  b.U64(dyn_size);
  b.U64(7);  // WEIGHT
  return b;
}

uint64_t Word(absl::Span<const uint8_t> bytes, size_t i) {
  uint64_t v;
  std::memcpy(&v, bytes.data() + 8 * i, 8);
  return v;
}

TEST(SampleParserTest, UserRegistersAndStackAfterTheBranchStack) {
  EventAttr attr = DwarfAttr();
  EventAttr laid = attr;
  laid.layout = LayoutOf(attr.sample_type, attr.read_format);
  Body b = DwarfBody(32, 24);
  for (const EventAttr* a : {&attr, &laid}) {
    Sample s;
    std::vector<uint64_t> scratch;
    ASSERT_TRUE(ParseSampleBody(*a, b.span(), &s, &scratch).ok());
    EXPECT_EQ(s.user_copy_error, UserCopyError::kNone);
    EXPECT_EQ(s.regs_abi, kRegsAbi64);
    ASSERT_EQ(s.user_regs.size(), 24u);
    EXPECT_EQ(Word(s.user_regs, 0), 0x111u);
    EXPECT_EQ(Word(s.user_regs, 2), 0x333u);
    ASSERT_EQ(s.user_stack.size(), 24u);  // dyn_size of the 32 copied
    EXPECT_EQ(Word(s.user_stack, 0), 0x5000u);
    EXPECT_EQ(Word(s.user_stack, 2), 0x5002u);
  }
  // Without the hw_idx bit the branch stack is a word shorter: everything
  // after it moves.
  attr.branch_sample_type = 0;
  Sample s;
  std::vector<uint64_t> scratch;
  ASSERT_TRUE(ParseSampleBody(attr, b.span(), &s, &scratch).ok());
  EXPECT_EQ(s.regs_abi, 0xcu);  // the entry's flags, taken for the abi
}

TEST(SampleParserTest, CutOrInconsistentUserCopiesKeepTheSample) {
  const EventAttr attr = DwarfAttr();
  Sample s;
  std::vector<uint64_t> scratch;
  // dyn_size larger than the copy: the copy is kept, and flagged.
  Body big = DwarfBody(32, 4096);
  ASSERT_TRUE(ParseSampleBody(attr, big.span(), &s, &scratch).ok());
  EXPECT_EQ(s.user_copy_error, UserCopyError::kDynSizeTooBig);
  EXPECT_EQ(s.user_stack.size(), 32u);
  // A stack size past the record's end: registers, no stack.
  Body past = DwarfBody(32, 32);
  std::string cut = past.str().substr(0, past.str().size() - 40);
  absl::Span<const uint8_t> cut_span(reinterpret_cast<const uint8_t*>(cut.data()), cut.size());
  ASSERT_TRUE(ParseSampleBody(attr, cut_span, &s, &scratch).ok());
  EXPECT_EQ(s.user_copy_error, UserCopyError::kStackCut);
  EXPECT_EQ(s.regs_abi, kRegsAbi64);
  EXPECT_EQ(s.user_regs.size(), 24u);
  EXPECT_TRUE(s.user_stack.empty());
  // Every cut inside the tail: still a sample, never a read past the end.
  const size_t raw_end = 16;
  for (size_t n = raw_end; n < past.str().size(); ++n) {
    ASSERT_TRUE(ParseSampleBody(attr, past.span().subspan(0, n), &s, &scratch).ok()) << n;
    EXPECT_LE(s.user_stack.size(), 32u);
    if (s.user_copy_error != UserCopyError::kNone) continue;
    EXPECT_GE(n, past.str().size() - 8) << "only WEIGHT may be missing";
  }
  // No registers (a kernel thread): abi 0 and nothing else of REGS_USER.
  Body none;
  none.U32(1).U32(2).U32(4).U32(0).U64(0).U64(0).U64(0).U64(0);
  ASSERT_TRUE(ParseSampleBody(attr, none.span(), &s, &scratch).ok());
  EXPECT_EQ(s.regs_abi, kRegsAbiNone);
  EXPECT_TRUE(s.user_regs.empty());
  EXPECT_TRUE(s.user_stack.empty());
  EXPECT_EQ(s.user_copy_error, UserCopyError::kNone);
}

TEST(SampleParserTest, ReadWithoutGroup) {
  EventAttr attr;
  attr.sample_type = kSampleTid | kSampleRead | kSampleRaw;
  attr.read_format = (1 << 0) | (1 << 1) | (1 << 2);  // ENABLED | RUNNING | ID
  Body b;
  b.U32(1).U32(2).U64(9).U64(8).U64(7).U64(6).U32(4).U32(0xabcd);
  Sample s;
  std::vector<uint64_t> scratch;
  ASSERT_TRUE(ParseSampleBody(attr, b.span(), &s, &scratch).ok());
  ASSERT_EQ(s.raw.size(), 4u);
  uint32_t raw;
  memcpy(&raw, s.raw.data(), 4);
  EXPECT_EQ(raw, 0xabcdu);
}

TEST(SampleParserTest, HugeCountsFailCleanly) {
  EventAttr attr;
  attr.sample_type = kSampleRead | kSampleCallchain;
  attr.read_format = 1 << 3;  // GROUP
  Body group;
  group.U64(~0ULL >> 4);  // nr * 8 would overflow-check
  Sample s;
  std::vector<uint64_t> scratch;
  EXPECT_FALSE(ParseSampleBody(attr, group.span(), &s, &scratch).ok());
  attr.sample_type = kSampleCallchain;
  Body chain;
  chain.U64(~0ULL).U64(1);
  EXPECT_FALSE(ParseSampleBody(attr, chain.span(), &s, &scratch).ok());
}

TEST(SampleParserTest, MisalignedCallchainIsCopied) {
  EventAttr attr;
  attr.sample_type = kSampleTid | kSampleCallchain;
  Body b;
  b.U32(1).U32(2).U64(2).U64(0x1111).U64(0x2222);
  std::string buf = "abcd" + b.str();  // the body at a 4-byte (not 8) alignment
  std::vector<uint64_t> storage((buf.size() + 15) / 8);
  char* base = reinterpret_cast<char*>(storage.data()) + 4;
  memcpy(base, buf.data() + 4, b.str().size());
  absl::Span<const uint8_t> body(reinterpret_cast<const uint8_t*>(base), b.str().size());
  Sample s;
  std::vector<uint64_t> scratch;
  ASSERT_TRUE(ParseSampleBody(attr, body, &s, &scratch).ok());
  EXPECT_THAT(s.callchain, ElementsAre(0x1111u, 0x2222u));
  EXPECT_EQ(s.callchain.data(), scratch.data());
}

TEST(SampleParserTest, Trailer) {
  Body b;
  b.U32(42).U32(43).U64(999).U64(7).U32(1).U32(0);  // TID, TIME, ID, CPU
  SampleId id;
  ASSERT_EQ(TrailerSize(kFixtureType), b.str().size());
  ParseTrailer(kFixtureType, b.span(), &id);
  EXPECT_EQ(id.pid, 42u);
  EXPECT_EQ(id.tid, 43u);
  EXPECT_TRUE(id.has_time);
  EXPECT_EQ(id.time, 999u);
  EXPECT_TRUE(id.has_cpu);
  EXPECT_EQ(id.cpu, 1u);
  ParseTrailer(kSampleId | kSampleCpu, b.span().subspan(0, 16), &id);
  EXPECT_FALSE(id.has_time);
  EXPECT_EQ(id.pid, 0u);
  EXPECT_TRUE(id.has_cpu);  // the CPU comes after the ID, here bytes 8..12
  EXPECT_EQ(id.cpu, 999u);
  // Cut before the CPU: no CPU rather than a read past the end.
  ParseTrailer(kFixtureType, b.span().subspan(0, 20), &id);
  EXPECT_TRUE(id.has_time);
  EXPECT_FALSE(id.has_cpu);
}

TEST(SampleParserTest, ThroughTheLayoutAsFieldByField) {
  // Random sample_types and read_formats, random bodies of every length
  // around the real one: the layout's fast reading gives the same fields,
  // the same error and the same answer as the field-by-field parse (an attr
  // whose layout was never made), including for READ groups (no layout) and
  // misaligned callchains.
  std::mt19937_64 rng(11);
  const uint64_t bits[] = {kSampleIdentifier, kSampleIp, kSampleTid, kSampleTime, kSampleAddr,
                           kSampleId, kSampleStreamId, kSampleCpu, kSamplePeriod, kSampleRead,
                           kSampleCallchain, kSampleRaw, kSampleBranchStack, kSampleRegsUser,
                           kSampleStackUser};
  int fast_paths = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    EventAttr plain;
    for (uint64_t bit : bits) {
      if (rng() % 2) plain.sample_type |= bit;
    }
    plain.read_format = rng() % 32;  // TOTAL_TIME_ENABLED..LOST, sometimes GROUP
    plain.sample_regs_user = rng() % 16;
    plain.branch_sample_type = rng() % 2 ? kBranchHwIndex : 0;
    EventAttr laid = plain;
    laid.layout = LayoutOf(laid.sample_type, laid.read_format);
    fast_paths += laid.layout.fixed;
    // A body long enough for everything, of random words; sensible counts
    // for the READ group, CALLCHAIN and RAW now and then.
    std::vector<uint64_t> words(40 + rng() % 40);
    for (uint64_t& w : words) w = rng() % 4 == 0 ? rng() % 6 : rng();
    const size_t offset = rng() % 2 ? 0 : 4;  // a misaligned body now and then
    std::vector<uint64_t> storage(words.size() + 2);
    uint8_t* base = reinterpret_cast<uint8_t*>(storage.data()) + offset;
    std::memcpy(base, words.data(), words.size() * 8);
    const size_t full = words.size() * 8;
    for (size_t len : {full, full / 2, full / 4, size_t{0}, static_cast<size_t>(rng() % full)}) {
      absl::Span<const uint8_t> body(base, len);
      Sample a, b;
      std::vector<uint64_t> sa, sb;
      absl::Status x = ParseSampleBody(plain, body, &a, &sa);
      absl::Status y = ParseSampleBody(laid, body, &b, &sb);
      ASSERT_EQ(x, y) << "trial " << trial << " len " << len;
      if (!x.ok()) continue;
      EXPECT_EQ(a.id, b.id);
      EXPECT_EQ(a.ip, b.ip);
      EXPECT_EQ(a.pid, b.pid);
      EXPECT_EQ(a.tid, b.tid);
      EXPECT_EQ(a.time, b.time);
      EXPECT_EQ(a.cpu, b.cpu);
      EXPECT_TRUE(std::equal(a.callchain.begin(), a.callchain.end(), b.callchain.begin(),
                             b.callchain.end()));
      EXPECT_EQ(a.raw.data(), b.raw.data());
      EXPECT_EQ(a.raw.size(), b.raw.size());
      EXPECT_EQ(a.regs_abi, b.regs_abi);
      EXPECT_EQ(a.user_regs.data(), b.user_regs.data());
      EXPECT_EQ(a.user_regs.size(), b.user_regs.size());
      EXPECT_EQ(a.user_stack.data(), b.user_stack.data());
      EXPECT_EQ(a.user_stack.size(), b.user_stack.size());
      EXPECT_EQ(a.user_copy_error, b.user_copy_error);
      EXPECT_EQ(b.attr, &laid);
    }
  }
  EXPECT_GT(fast_paths, 1000);  // most draws have no READ group
}

TEST(SampleLayoutTest, OffsetsOfTheBenchTracesSampleType) {
  // perf trace record: IP|TID|TIME|CALLCHAIN|ID|CPU|PERIOD|RAW.
  SampleLayout l = LayoutOf(kFixtureType, 0);
  EXPECT_TRUE(l.fixed);
  EXPECT_EQ(l.identifier, -1);
  EXPECT_EQ(l.ip, 0);
  EXPECT_EQ(l.tid, 8);
  EXPECT_EQ(l.time, 16);
  EXPECT_EQ(l.id, 24);
  EXPECT_EQ(l.cpu, 32);
  EXPECT_EQ(l.prefix, 48);  // PERIOD ends it
  // A READ group moves everything after it: no layout.
  EXPECT_FALSE(LayoutOf(kFixtureType | kSampleRead, /*GROUP*/ 1 << 3).fixed);
  // A single READ value: value, then ID and LOST if asked.
  EXPECT_EQ(LayoutOf(kSampleRead | kSampleRaw, (1 << 2) | (1 << 4)).prefix, 24);
}

}  // namespace
}  // namespace pageblame::perf
