// The unwinder on real --call-graph dwarf recordings (traces/), and on
// samples made bad on purpose.
#include "processor/unwind/unwinder.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "processor/unwind/trace_driver_for_test.h"

namespace pageblame::unwind {
namespace {

using testing::DriveTrace;
using testing::TracePath;

const testing::Symfs& SharedSymfs() {
  static const testing::Symfs* symfs = new testing::Symfs();
  return *symfs;
}

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

TEST(UnwinderTest, AllocDwarfStacksReachTheProgramsFunctions) {
  Unwinder u(TestOptions());
  symbols::Symbolizer sym(SymOptions());
  std::vector<uint64_t> ips;
  std::set<std::string> seen;
  int samples = 0;
  DriveTrace(TracePath("alloc-dwarf.data"), &u, &sym, [&](const perf::Sample& s) {
    u.Unwind(s, &ips);
    ++samples;
    std::string names = Names(sym, s, ips);
    for (const char* fn : {"cache_block", "grow_log", "zeroed_table", "spawn_workers", "main",
                           "make_inline_buffer"}) {
      if (names.find(fn) != std::string::npos) seen.insert(fn);
    }
    if (samples < 100) printf("%s\n", names.c_str());
  });
  EXPECT_GT(samples, 30);
  EXPECT_EQ(seen.size(), 6u) << absl::StrJoin(seen, ",");
  UnwindStats st = u.stats();
  printf("samples %lu frames %lu cfi %lu fp %lu jit %lu end %lu nomod %lu nocfi %lu stackend %lu bad %lu notabove %lu hits %lu misses %lu\n",
         st.samples, st.frames, st.frames_cfi, st.frames_fp, st.frames_jit, st.stop_end,
         st.stop_no_module, st.stop_no_cfi, st.stop_stack_end, st.stop_bad_read, st.stop_not_above,
         st.rule_hits, st.rule_misses);
}

}  // namespace
}  // namespace pageblame::unwind
