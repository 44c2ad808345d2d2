// SyscallDecoder on the event formats a real kernel wrote (traces/
// commit-trace.data: `perf trace record` of all seven memory syscalls, so
// syscalls:sys_{enter,exit}_X and raw_syscalls:sys_{enter,exit} both), with
// payloads laid out here by those formats; and on formats built by hand for
// the layouts no recording has (32-bit fields, odd sizes, missing fields).
#include "processor/decode/syscall_decoder.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/decode/tracing_data.h"
#include "processor/perf/perf_reader.h"

namespace pageblame::decode {
namespace {

using ::testing::HasSubstr;

constexpr uint32_t kTracepoint = 2;  // PERF_TYPE_TRACEPOINT
constexpr Syscall kAll[] = {Syscall::kMmap,     Syscall::kMunmap,       Syscall::kBrk,
                            Syscall::kMremap,   Syscall::kMprotect,     Syscall::kPkeyMprotect,
                            Syscall::kMadvise};
// x86_64 syscall numbers (arch/x86/entry/syscalls/syscall_64.tbl), in kAll's order.
constexpr int64_t kX86Nr[] = {9, 11, 12, 25, 10, 329, 28};
constexpr int64_t kArm64Nr[] = {222, 215, 214, 216, 226, 288, 233};  // asm-generic/unistd.h

// The parameter names of each syscall's SYSCALL_DEFINE, in order: the
// fields of its syscalls:sys_enter_X tracepoint.
std::vector<std::string> ArgNamesOf(Syscall sc) {
  switch (sc) {
    case Syscall::kMmap: return {"addr", "len", "prot", "flags", "fd", "off"};
    case Syscall::kMunmap: return {"addr", "len"};
    case Syscall::kBrk: return {"brk"};
    case Syscall::kMremap: return {"addr", "old_len", "new_len", "flags", "new_addr"};
    case Syscall::kMprotect: return {"start", "len", "prot"};
    case Syscall::kPkeyMprotect: return {"start", "len", "prot", "pkey"};
    case Syscall::kMadvise: return {"start", "len_in", "behavior"};
    case Syscall::kCount: break;
  }
  return {};
}

// A tracepoint payload laid out by `ev`: common_type set, the rest zero
// until Set.
class Payload {
 public:
  explicit Payload(const EventFormat& ev) : ev_(ev) {
    size_t size = 0;
    for (const FieldFormat& f : ev.fields()) size = std::max(size, size_t(f.offset + f.size));
    bytes_.assign(size, 0);
    const uint16_t type = static_cast<uint16_t>(ev.id());
    std::memcpy(bytes_.data(), &type, 2);
  }
  // Writes the low `size` bytes of v into the field (for arrays: element i).
  Payload& Set(const std::string& name, uint64_t v, int element = 0) {
    const FieldFormat* f = ev_.FindField(name);
    EXPECT_NE(f, nullptr) << ev_.name() << " has no field " << name;
    if (f == nullptr) return *this;
    const int width = f->size > 8 ? 8 : f->size;
    std::memcpy(&bytes_[f->offset + width * element], &v, width);
    return *this;
  }
  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  const EventFormat& ev_;
  std::vector<uint8_t> bytes_;
};

perf::Sample SampleOf(const perf::EventAttr* attr, const std::vector<uint8_t>& raw) {
  perf::Sample s;
  s.attr = attr;
  s.pid = s.tid = 42;
  s.raw = absl::Span<const uint8_t>(raw.data(), raw.size());
  return s;
}

// The attrs and event formats of commit-trace.data.
struct RealTrace {
  perf::FileInfo info;
  std::unique_ptr<TracingData> td;

