// RegisterSet::CopyKnown and ReadSampleRegisters against what they replace
// (a whole set's copy then KeepOnly; a popcount of the mask per register),
// over random sets, masks and register dumps.
#include "processor/unwind/register_set.h"

#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "processor/unwind/sample_registers.h"

namespace pageblame::unwind {
namespace {

// Every register's known bit and value, as Get says.
void ExpectSameRegisters(const RegisterSet& a, const RegisterSet& b) {
  for (int reg = -1; reg <= x86_64::kNumRegs; ++reg) {
    uint64_t va = 0, vb = 0;
    const bool ka = a.Get(reg, &va), kb = b.Get(reg, &vb);
    ASSERT_EQ(ka, kb) << "register " << reg;
    if (ka) {
      EXPECT_EQ(va, vb) << "register " << reg;
    }
  }
  EXPECT_EQ(a.pc(), b.pc());
  EXPECT_EQ(a.sp(), b.sp());
}

TEST(RegisterSetTest, CopyKnownIsACopyThenKeepOnly) {
  std::mt19937_64 rng(42);
  for (int round = 0; round < 2000; ++round) {
    RegisterSet from, stale;
    for (int reg = 0; reg < x86_64::kNumRegs; ++reg) {
      if (rng() % 3 != 0) from.Set(reg, rng());
      if (rng() % 2 != 0) stale.Set(reg, rng());  // what the target held before
    }
    const uint32_t mask = round == 0 ? 0 : round == 1 ? ~0u : static_cast<uint32_t>(rng());
    RegisterSet want = from;
    want.KeepOnly(mask);
    RegisterSet got = stale;
    got.CopyKnown(from, mask);
    ExpectSameRegisters(got, want);
    // Into itself: the same as KeepOnly.
    RegisterSet self = from;
    self.CopyKnown(self, mask);
    ExpectSameRegisters(self, want);
  }
}

// The old reading: register r's value is the u64 after as many as the
// mask has bits below its perf number, if the dump holds it.
RegisterSet Reference(uint64_t mask, const std::vector<uint64_t>& dump) {
  RegisterSet out;
  for (int reg = 0; reg < x86_64::kNumRegs; ++reg) {
    const int p = x86_64::kPerfRegOf[reg];
    if (!(mask & (uint64_t{1} << p))) continue;
    size_t k = 0;
    for (int b = 0; b < p; ++b) k += (mask >> b) & 1;
    if (k < dump.size()) out.Set(reg, dump[k]);
  }
  return out;
}

TEST(SampleRegistersTest, EachRegisterTakesItsPlaceInTheDumpForAnyMask) {
  std::mt19937_64 rng(7);
  perf::EventAttr attr;
  const uint64_t ip_sp = (uint64_t{1} << x86_64::kPerfRegIp) | (uint64_t{1} << x86_64::kPerfRegSp);
  // perf's --call-graph dwarf mask (every x86-64 register: flags and
  // segments too, which the unwinder skips), the ABI's few, random ones
  // (bits past the registers the unwinder knows included).
  std::vector<uint64_t> masks = {(uint64_t{1} << 24) - 1, ip_sp | (1u << 6), ip_sp};
  for (int i = 0; i < 500; ++i) masks.push_back(rng() | ip_sp);
  for (uint64_t mask : masks) {
    const size_t bits = static_cast<size_t>(__builtin_popcountll(mask));
    // The whole dump, and cut short (the parser checks its size; the
    // reading must still not run past it).
    for (size_t n : {bits, bits / 2, size_t{0}}) {
      std::vector<uint64_t> dump(n);
      for (uint64_t& v : dump) v = rng();
      std::vector<uint8_t> bytes(8 * n);
      if (n > 0) std::memcpy(bytes.data(), dump.data(), bytes.size());
      attr.sample_regs_user = mask;
      perf::Sample s;
      s.attr = &attr;
      s.regs_abi = perf::kRegsAbi64;
      s.user_regs = bytes;
      RegisterSet got;
      got.Set(x86_64::kR15, 1);  // overwritten: the result is the sample's alone
      const RegsResult r = ReadSampleRegisters(s, /*x86_64=*/true, &got);
      const RegisterSet want = Reference(mask, dump);
      const bool has_ip_sp = want.Known(x86_64::kRip) && want.Known(x86_64::kRsp);
      EXPECT_EQ(r, has_ip_sp ? RegsResult::kOk : RegsResult::kNone) << std::hex << mask << " " << n;
      ExpectSameRegisters(got, want);
    }
  }
}

}  // namespace
}  // namespace pageblame::unwind
