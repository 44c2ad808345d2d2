// For the unwind tests: reads a real trace into a mapping history as the
// loader does (MMAP/MMAP2 records, FORK, COMM exec), handing each sample that
// has a user stack copy to a callback.
#ifndef PAGEBLAME_UNWIND_TRACE_DRIVER_FOR_TEST_H_
#define PAGEBLAME_UNWIND_TRACE_DRIVER_FOR_TEST_H_

#include <sys/mman.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "processor/base/temp_dir_for_test.h"
#include "processor/perf/perf_reader.h"
#include "processor/symbols/symbolizer.h"
#include "processor/unwind/unwinder.h"

namespace pageblame::unwind::testing {

inline std::string TracePath(const std::string& name) {
  return std::string(PAGEBLAME_SOURCE_DIR) + "/traces/" + name;
}

// A --symfs root where the paths the traces were recorded with resolve in
// this checkout: /usr is this machine's, and the programs, recorded as
// /work/main/traces/bin/NAME (earlier: /work/wt/recordings/traces/bin/NAME;
// traces/MANIFEST.md), are this checkout's traces/bin, wherever it is.
class Symfs {
 public:
  Symfs() : dir_("pb_unwind_symfs") {
    namespace fs = std::filesystem;
    fs::create_symlink("/usr", dir_.path() + "/usr");
    for (const char* recorded : {"/work/main/traces", "/work/wt/recordings/traces"}) {
      fs::create_directories(dir_.path() + recorded);
      fs::create_symlink(TracePath("bin"), dir_.path() + recorded + "/bin");
    }
  }
  const std::string& path() const { return dir_.path(); }

 private:
  TempDir dir_;
};

// One Symfs for a whole test binary (made on first use, never removed
// before exit: every test's unwinder may hold paths into it).
inline const Symfs& SharedSymfs() {
  static const Symfs* symfs = new Symfs();
  return *symfs;
}

// Calls `on_sample` for every sample with REGS_USER (file order), after
// adding the records read so far to `maps` as the loader does (MMAP/MMAP2,
// FORK, COMM exec; replay/load_pass.cc).
inline void DriveTrace(const std::string& path, symbols::MappingHistory* maps,
                       const std::function<void(const perf::Sample&)>& on_sample) {
  auto reader_or = perf::PerfReader::Open(path);
  ASSERT_TRUE(reader_or.ok()) << reader_or.status();
  perf::PerfReader& reader = **reader_or;
  for (const perf::BuildIdEntry& b : reader.info().build_ids) maps->AddBuildId(b.filename, b.build_id);
  perf::RawRecord rec;
  while (true) {
    auto more = reader.Next(&rec);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    if (rec.type == perf::kRecordMmap || rec.type == perf::kRecordMmap2) {
      perf::MmapRecord m;
      if (!reader.ParseMmap(rec, &m).ok() || m.cpumode == perf::kMiscKernel) continue;
      if (!(m.prot & PROT_EXEC)) continue;  // code only, as the loader's history
      maps->AddMapping(m.pid, m.sample_id.time, m.start, m.len, m.pgoff, m.filename, m.build_id);
    } else if (rec.type == perf::kRecordFork) {
      perf::TaskRecord t;
      if (reader.ParseTask(rec, &t).ok()) maps->OnFork(t.pid, t.ppid, t.time);
    } else if (rec.type == perf::kRecordComm) {
      perf::CommRecord c;
      if (reader.ParseComm(rec, &c).ok() && c.exec) maps->OnExec(c.pid, c.sample_id.time);
    } else if (rec.type == perf::kRecordSample) {
      perf::Sample s;
      if (!reader.ParseSample(rec, &s).ok()) continue;
      if (s.attr->sample_type & perf::kSampleRegsUser) on_sample(s);
    }
  }
}

}  // namespace pageblame::unwind::testing

#endif  // PAGEBLAME_UNWIND_TRACE_DRIVER_FOR_TEST_H_