  static RealTrace Load() {
    RealTrace t;
    auto reader = perf::PerfReader::Open(std::string(PAGEBLAME_SOURCE_DIR) + "/traces/commit-trace.data");
    EXPECT_TRUE(reader.ok()) << reader.status();
    if (!reader.ok()) return t;
    t.info = (*reader)->info();
    auto td = TracingData::Parse(t.info.tracing_data);
    EXPECT_TRUE(td.ok()) << td.status();
    if (td.ok()) t.td = std::move(*td);
    return t;
  }
  // "syscalls:sys_enter_mmap" of an attr, by its format.
  std::string EventOf(const perf::EventAttr& a) const {
    const EventFormat* ev = a.type == kTracepoint ? td->FindEvent(static_cast<int>(a.config)) : nullptr;
    return ev == nullptr ? "" : ev->system() + ":" + ev->name();
  }
  // The first attr of that event, or null.
  const perf::EventAttr* Attr(const std::string& event) const {
    for (const perf::EventAttr& a : info.attrs) {
      if (EventOf(a) == event) return &a;
    }
    return nullptr;
  }
  const EventFormat& Format(const perf::EventAttr* a) const {
    return *td->FindEvent(static_cast<int>(a->config));
  }
  // Keeps only the attrs `keep` says yes to (the decoder must be made after).
  template <typename Keep>
  void Filter(Keep keep) {
    std::vector<perf::EventAttr> kept;
    for (const perf::EventAttr& a : info.attrs) {
      if (keep(EventOf(a))) kept.push_back(a);
    }
    info.attrs = std::move(kept);
  }
};

std::string Specific(const char* phase, Syscall sc) {
  return std::string("syscalls:sys_") + phase + "_" + std::string(SyscallName(sc));
}

class SyscallDecoderRealFormatsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    trace_ = RealTrace::Load();
    ASSERT_NE(trace_.td, nullptr);
  }
  SyscallDecoder Make() {
    auto dec = SyscallDecoder::Create(trace_.info, *trace_.td);
    EXPECT_TRUE(dec.ok()) << dec.status();
    return std::move(*dec);
  }
  // A raw_syscalls:sys_enter payload: id and args[6].
  std::vector<uint8_t> RawEnter(int64_t nr, const uint64_t (&args)[6]) {
    Payload p(trace_.Format(trace_.Attr("raw_syscalls:sys_enter")));
    p.Set("id", static_cast<uint64_t>(nr));
    for (int i = 0; i < 6; ++i) p.Set("args", args[i], i);
    return p.bytes();
  }
  std::vector<uint8_t> RawExit(int64_t nr, int64_t ret) {
    Payload p(trace_.Format(trace_.Attr("raw_syscalls:sys_exit")));
    p.Set("id", static_cast<uint64_t>(nr)).Set("ret", static_cast<uint64_t>(ret));
    return p.bytes();
  }
  RealTrace trace_;
};

TEST_F(SyscallDecoderRealFormatsTest, TheTraceHasEverySyscallBothWaysAndIsUsable) {
  for (Syscall sc : kAll) {
    EXPECT_NE(trace_.Attr(Specific("enter", sc)), nullptr) << SyscallName(sc);
    EXPECT_NE(trace_.Attr(Specific("exit", sc)), nullptr) << SyscallName(sc);
  }
  SyscallDecoder dec = Make();
  EXPECT_TRUE(dec.CheckUsable().ok()) << dec.CheckUsable();
  EXPECT_FALSE(dec.uses_raw_syscalls());
  EXPECT_THAT(dec.DescribeSources(), HasSubstr("mmap: syscalls:sys_{enter,exit}_mmap"));
  EXPECT_THAT(dec.DescribeSources(), HasSubstr("madvise: syscalls:sys_{enter,exit}_madvise"));
}

TEST_F(SyscallDecoderRealFormatsTest, EntersGiveEachSyscallsArgumentsInItsOwnOrder) {
  SyscallDecoder dec = Make();
  for (Syscall sc : kAll) {
    SCOPED_TRACE(SyscallName(sc));
    const perf::EventAttr* attr = trace_.Attr(Specific("enter", sc));
    ASSERT_NE(attr, nullptr);
    EXPECT_TRUE(dec.Wanted(attr, /*raw_duplicates=*/false));
    Payload p(trace_.Format(attr));
    const std::vector<std::string> names = ArgNamesOf(sc);
    for (size_t i = 0; i < names.size(); ++i) p.Set(names[i], 0x1111111100000000ull * (i + 1) + 0x7f00 + i);
    p.Set("__syscall_nr", 0xffffffff);  // not an argument
    DecodedSyscall d;
    for (uint64_t& a : d.args) a = 0xdead;  // stale values must not survive
    d.raw_duplicate = true;
    ASSERT_TRUE(dec.Decode(SampleOf(attr, p.bytes()), &d));
    EXPECT_EQ(d.phase, DecodedSyscall::Phase::kEnter);
    EXPECT_EQ(d.syscall, sc);
    EXPECT_FALSE(d.raw_duplicate);
    EXPECT_FALSE(d.malformed);
    for (size_t i = 0; i < 6; ++i) {
      const uint64_t want = i < names.size() ? 0x1111111100000000ull * (i + 1) + 0x7f00 + i : 0;
      EXPECT_EQ(d.args[i], want) << "args[" << i << "]";
    }
  }
}

