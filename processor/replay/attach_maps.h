// AttachMaps: the kernel's table of an attached process's mappings, read by
// `pageblame record -p` once perf records, and saved beside the trace as
// TRACE.attach-maps, so that replay knows the address space at the attach
// page for page (Replayer reconciles its state with it at that moment).
//
// Why: perf reports the mappings a process already has by reading
// /proc/PID/maps before it enables its events (perf record -d), and reports
// only readable or executable ones (tools/perf/util/synthetic-events.c skips
// PROT_NONE reservations: a .NET GC's hundreds of GiB, a glibc arena's
// uncommitted tail). So a replay of an attached recording missed every
// reservation older than the attach, and anything the process changed
// while perf was starting (seen: a 64 KiB piece of a glibc arena, a page of
// .NET's memfd:doublemapper). The recorder reads the table after perf's
// events are on (perf answered a control ping), so every later change is
// in the trace; replay takes the table as the truth at the moment its
// reading began.
//
// Format (text, one record per line; change Format and Parse together):
//   pageblame-attach-maps 1
//   clock CLOCKID                     the clock of the times (perf's -k: 1, CLOCK_MONOTONIC)
//   process PID FROM TO               one per process: when its table's reading began and ended (ns)
//   START-END PERMS OFFSET DEV INODE [PATH]   its /proc/PID/maps lines, as the kernel wrote them
//   end N                             N: the number of processes
// The kernel escapes a newline in a path (\012), so a line is a row.
//
//   std::string text = AttachMaps::Format(CLOCK_MONOTONIC, tables);
//   ASSIGN_OR_RETURN(AttachMaps maps, AttachMaps::Parse(text, "t.data.attach-maps"));
#ifndef PAGEBLAME_REPLAY_ATTACH_MAPS_H_
#define PAGEBLAME_REPLAY_ATTACH_MAPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pageblame::replay {

class AttachMaps {
 public:
  struct Row {
    uint64_t start = 0, end = 0;  // [start, end), page-aligned
    uint32_t prot = 0;            // PROT_*
    bool shared = false;          // 's' (MAP_SHARED), else private
    uint64_t pgoff = 0;
    std::string path;  // "" for anonymous memory; "[heap]", "[stack]", a file
  };
  struct Table {
    uint32_t pid = 0;
    uint64_t from = 0, to = 0;  // when the reading began and ended
    std::vector<Row> rows;      // in address order, disjoint
  };

  static std::string PathFor(absl::string_view trace);  // "TRACE.attach-maps"
  // The file's text: `maps` is each table's /proc/PID/maps text as read.
  struct Read {
    uint32_t pid = 0;
    uint64_t from = 0, to = 0;
    std::string maps;
  };
  static std::string Format(int32_t clockid, const std::vector<Read>& reads);
  // Parses the file's text; errors name `name`, the line and what was
  // expected there.
  static absl::StatusOr<AttachMaps> Parse(absl::string_view text, absl::string_view name);
  // One /proc/PID/maps line (fs/proc/task_mmu.c show_map_vma()).
  static absl::StatusOr<Row> ParseRow(absl::string_view line);

  int32_t clockid() const { return clockid_; }
  const std::vector<Table>& tables() const { return tables_; }

 private:
  int32_t clockid_ = 0;
  std::vector<Table> tables_;
};

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_ATTACH_MAPS_H_
