// Shared helpers for the real-trace tests: the traces/manifest.tsv rows, the
// kernel's /proc/PID/maps files, and page sets to compare them with replay.
#ifndef PAGEBLAME_TESTS_TRACE_FIXTURES_H_
#define PAGEBLAME_TESTS_TRACE_FIXTURES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "processor/replay/trace_loader.h"
#include "processor/session/session.h"

namespace pageblame::testing {

inline std::string SourceDir() { return PAGEBLAME_SOURCE_DIR; }
inline std::string TracePath(const std::string& name) { return SourceDir() + "/traces/" + name; }
// The pid of the bundled .NET recording, from its runtime table's name
// (traces/dotnet/dotnet-leak.PID.clr-regions.txt); "" if there is none.
std::string DotnetPid();

// A path for a file or directory a test writes: inside a directory of this
// test process's own (a TempDir, processor/base/temp_dir_for_test.h), which
// is removed with all it holds when the process exits (ctest runs every
// test in its own process, so files named per process, left behind, piled
// up by the thousand).
std::string ScratchPath(const std::string& name);

// The whole file at `path`, as bytes ("" if it cannot be read: the caller's
// checks on its content then fail, naming what they expected).
std::string ReadText(const std::string& path);

// How the tests load a trace of traces/: its path, and the checked-in
// build-id cache (traces/buildid-cache) as perf's --buildid-dir, so the
// recorded binaries are found by build id in any checkout (their recorded
// paths are those of the recording machine).
replay::LoadOptions TraceLoadOptions(const std::string& name);
// The same as a session's options (what every test that reads answers uses).
session::SessionOptions TraceSessionOptions(const std::string& name);

// One row of traces/manifest.tsv (one recorded process).
struct ManifestRow {
  std::map<std::string, std::string> fields;
  const std::string& operator[](const std::string& k) const { return fields.at(k); }
};
std::vector<ManifestRow> ReadManifest();

// A set of pages as disjoint half-open ranges.
class PageSet {
 public:
  void Add(uint64_t start, uint64_t end);
  void Remove(uint64_t start, uint64_t end);
  PageSet Minus(const PageSet& other) const;
  PageSet Intersect(const PageSet& other) const;
  uint64_t Bytes() const;
  bool operator==(const PageSet& o) const { return ranges_ == o.ranges_; }
  bool empty() const { return ranges_.empty(); }
  // The first few ranges, for failure messages.
  std::string Describe(size_t limit = 8) const;
  const absl::btree_map<uint64_t, uint64_t>& ranges() const { return ranges_; }

 private:
  absl::btree_map<uint64_t, uint64_t> ranges_;  // start -> end
};

struct MapsRow {
  uint64_t start, end, offset;
  std::string perms, path;
};
std::vector<MapsRow> ReadMapsFile(const std::string& path);

// One mapping of a /proc/PID/smaps file (the kernel's resident bytes per
// mapping: the oracle of the residency tests).
struct SmapsRow {
  MapsRow map;
  uint64_t rss = 0, swap = 0;  // bytes
};
std::vector<SmapsRow> ReadSmapsFile(const std::string& path);

// One row of a truth file (traces/truth/NAME.PID.tsv, written by the traced
// program itself; format in traces/MANIFEST.md, "Truth files"): a range it
// made, the prot it has at the end, the function the creating call's stack
// names (origin) and the one the committing call's stack names ("-": none).
// via: "raw" (the syscall is in that function: fp stacks name it) or "libc"
// (only DWARF stacks reach it).
struct TruthRow {
  uint64_t start = 0, end = 0;
  std::string prot, origin, commit, via, what;
};
// The rows of TracePath(path) (or of an absolute path: a file a live test's
// program wrote); empty if it cannot be read.
std::vector<TruthRow> ReadTruth(const std::string& path);

// Where a path perf recorded on the recording machine is in this checkout:
// any <prefix>/traces/bin/NAME (the traces were recorded from checkouts at
// /work/main and /work/wt/recordings) -> <src>/traces/bin/NAME; other paths
// under /work/main/traces/ -> <src>/traces/...; others unchanged.
std::string LocalPath(const std::string& recorded);

// Pages of a maps file, minus what the kernel made at exec: [stack], [vdso],
// [vvar], [vvar_vclock], [vsyscall], and the PT_LOAD span (bss included) of
// the executable and its interpreter at their load bias. `exe` is the path as
// recorded; its ELF is read from LocalPath(exe).
PageSet ProcessMadePages(const std::vector<MapsRow>& rows, const std::string& exe);
PageSet AllPages(const std::vector<MapsRow>& rows);

// A fresh --symfs root (ScratchPath(name)) in which each
// recorded path is a symlink to `local` (default: LocalPath(recorded)), so
// symbols are found in any checkout. perf's --symfs semantics: every DSO is
// looked for under the root only.
std::string MakeSymfs(const std::string& name, const std::vector<std::string>& recorded_paths);
std::string MakeSymfs(const std::string& name,
                      const std::vector<std::pair<std::string, std::string>>& recorded_to_local);

}  // namespace pageblame::testing

#endif  // PAGEBLAME_TESTS_TRACE_FIXTURES_H_