TEST_F(SyscallDecoderRealFormatsTest, ExitsGiveTheReturnValueSignedAndErrnosStayNegative) {
  SyscallDecoder dec = Make();
  for (Syscall sc : kAll) {
    SCOPED_TRACE(SyscallName(sc));
    const perf::EventAttr* attr = trace_.Attr(Specific("exit", sc));
    ASSERT_NE(attr, nullptr);
    for (int64_t ret : {int64_t{0x7f3bad120000}, int64_t{0}, int64_t{-12}, int64_t{-4095}}) {
      Payload p(trace_.Format(attr));
      p.Set("ret", static_cast<uint64_t>(ret));
      DecodedSyscall d;
      ASSERT_TRUE(dec.Decode(SampleOf(attr, p.bytes()), &d));
      EXPECT_EQ(d.phase, DecodedSyscall::Phase::kExit);
      EXPECT_EQ(d.syscall, sc);
      EXPECT_EQ(d.ret, ret);
      EXPECT_EQ(IsErrorReturn(d.ret), ret < 0);
    }
  }
}

// perf trace record writes raw_syscalls events for every syscall: those of
// the memory syscalls are the same calls again (raw duplicates), the rest are not ours.
TEST_F(SyscallDecoderRealFormatsTest, RawEventsOfCallsTheSyscallsEventsDescribeAreRawDuplicates) {
  SyscallDecoder dec = Make();
  const perf::EventAttr* enter = trace_.Attr("raw_syscalls:sys_enter");
  const perf::EventAttr* exit = trace_.Attr("raw_syscalls:sys_exit");
  ASSERT_NE(enter, nullptr);
  ASSERT_NE(exit, nullptr);
  EXPECT_FALSE(dec.Wanted(enter, /*raw_duplicates=*/false));  // skipped before parsing
  EXPECT_TRUE(dec.Wanted(enter, /*raw_duplicates=*/true));
  EXPECT_TRUE(dec.Wanted(exit, /*raw_duplicates=*/true));
  for (size_t i = 0; i < std::size(kAll); ++i) {
    SCOPED_TRACE(SyscallName(kAll[i]));
    DecodedSyscall d;
    ASSERT_TRUE(dec.Decode(SampleOf(enter, RawEnter(kX86Nr[i], {1, 2, 3, 4, 5, 6})), &d));
    EXPECT_TRUE(d.raw_duplicate);
    EXPECT_EQ(d.syscall, kAll[i]);
    EXPECT_EQ(d.phase, DecodedSyscall::Phase::kEnter);
    ASSERT_TRUE(dec.Decode(SampleOf(exit, RawExit(kX86Nr[i], -1)), &d));
    EXPECT_TRUE(d.raw_duplicate);
    EXPECT_EQ(d.syscall, kAll[i]);
    EXPECT_EQ(d.phase, DecodedSyscall::Phase::kExit);
  }
  // read(2), openat(2), exit_group(2): not memory syscalls.
  for (int64_t nr : {0, 257, 231, -1}) {
    DecodedSyscall d;
    EXPECT_FALSE(dec.Decode(SampleOf(enter, RawEnter(nr, {1, 2, 3, 4, 5, 6})), &d)) << nr;
    EXPECT_FALSE(d.malformed);
    EXPECT_FALSE(dec.Decode(SampleOf(exit, RawExit(nr, 0)), &d)) << nr;
    EXPECT_FALSE(d.malformed);
  }
}

