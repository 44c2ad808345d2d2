// A JIT symbol map, /tmp/perf-PID.map, as described in perf's
// tools/perf/Documentation/jit-interface.txt and read by
// dso__load_perf_map() in tools/perf/util/symbol.c. Written by node
// --perf-basic-prof, the JVM's perf-map-agent, .NET's DOTNET_PerfMapEnabled,
// CPython's -X perf...: one line per code blob,
//
//   START SIZE name with spaces
//
// START and SIZE in hex (with or without "0x"); the name runs to the end of
// the line. Addresses are absolute (no file offsets involved).
//
//   ASSIGN_OR_RETURN(PerfMap map, PerfMap::Load("/tmp/perf-1234.map", /*force=*/false));
//   if (const PerfMap::Entry* e = map.Find(ip)) Print(e->name, ip - e->start);
//
// JITs reuse code space, so entries can overlap; a later line wins over the
// part of an earlier one it covers (the file is append-only, so later lines
// describe newer code). Find() is O(log n).
#ifndef PAGEBLAME_SYMBOLS_PERF_MAP_H_
#define PAGEBLAME_SYMBOLS_PERF_MAP_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/status/statusor.h"

namespace pageblame::symbols {

class PerfMap {
 public:
  struct Entry {
    uint64_t start = 0;  // of the whole blob as the line gave it
    uint64_t end = 0;    // exclusive
    std::string name;
  };

  // Reads and parses a map file. NotFound if there is none; another error
  // (naming the file) if it is a directory, FIFO, device, or larger than
  // InputFile::kTextLimit; PermissionDenied if it lies in a directory anyone
  // can write and another user could have written it, unless `force`
  // (base/side_file_trust.h: anyone can create /tmp/perf-PID.map).
  static absl::StatusOr<PerfMap> Load(const std::string& path, bool force);
  // Parses map text; malformed lines are skipped and counted.
  static PerfMap Parse(std::string_view text);

  // Where perf-`pid`.map is looked for, in order: TRACE.runtime/ (where
  // `pageblame record` copies the files of the processes it recorded, as
  // they were at the stop), beside the trace file,
  // `tmp_dir` (where the JITs write it: "/tmp"; tests give their own), then
  // `perf_map_dir` (empty arguments are left out, and a directory named
  // twice is looked in once).
  static std::vector<std::string> CandidatePaths(uint32_t pid, std::string_view trace_path,
                                                 std::string_view tmp_dir, std::string_view perf_map_dir);
  // The name perf gives the DSO of JIT code: "/tmp/perf-PID.map" (map__new()
  // in tools/perf/util/map.c), whichever directory the file was read from.
  static std::string DsoName(uint32_t pid);
  // The same places for any file a JIT writes beside its perf map
  // ("jit-PID.dump").
  static std::vector<std::string> CandidatePathsOf(std::string_view file_name, std::string_view trace_path,
                                                   std::string_view tmp_dir, std::string_view perf_map_dir);

  // The entry covering `addr` (the newest, where entries overlap), or nullptr.
  const Entry* Find(uint64_t addr) const;

  size_t size() const { return entries_.size(); }
  size_t bad_lines() const { return bad_lines_; }

  // Adds a blob [start, end); it wins over the part of any earlier one it
  // covers (the files are logs: later means newer code).
  void Add(Entry entry);

 private:
  struct Piece {
    uint64_t end = 0;
    uint32_t entry = 0;  // index into entries_
  };

  std::vector<Entry> entries_;
  absl::btree_map<uint64_t, Piece> pieces_;  // disjoint, keyed by start
  size_t bad_lines_ = 0;
};

}  // namespace pageblame::symbols

#endif  // PAGEBLAME_SYMBOLS_PERF_MAP_H_
