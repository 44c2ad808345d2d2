// What of a .NET process's memory is not the runtime's, from the trace
// alone: its address space as the trace replays it at the moment of a runtime
// table, minus that table. The table is the latest one `pageblame record`
// saved beside the trace (regions/runtime_table_store.h) at or before the
// selected time, or the file the user names (--maddress FILE: then at the
// selected time). The pieces are what `attribute --unaccounted` attributes;
// no dump is needed.
//
//   ASSIGN_OR_RETURN(Unaccounted u, UnaccountedOf(session, selection, std::nullopt));
//   Attribute(idx, u.pieces, {.at = u.time, .pid = u.pid, ...});
//
// The process: --pid, else the only one selected, else the only one with
// saved tables. Saved tables are side files (base/side_file_trust.h): where
// another user could have written them (the trace's directory is shared and
// TRACE.runtime/ or a table is not root's or yours, or others may write it)
// they are not used unless the session's `force`; nor is a table stamped
// outside the recording: before it began, or after its last residency
// snapshot (when there is one: `record` takes one at the stop, when it saves tables),
// else after the trace file's last write, with TraceFacts::kEndSlack.
// Errors: no pid chosen where that leaves several (a usage
// error), no table saved for the process at or before the time (NotFound,
// saying how to get one), a named table that cannot be read.
#ifndef PAGEBLAME_SESSION_UNACCOUNTED_H_
#define PAGEBLAME_SESSION_UNACCOUNTED_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "processor/regions/region.h"
#include "processor/session/selection.h"
#include "processor/session/session.h"

namespace pageblame::session {

struct Unaccounted {
  uint32_t pid = 0;
  uint64_t time = 0;        // the moment compared (the table's, or --at's)
  std::string table;        // the runtime table's path
  bool saved = false;       // a table `record` saved (else one the user named)
  uint64_t committed = 0;   // the process's accessible bytes then
  uint64_t bytes = 0;       // of those, not the runtime's
  std::vector<regions::Region> pieces;  // disjoint, bytes descending
};

absl::StatusOr<Unaccounted> UnaccountedOf(const Session& session, const Selection& selection,
                                          const std::optional<std::string>& runtime_table);

// The process's mappings at `time` as a /proc maps-like table (format
// "maps": "---" protections are reservations).
regions::RegionTable AddressSpaceAt(const index::TraceIndex& idx, uint32_t process, uint64_t time);

}  // namespace pageblame::session

#endif  // PAGEBLAME_SESSION_UNACCOUNTED_H_