TEST_F(SyscallDecoderRealFormatsTest, WithoutSyscallsEventsRawEventsAreTheCallsWithAllSixArgs) {
  trace_.Filter([](const std::string& ev) { return ev.rfind("raw_syscalls:", 0) == 0; });
  ASSERT_EQ(trace_.info.attrs.size(), 2u);
  SyscallDecoder dec = Make();
  EXPECT_TRUE(dec.CheckUsable().ok()) << dec.CheckUsable();
  EXPECT_TRUE(dec.uses_raw_syscalls());
  EXPECT_THAT(dec.DescribeSources(), HasSubstr("mremap: raw_syscalls (nr 25)"));
  const perf::EventAttr* enter = trace_.Attr("raw_syscalls:sys_enter");
  const perf::EventAttr* exit = trace_.Attr("raw_syscalls:sys_exit");
  EXPECT_TRUE(dec.Wanted(enter, /*raw_duplicates=*/false));
  EXPECT_TRUE(dec.Wanted(exit, /*raw_duplicates=*/false));
  for (size_t i = 0; i < std::size(kAll); ++i) {
    SCOPED_TRACE(SyscallName(kAll[i]));
    DecodedSyscall d;
    ASSERT_TRUE(dec.Decode(
        SampleOf(enter, RawEnter(kX86Nr[i], {0x7f0000000000, 0x5000, 3, 0x22, ~0ull, 0x1000})), &d));
    EXPECT_FALSE(d.raw_duplicate);
    EXPECT_EQ(d.syscall, kAll[i]);
    EXPECT_EQ(d.phase, DecodedSyscall::Phase::kEnter);
    const uint64_t want[6] = {0x7f0000000000, 0x5000, 3, 0x22, ~0ull, 0x1000};
    for (int a = 0; a < 6; ++a) EXPECT_EQ(d.args[a], want[a]) << a;
    ASSERT_TRUE(dec.Decode(SampleOf(exit, RawExit(kX86Nr[i], -22)), &d));
    EXPECT_FALSE(d.raw_duplicate);
    EXPECT_EQ(d.phase, DecodedSyscall::Phase::kExit);
    EXPECT_EQ(d.ret, -22);
  }
}

TEST_F(SyscallDecoderRealFormatsTest, RawSyscallNumbersFollowTheTracesArch) {
  trace_.Filter([](const std::string& ev) { return ev.rfind("raw_syscalls:", 0) == 0; });
  trace_.info.arch = "aarch64";
  SyscallDecoder dec = Make();
  const perf::EventAttr* enter = trace_.Attr("raw_syscalls:sys_enter");
  for (size_t i = 0; i < std::size(kAll); ++i) {
    DecodedSyscall d;
    ASSERT_TRUE(dec.Decode(SampleOf(enter, RawEnter(kArm64Nr[i], {1, 2, 3, 4, 5, 6})), &d));
    EXPECT_EQ(d.syscall, kAll[i]);
  }
  DecodedSyscall d;
  // 9 is mmap on x86_64 only (lgetxattr on arm64): not ours here.
  EXPECT_FALSE(dec.Decode(SampleOf(enter, RawEnter(9, {1, 2, 3, 4, 5, 6})), &d));
  // An arch whose numbers we do not know: raw events name no syscall.
  trace_.info.arch = "s390x";
  SyscallDecoder unknown = Make();
  EXPECT_FALSE(unknown.Decode(SampleOf(enter, RawEnter(9, {1, 2, 3, 4, 5, 6})), &d));
  EXPECT_FALSE(unknown.CheckUsable().ok());
}

TEST_F(SyscallDecoderRealFormatsTest, ASyscallMissingItsExitEventComesFromRawAndItsEnterIsDropped) {
  // madvise without both its syscalls:* events; mremap with its enter only.
  trace_.Filter([](const std::string& ev) {
    return ev != "syscalls:sys_enter_madvise" && ev != "syscalls:sys_exit_madvise" &&
           ev != "syscalls:sys_exit_mremap";
  });
  SyscallDecoder dec = Make();
  EXPECT_TRUE(dec.CheckUsable().ok()) << dec.CheckUsable();
  EXPECT_TRUE(dec.uses_raw_syscalls());
  EXPECT_THAT(dec.DescribeSources(), HasSubstr("madvise: raw_syscalls (nr 28)"));
  EXPECT_THAT(dec.DescribeSources(), HasSubstr("mremap: raw_syscalls (nr 25)"));
  EXPECT_THAT(dec.DescribeSources(), HasSubstr("mmap: syscalls:sys_{enter,exit}_mmap"));
  const perf::EventAttr* raw_enter = trace_.Attr("raw_syscalls:sys_enter");
  DecodedSyscall d;
  ASSERT_TRUE(dec.Decode(SampleOf(raw_enter, RawEnter(28, {0x1000, 0x2000, 4, 0, 0, 0})), &d));
  EXPECT_FALSE(d.raw_duplicate);
  EXPECT_EQ(d.syscall, Syscall::kMadvise);
  EXPECT_EQ(d.args[2], 4u);
  ASSERT_TRUE(dec.Decode(SampleOf(raw_enter, RawEnter(9, {0, 0, 0, 0, 0, 0})), &d));
  EXPECT_TRUE(d.raw_duplicate);  // mmap still has its own events
  // The lone syscalls:sys_enter_mremap would count the call twice: dropped.
  const perf::EventAttr* mremap_enter = trace_.Attr("syscalls:sys_enter_mremap");
  ASSERT_NE(mremap_enter, nullptr);
  EXPECT_FALSE(dec.Wanted(mremap_enter, /*raw_duplicates=*/false));
  Payload p(trace_.Format(mremap_enter));
  EXPECT_FALSE(dec.Decode(SampleOf(mremap_enter, p.bytes()), &d));
  EXPECT_FALSE(d.malformed);
}

