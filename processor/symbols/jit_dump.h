// A JIT's jitdump file, jit-PID.dump, as specified in perf's
// tools/perf/Documentation/jitdump-specification.txt and read by
// `perf inject --jit` (tools/perf/util/jitdump.c). .NET writes one beside its
// perf map (DOTNET_PerfMapEnabled=1 or 2) and, unlike the perf map, it names
// ReadyToRun code: the precompiled framework methods that run from the
// `r-xp` mapping of System.Private.CoreLib.dll and the other .dll files
// ("... NativeMemory::Alloc(native uint)[PreJIT]").
//
//   ASSIGN_OR_RETURN(JitDump dump, JitDump::Load("/tmp/jit-1234.dump", 1234, /*force=*/false));
//   if (!dump.warning().empty()) Warn(dump.warning());   // a record that cannot be right
//   if (verbose && !dump.cut_note().empty()) Note(dump.cut_note());  // the last record cut
//   if (const PerfMap::Entry* e = dump.map().Find(ip)) Print(e->name);
//
// A dump whose last record is cut by the end of the file is what a running
// JIT leaves at any moment (it appends a record in several writes): normal,
// so it is a note, not a warning. `pageblame record` copies the dump of a
// process it recorded beside the trace at the stop, whole records only
// (WholeLength).
//
// Layout (native byte order, told by the magic): a header (magic "JiTD" as
// 0x4A695444, version, header size, ELF machine, pad, pid, timestamp, flags),
// then records, each `id, total_size, timestamp` and a body. Read here:
// JIT_CODE_LOAD (0: pid, tid, vma, code address, code size, code index,
// NUL-terminated name, then the code bytes) and JIT_CODE_MOVE (1: the code
// of an index moved). Other records (debug info, unwinding info, close, ids
// not known yet) are skipped by their size, as perf does. A later record
// wins over the part of an earlier one it covers, as in a perf map.
#ifndef PAGEBLAME_SYMBOLS_JIT_DUMP_H_
#define PAGEBLAME_SYMBOLS_JIT_DUMP_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "processor/symbols/perf_map.h"

namespace pageblame::symbols {

class JitDump {
 public:
  // Reads `path`, the jitdump of process `pid`, through OpenSideFile (so one
  // in /tmp another user could have written is refused unless `force`).
  // NotFound if there is none; InvalidArgument naming the file if it is no
  // jitdump (its first bytes, offset 0), the other byte order, or the dump
  // of another process (the header's pid). A dump cut short (the JIT was
  // still writing, or died) is no error: the records before the cut are
  // kept and warning() names the offset.
  static absl::StatusOr<JitDump> Load(const std::string& path, uint32_t pid, bool force);
  // Parses the bytes of a dump; `name` only labels messages.
  static absl::StatusOr<JitDump> Parse(absl::string_view bytes, uint32_t pid, absl::string_view name);
  // How many leading bytes of `bytes` hold the header and whole records
  // (0 if the header is not whole, or this is no jitdump): what to keep of
  // a dump its JIT is still writing.
  static size_t WholeLength(absl::string_view bytes);

  // jit-`pid`.dump beside the trace, in `tmp_dir`, in `perf_map_dir`: the
  // places PerfMap::CandidatePaths looks for perf-`pid`.map.
  static std::vector<std::string> CandidatePaths(uint32_t pid, std::string_view trace_path,
                                                 std::string_view tmp_dir, std::string_view perf_map_dir);
  // The DSO name of code a jitdump names in anonymous memory: "/tmp/jit-PID.dump".
  static std::string DsoName(uint32_t pid);

  const PerfMap& map() const { return map_; }
  uint64_t code_loads() const { return code_loads_; }
  const std::string& warning() const { return warning_; }
  // "" unless the last record is cut by the end of the file.
  const std::string& cut_note() const { return cut_note_; }

 private:
  void ReadRecords(absl::string_view bytes, size_t offset, absl::string_view name);

  PerfMap map_;
  uint64_t code_loads_ = 0;
  std::string warning_;   // "" unless a record was bad
  std::string cut_note_;  // "" unless the last record was cut by the end of the file
};

}  // namespace pageblame::symbols

#endif  // PAGEBLAME_SYMBOLS_JIT_DUMP_H_
