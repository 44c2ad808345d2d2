// The unwinder on real --call-graph dwarf recordings (traces/), and on
// samples made bad on purpose.
#include "processor/unwind/unwinder.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "processor/base/temp_dir_for_test.h"
#include "processor/unwind/owned_sample_for_test.h"
#include "processor/unwind/trace_driver_for_test.h"

namespace pageblame::unwind {
namespace {

using testing::DriveTrace;
using testing::SharedSymfs;
using testing::TracePath;

Unwinder::Options TestOptions() {
  Unwinder::Options o;
  o.locator.symfs = SharedSymfs().path();
  return o;
}

symbols::SymbolizerOptions SymOptions() {
  symbols::SymbolizerOptions o;
  o.symfs = SharedSymfs().path();
  return o;
}

// "leaf <- caller <- ..." symbol names of an unwound stack.
std::string Names(symbols::Symbolizer& sym, const perf::Sample& s, const std::vector<uint64_t>& ips) {
  std::vector<std::string> names;
  for (uint64_t ip : ips) names.push_back(sym.Symbolize(s.pid, s.time, ip).symbol.value_or("?"));
  return absl::StrJoin(names, " <- ");
}

// The enter samples of a trace, copied, with an unwinder fed every mapping.
struct Recorded {
  std::unique_ptr<symbols::MappingHistory> maps;  // first: outlives the unwinder
  std::unique_ptr<Unwinder> unwinder;
  std::vector<OwnedSample> samples;
};
Recorded Record(const std::string& trace, Unwinder::Options options) {
  Recorded r;
  r.maps = std::make_unique<symbols::MappingHistory>();
  options.mappings = r.maps.get();
  r.unwinder = std::make_unique<Unwinder>(std::move(options));
  DriveTrace(TracePath(trace), r.maps.get(), [&](const perf::Sample& s) { r.samples.emplace_back(s); });
  return r;
}

TEST(UnwinderTest, TheSameSampleTwiceGivesTheSameIpsFromTheCache) {
  Recorded r = Record("alloc-dwarf.data", TestOptions());
  ASSERT_FALSE(r.samples.empty());
  Unwinder& u = *r.unwinder;
  std::vector<uint64_t> first, second;
  for (const OwnedSample& s : r.samples) {
    u.Unwind(s.sample, &first);
    const UnwindStats before = u.stats();
    u.Unwind(s.sample, &second);
    const UnwindStats after = u.stats();
    EXPECT_EQ(first, second);
    EXPECT_GT(first.size(), 2u);
    // Every rule the second unwind needed came from the cache.
    EXPECT_EQ(after.rule_misses, before.rule_misses);
    // (one lookup per frame stepped by CFI, and one for the outermost)
    EXPECT_GE(after.rule_hits - before.rule_hits, after.frames_cfi - before.frames_cfi);
    EXPECT_GT(after.rule_hits, before.rule_hits);
  }
}

TEST(UnwinderTest, ACutStackCopyKeepsTheLeafFramesAndSaysWhy) {
  Recorded r = Record("alloc-dwarf.data", TestOptions());
  Unwinder& u = *r.unwinder;
  std::vector<uint64_t> full, cut;
  int partial = 0;
  for (OwnedSample s : r.samples) {
    u.Unwind(s.sample, &full);
    // The copy cut down to its first 64 bytes (what a tiny stack-size=
    // records), and to nothing.
    for (size_t keep : {size_t{64}, size_t{0}}) {
      if (s.stack.size() <= keep) continue;
      OwnedSample c = s;
      c.stack.resize(keep);
      c.Repoint();
      const UnwindStats before = u.stats();
      u.Unwind(c.sample, &cut);
      ASSERT_FALSE(cut.empty());  // the leaf, from the registers
      ASSERT_LE(cut.size(), full.size());
      EXPECT_TRUE(std::equal(cut.begin(), cut.end(), full.begin()));
      if (cut.size() < full.size()) {
        ++partial;
        EXPECT_EQ(u.stats().stop_stack_end, before.stop_stack_end + 1);
      }
    }
  }
  EXPECT_GT(partial, 30);
}

TEST(UnwinderTest, RegistersOfAnotherAbiOrWithoutIpSpAreNotUnwound) {
  Recorded r = Record("alloc-dwarf.data", TestOptions());
  Unwinder& u = *r.unwinder;
  std::vector<uint64_t> ips = {1, 2};
  OwnedSample s = r.samples.front();
  s.sample.regs_abi = perf::kRegsAbi32;  // a 32-bit process
  u.Unwind(s.sample, &ips);
  EXPECT_TRUE(ips.empty());
  EXPECT_EQ(u.stats().other_abi, 1u);
  OwnedSample m = r.samples.front();
  m.attr.sample_regs_user &= ~(uint64_t{1} << 8);  // no ip
  u.Unwind(m.sample, &ips);
  EXPECT_TRUE(ips.empty());
  EXPECT_EQ(u.stats().mask_lacks_ip_sp, 1u);
  OwnedSample none = r.samples.front();
  none.sample.regs_abi = perf::kRegsAbiNone;
  none.regs.clear();
  none.Repoint();
  u.Unwind(none.sample, &ips);
  EXPECT_TRUE(ips.empty());
  EXPECT_EQ(u.stats().no_registers, 1u);
  // Registers cut short by the parser (REGS_USER past the record) are the
  // same as none; a flagged stack copy is counted and still unwound.
  OwnedSample flagged = r.samples.front();
  flagged.sample.user_copy_error = perf::UserCopyError::kDynSizeTooBig;
  u.Unwind(flagged.sample, &ips);
  EXPECT_FALSE(ips.empty());
  EXPECT_EQ(u.stats().cut_copies, 1u);
  // Another architecture's trace: nothing is read as x86-64 registers.
  Unwinder::Options arm = TestOptions();
  arm.mappings = r.maps.get();
  arm.x86_64 = false;
  Unwinder other(arm);
  other.Unwind(r.samples.front().sample, &ips);
  EXPECT_TRUE(ips.empty());
  EXPECT_EQ(other.stats().other_abi, 1u);
}

TEST(UnwinderTest, FilesThatCannotBeFoundGivePartialStacksNotCrashes) {
  // A --symfs where nothing is: no ELF file, no CFI. The leaf always stays;
  // frame pointers take over where a frame keeps one (the test programs
  // and ld.so do not, libc does not).
  TempDir empty("pb_unwind_empty");
  Unwinder::Options o;
  o.locator.symfs = empty.path();  // and no build-id cache, no /usr/lib/debug
  Recorded r = Record("alloc-dwarf.data", o);
  std::vector<uint64_t> ips;
  for (const OwnedSample& s : r.samples) {
    r.unwinder->Unwind(s.sample, &ips);
    ASSERT_FALSE(ips.empty());
  }
  const UnwindStats st = r.unwinder->stats();
  EXPECT_EQ(st.frames_cfi, 0u);
  EXPECT_GT(st.files_missing, 0u);
  EXPECT_EQ(st.files_opened, 0u);
  EXPECT_EQ(st.samples, r.samples.size());
}

// File order is not time order: perf writes each CPU's buffer in turn, and
// in a fresh recording of the .NET app (one round) CPU 0's MMAP2 records of
// System.Private.CoreLib and the JIT's memfd code came before CPU 1's COMM
// exec of dotnet, which is older. Those mappings were kept in the epoch
// before the exec, and the stacks stopped at the first JIT or CoreLib frame
// ("no module"). Here the bundled recording's real samples are unwound with
// every mapping read before every fork and exec: the stacks must be the ones
// of file order.
TEST(UnwinderTest, MappingsReadBeforeTheirExecGiveTheSameStacks) {
  const std::string trace = "dotnet/dotnet-leak.data";
  Recorded in_order = Record(trace, TestOptions());
  ASSERT_GT(in_order.samples.size(), 1000u);

  symbols::MappingHistory maps;
  Unwinder::Options late_options = TestOptions();
  late_options.mappings = &maps;
  Unwinder late_exec(late_options);
  auto reader_or = perf::PerfReader::Open(TracePath(trace));
  ASSERT_TRUE(reader_or.ok()) << reader_or.status();
  perf::PerfReader& reader = **reader_or;
  for (const perf::BuildIdEntry& b : reader.info().build_ids) maps.AddBuildId(b.filename, b.build_id);
  struct Task {
    bool exec;
    uint32_t pid, ppid;
    uint64_t time;
  };
  std::vector<Task> tasks;  // fed after every mapping
  perf::RawRecord rec;
  while (true) {
    auto more = reader.Next(&rec);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    if (rec.type == perf::kRecordMmap || rec.type == perf::kRecordMmap2) {
      perf::MmapRecord m;
      if (!reader.ParseMmap(rec, &m).ok() || m.cpumode == perf::kMiscKernel) continue;
      if (!(m.prot & PROT_EXEC)) continue;
      maps.AddMapping(m.pid, m.sample_id.time, m.start, m.len, m.pgoff, m.filename, m.build_id);
    } else if (rec.type == perf::kRecordFork) {
      perf::TaskRecord t;
      if (reader.ParseTask(rec, &t).ok()) tasks.push_back({false, t.pid, t.ppid, t.time});
    } else if (rec.type == perf::kRecordComm) {
      perf::CommRecord c;
      if (reader.ParseComm(rec, &c).ok() && c.exec) {
        tasks.push_back({true, c.pid, 0, c.sample_id.time});
      }
    }
  }
  ASSERT_TRUE(std::any_of(tasks.begin(), tasks.end(), [](const Task& t) { return t.exec; }));
  for (const Task& t : tasks) {
    if (t.exec) {
      maps.OnExec(t.pid, t.time);
    } else {
      maps.OnFork(t.pid, t.ppid, t.time);
    }
  }

  std::vector<uint64_t> want, got;
  for (const OwnedSample& s : in_order.samples) {
    in_order.unwinder->Unwind(s.sample, &want);
    late_exec.Unwind(s.sample, &got);
    ASSERT_EQ(got, want) << "sample at " << s.sample.time;
  }
  EXPECT_EQ(late_exec.stats().stop_no_module, 0u);
  EXPECT_GT(late_exec.stats().frames_jit, 1000u);
}

TEST(UnwinderTest, AllocDwarfStacksReachTheProgramsFunctions) {
  auto maps = std::make_shared<symbols::MappingHistory>();
  Unwinder::Options o = TestOptions();
  o.mappings = maps.get();
  Unwinder u(o);
  symbols::Symbolizer sym(SymOptions(), maps);
  std::vector<uint64_t> ips;
  std::set<std::string> seen;
  int samples = 0;
  DriveTrace(TracePath("alloc-dwarf.data"), maps.get(), [&](const perf::Sample& s) {
    u.Unwind(s, &ips);
    ++samples;
    std::string names = Names(sym, s, ips);
    for (const char* fn : {"cache_block", "grow_log", "zeroed_table", "spawn_workers", "main",
                           "make_inline_buffer"}) {
      if (names.find(fn) != std::string::npos) seen.insert(fn);
    }
  });
  EXPECT_GT(samples, 30);
  EXPECT_EQ(seen.size(), 6u) << absl::StrJoin(seen, ",");
  // Every stack goes all the way: libc, ld.so and the program have CFI,
  // and each stack ends at _start, clone3 or ld.so's _dl_start_user.
  const UnwindStats st = u.stats();
  EXPECT_EQ(st.samples, static_cast<uint64_t>(samples));
  EXPECT_EQ(st.stop_end, st.samples);
  EXPECT_EQ(st.frames_fp, 0u);
  EXPECT_EQ(st.files_missing, 0u);
}

}  // namespace
}  // namespace pageblame::unwind