// 'syscalls:*_mprotect' also matches sys_{enter,exit}_pkey_mprotect: perf
// trace opens that tracepoint twice, and one call comes as two samples.
TEST_F(SyscallDecoderRealFormatsTest, ATracepointOpenedTwiceIsDecodedFromItsFirstAttrOnly) {
  std::vector<const perf::EventAttr*> pkey;
  for (const perf::EventAttr& a : trace_.info.attrs) {
    if (trace_.EventOf(a) == "syscalls:sys_enter_pkey_mprotect") pkey.push_back(&a);
  }
  ASSERT_EQ(pkey.size(), 2u);
  SyscallDecoder dec = Make();
  Payload p(trace_.Format(pkey[0]));
  p.Set("start", 0x10000).Set("len", 0x1000).Set("prot", 3).Set("pkey", 1);
  DecodedSyscall d;
  EXPECT_TRUE(dec.Wanted(pkey[0], false));
  EXPECT_TRUE(dec.Decode(SampleOf(pkey[0], p.bytes()), &d));
  EXPECT_EQ(d.args[3], 1u);
  EXPECT_FALSE(dec.Wanted(pkey[1], false));
  EXPECT_FALSE(dec.Decode(SampleOf(pkey[1], p.bytes()), &d));
}

TEST_F(SyscallDecoderRealFormatsTest, SamplesOfNoKnownEventAreRefusedNotMisread) {
  // A software event (perf trace adds some) and a tracepoint with no format.
  perf::EventAttr sw;
  sw.type = 1;
  sw.name = "dummy:u";
  trace_.info.attrs.push_back(sw);
  perf::EventAttr unknown;
  unknown.type = kTracepoint;
  unknown.config = 999999;
  unknown.name = "syscalls:sys_enter_mmap";  // the name alone is not trusted
  trace_.info.attrs.push_back(unknown);
  SyscallDecoder dec = Make();
  std::vector<uint8_t> raw(128, 0xff);
  DecodedSyscall d;
  for (size_t i = trace_.info.attrs.size() - 2; i < trace_.info.attrs.size(); ++i) {
    const perf::EventAttr* a = &trace_.info.attrs[i];
    EXPECT_FALSE(dec.Wanted(a, true));
    EXPECT_FALSE(dec.Decode(SampleOf(a, raw), &d));
    EXPECT_FALSE(d.malformed);
  }
  EXPECT_FALSE(dec.Decode(SampleOf(nullptr, raw), &d));
  EXPECT_FALSE(dec.Wanted(nullptr, true));
  // An attr of another file (not one of the decoder's): not ours either.
  const perf::EventAttr other = *trace_.Attr("syscalls:sys_enter_mmap");
  EXPECT_FALSE(dec.Decode(SampleOf(&other, raw), &d));
  EXPECT_FALSE(dec.Wanted(&other, true));
}

TEST_F(SyscallDecoderRealFormatsTest, EveryCutPayloadIsMalformedNotACrash) {
  SyscallDecoder dec = Make();
  struct Case {
    const perf::EventAttr* attr;
    std::vector<uint8_t> full;
  };
  std::vector<Case> cases;
  for (Syscall sc : kAll) {
    for (const char* phase : {"enter", "exit"}) {
      const perf::EventAttr* a = trace_.Attr(Specific(phase, sc));
      Payload p(trace_.Format(a));
      cases.push_back({a, p.bytes()});
    }
  }
  // The raw events as the source (another decoder, on raw_syscalls only).
  RealTrace raw_only = RealTrace::Load();
  raw_only.Filter([](const std::string& ev) { return ev.rfind("raw_syscalls:", 0) == 0; });
  auto raw_dec = SyscallDecoder::Create(raw_only.info, *raw_only.td);
  ASSERT_TRUE(raw_dec.ok());
  ASSERT_TRUE(raw_dec->uses_raw_syscalls());
  const SyscallDecoder* raw = &*raw_dec;
  std::vector<std::pair<const SyscallDecoder*, Case>> all;
  for (const Case& c : cases) all.push_back({&dec, c});
  all.push_back({raw, {raw_only.Attr("raw_syscalls:sys_enter"), RawEnter(9, {1, 2, 3, 4, 5, 6})}});
  all.push_back({raw, {raw_only.Attr("raw_syscalls:sys_exit"), RawExit(9, 0)}});
  for (const auto& [decoder, c] : all) {
    SCOPED_TRACE(raw_only.EventOf(*c.attr) + trace_.EventOf(*c.attr));
    DecodedSyscall d;
    ASSERT_TRUE(decoder->Decode(SampleOf(c.attr, c.full), &d));
    for (size_t n = 0; n < c.full.size(); ++n) {
      // A copy of exactly n bytes: a read past it is an ASan error.
      const std::vector<uint8_t> cut(c.full.begin(), c.full.begin() + n);
      EXPECT_FALSE(decoder->Decode(SampleOf(c.attr, cut), &d)) << n;
      EXPECT_TRUE(d.malformed) << n;
    }
    ASSERT_TRUE(decoder->Decode(SampleOf(c.attr, c.full), &d));
    EXPECT_FALSE(d.malformed);  // reset by the next good sample
  }
}

TEST_F(SyscallDecoderRealFormatsTest, WhatCheckUsableRefuses) {
  const RealTrace full = RealTrace::Load();
  // No call chains on the enters: the stacks are the point.
  for (perf::EventAttr& a : trace_.info.attrs) a.sample_type &= ~uint64_t{perf::kSampleCallchain};
  absl::Status s = Make().CheckUsable();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("no call chains"));
  // Chains on the enters only (the recommended dwarf form): fine.
  trace_.info = full.info;
  for (perf::EventAttr& a : trace_.info.attrs) {
    if (trace_.EventOf(a).find(":sys_exit") != std::string::npos) {
      a.sample_type &= ~uint64_t{perf::kSampleCallchain};
    }
  }
  EXPECT_TRUE(Make().CheckUsable().ok()) << Make().CheckUsable();
  // Only exits.
  trace_.info = full.info;
  trace_.Filter([](const std::string& ev) { return ev.find(":sys_exit") != std::string::npos; });
  s = Make().CheckUsable();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("only the enter or only the exit"));
  // Nothing at all.
  trace_.info.attrs.clear();
  s = Make().CheckUsable();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("no memory syscall events"));
  DecodedSyscall d;
  std::vector<uint8_t> raw(64);
  EXPECT_FALSE(Make().Decode(SampleOf(&full.info.attrs[0], raw), &d));
}

TEST_F(SyscallDecoderRealFormatsTest, AnAttrWhoseNameAndFormatDisagreeIsDataLoss) {
  // The attr says sys_enter_mmap, its config is the ID of sys_exit_brk's format.
  perf::EventAttr* mmap_enter = nullptr;
  for (perf::EventAttr& a : trace_.info.attrs) {
    if (trace_.EventOf(a) == "syscalls:sys_enter_mmap") mmap_enter = &a;
  }
  ASSERT_NE(mmap_enter, nullptr);
  mmap_enter->name = "syscalls:sys_enter_mmap";
  mmap_enter->config = trace_.Attr("syscalls:sys_exit_brk")->config;
  const absl::Status s = Make().CheckUsable();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(s.message()), HasSubstr("the attr named syscalls:sys_enter_mmap"));
}

// --- formats built by hand ---

// A TRACING_DATA container (tools/perf/util/trace-event-info.c) with the
// given formats of one system.
std::string Container(const std::string& system, const std::vector<std::string>& formats) {
  std::string out("\x17\x08\x44tracing", 10);
  auto u32 = [&](uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); };
  auto sized = [&](const std::string& s) {
    const uint64_t n = s.size();
    out.append(reinterpret_cast<const char*>(&n), 8);
    out.append(s);
  };
  out.append("0.6", 4);
  out.push_back(0);  // little-endian
  out.push_back(8);  // sizeof(long)
  u32(4096);
  out.append("header_page", 12);
  sized("\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n");
  out.append("header_event", 13);
  sized("# compressed entry header\n");
  u32(0);  // ftrace formats
  u32(1);  // systems
  out.append(system.c_str(), system.size() + 1);
  u32(static_cast<uint32_t>(formats.size()));
  for (const std::string& f : formats) sized(f);
  return out;
}

struct Field {
  std::string decl;  // "unsigned long addr"
  int offset, size;
  bool is_signed;
};

std::string Format(const std::string& name, int id, const std::vector<Field>& fields) {
  std::string s = "name: " + name + "\nID: " + std::to_string(id) +
                  "\nformat:\n"
                  "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
                  "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";
  for (const Field& f : fields) {
    s += "\tfield:" + f.decl + ";\toffset:" + std::to_string(f.offset) +
         ";\tsize:" + std::to_string(f.size) + ";\tsigned:" + (f.is_signed ? "1" : "0") + ";\n";
  }
  return s + "\nprint fmt: \"\"\n";
}

// The attr of tracepoint `id` named `name` ("syscalls:sys_enter_mmap"), with call chains.
perf::EventAttr TracepointAttr(int id, const std::string& name) {
  perf::EventAttr a;
  a.type = kTracepoint;
  a.config = id;
  a.sample_type = perf::kSampleCallchain | perf::kSampleRaw;
  a.name = name;
  return a;
}

// A file of one enter and one exit event, with call chains.
struct Built {
  perf::FileInfo info;
  std::unique_ptr<TracingData> td;

  Built(const std::string& system, const std::string& enter, const std::string& exit,
        const std::string& enter_format, const std::string& exit_format) {
    auto parsed = TracingData::Parse(Container(system, {enter_format, exit_format}));
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    td = std::move(*parsed);
    EXPECT_EQ(td->events_failed(), 0) << (td->failures().empty() ? "" : td->failures()[0]);
    info.attrs.push_back(TracepointAttr(1, system + ":" + enter));
    info.attrs.push_back(TracepointAttr(2, system + ":" + exit));
  }
  SyscallDecoder Make() const {
    auto dec = SyscallDecoder::Create(info, *td);
    EXPECT_TRUE(dec.ok()) << dec.status();
    return std::move(*dec);
  }
};

std::vector<uint8_t> Bytes(size_t n, const std::map<int, std::pair<uint64_t, int>>& at) {
  std::vector<uint8_t> b(n, 0);
  for (const auto& [offset, value_size] : at) std::memcpy(&b[offset], &value_size.first, value_size.second);
  return b;
}

// A kernel with 32-bit fields (a 32-bit kernel's unsigned long, or an int
// ret): read by size, sign-extended where the format says signed.
TEST(SyscallDecoderBuiltFormatsTest, FourByteFieldsAreReadBySizeAndSignExtendedIfSigned) {
  const Built b("syscalls", "sys_enter_munmap", "sys_exit_munmap",
                Format("sys_enter_munmap", 1,
                       {{"int __syscall_nr", 8, 4, true},
                        {"unsigned long addr", 12, 4, false},
                        {"size_t len", 16, 4, false}}),
                Format("sys_exit_munmap", 2, {{"int __syscall_nr", 8, 4, true}, {"int ret", 12, 4, true}}));
  SyscallDecoder dec = b.Make();
  ASSERT_TRUE(dec.CheckUsable().ok()) << dec.CheckUsable();
  DecodedSyscall d;
  ASSERT_TRUE(dec.Decode(SampleOf(&b.info.attrs[0], Bytes(20, {{12, {0xfffff000, 4}}, {16, {0x2000, 4}}})), &d));
  EXPECT_EQ(d.syscall, Syscall::kMunmap);
  EXPECT_EQ(d.args[0], 0xfffff000u);  // unsigned: not sign-extended
  EXPECT_EQ(d.args[1], 0x2000u);
  ASSERT_TRUE(dec.Decode(SampleOf(&b.info.attrs[1], Bytes(16, {{12, {uint32_t(-22), 4}}})), &d));
  EXPECT_EQ(d.ret, -22);
  EXPECT_TRUE(IsErrorReturn(d.ret));
  // The 4-byte field at the very end: one byte short is malformed.
  EXPECT_FALSE(dec.Decode(SampleOf(&b.info.attrs[0], Bytes(19, {})), &d));
  EXPECT_TRUE(d.malformed);
}

TEST(SyscallDecoderBuiltFormatsTest, FieldsOfSizesNoIntegerHasAreMalformedSamplesNotReadsPastThem) {
  for (int size : {3, 5, 16}) {
    SCOPED_TRACE(size);
    const Built b("syscalls", "sys_enter_brk", "sys_exit_brk",
                  Format("sys_enter_brk", 1, {{"unsigned long brk", 16, size, false}}),
                  Format("sys_exit_brk", 2, {{"long ret", 16, size, true}}));
    SyscallDecoder dec = b.Make();
    std::vector<uint8_t> raw(64, 0x11);
    DecodedSyscall d;
    EXPECT_FALSE(dec.Decode(SampleOf(&b.info.attrs[0], raw), &d));
    EXPECT_TRUE(d.malformed);
    EXPECT_FALSE(dec.Decode(SampleOf(&b.info.attrs[1], raw), &d));
    EXPECT_TRUE(d.malformed);
  }
}

TEST(SyscallDecoderBuiltFormatsTest, AnEnterFormatMissingAnArgumentIsNotGuessed) {
  // sys_enter_mprotect without "prot": its calls cannot be replayed from it.
  const Built b("syscalls", "sys_enter_mprotect", "sys_exit_mprotect",
                Format("sys_enter_mprotect", 1,
                       {{"unsigned long start", 16, 8, false}, {"size_t len", 24, 8, false}}),
                Format("sys_exit_mprotect", 2, {{"long ret", 16, 8, true}}));
  SyscallDecoder dec = b.Make();
  EXPECT_FALSE(dec.Wanted(&b.info.attrs[0], false));
  DecodedSyscall d;
  EXPECT_FALSE(dec.Decode(SampleOf(&b.info.attrs[0], std::vector<uint8_t>(40)), &d));
  // Recorded but unreadable: the error names the format and the field, not
  // "record the enters too".
  const absl::Status usable = dec.CheckUsable();
  EXPECT_EQ(usable.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(usable.message(), HasSubstr("the format of syscalls:sys_enter_mprotect has no field `prot`"));
}

TEST(SyscallDecoderBuiltFormatsTest, AnUnreadableFormatBesideUsableOnesIsAWarningNamingTheCallsLost) {
  // munmap's events read, madvise's enter lacks "behavior": a usable trace
  // whose madvise calls are not replayed, said as a warning.
  std::string system = "syscalls";
  auto parsed = TracingData::Parse(Container(
      system, {Format("sys_enter_munmap", 1, {{"unsigned long addr", 16, 8, false}, {"size_t len", 24, 8, false}}),
               Format("sys_exit_munmap", 2, {{"long ret", 16, 8, true}}),
               Format("sys_enter_madvise", 3, {{"unsigned long start", 16, 8, false}, {"size_t len_in", 24, 8, false}}),
               Format("sys_exit_madvise", 4, {{"long ret", 16, 8, true}})}));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  perf::FileInfo info;
  int id = 0;
  for (const char* name : {"sys_enter_munmap", "sys_exit_munmap", "sys_enter_madvise", "sys_exit_madvise"}) {
    info.attrs.push_back(TracepointAttr(++id, system + ":" + name));
  }
  auto dec = SyscallDecoder::Create(info, **parsed);
  ASSERT_TRUE(dec.ok()) << dec.status();
  EXPECT_TRUE(dec->CheckUsable().ok()) << dec->CheckUsable();
  EXPECT_THAT(dec->FormatWarnings(),
              ::testing::ElementsAre("the format of syscalls:sys_enter_madvise has no field `behavior`: "
                                     "madvise calls are not replayed"));
}

TEST(SyscallDecoderBuiltFormatsTest, RawEnterWithFewerThanSixArgsIsNotUsed) {
  const Built b("raw_syscalls", "sys_enter", "sys_exit",
                Format("sys_enter", 1, {{"long id", 8, 8, true}, {"unsigned long args[5]", 16, 40, false}}),
                Format("sys_exit", 2, {{"long id", 8, 8, true}, {"long ret", 16, 8, true}}));
  SyscallDecoder dec = b.Make();
  EXPECT_FALSE(dec.Wanted(&b.info.attrs[0], true));
  std::vector<uint8_t> raw = Bytes(64, {{8, {9, 8}}});
  DecodedSyscall d;
  EXPECT_FALSE(dec.Decode(SampleOf(&b.info.attrs[0], raw), &d));
  EXPECT_THAT(dec.CheckUsable().message(), HasSubstr("only 40 bytes of `args` (6 values need 48)"));
}

}  // namespace
}  // namespace pageblame::decode
