// The residency snapshots of a loaded trace: TRACE.rss beside it (found by
// the trace's name), or the file the user names. One rule for the CLI and
// the plugin:
//   - no file beside the trace: no snapshots, resident bytes unknown;
//   - a file beside it that is broken, of another trace, or that another
//     user could have written (base/side_file_trust.h): a warning, and the
//     answer without resident bytes (the user did not ask for them);
//   - a file the user named (--rss FILE), or an answer that needs resident
//     bytes (--sort rss), and it is missing, broken or of another trace: an
//     error (exit 1).
//
//   ASSIGN_OR_RETURN(ResidencyLoad r, LoadResidency(FactsOf(idx, info, "t.data"), "t.data", {}));
//   if (r.warning) say(*r.warning);   // Session::Open does this for every front end
#ifndef PAGEBLAME_SESSION_RESIDENCY_LOAD_H_
#define PAGEBLAME_SESSION_RESIDENCY_LOAD_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "processor/index/trace_index.h"
#include "processor/perf/perf_records.h"
#include "processor/residency/residency_index.h"

namespace pageblame::session {

struct ResidencyRequest {
  std::optional<std::string> path;  // --rss FILE
  bool off = false;                 // --no-rss
  bool required = false;            // the answer needs resident bytes
  // -f/--force: TRACE.rss is used even where another user could have
  // written it (base/side_file_trust.h; a file the user names is theirs).
  bool force = false;
};

struct ResidencyLoad {
  std::unique_ptr<residency::ResidencyIndex> index;  // null: none
  std::optional<std::string> warning;                // "warning: ..."
};

// What a snapshot file (or runtime table) is checked against: the trace's
// clock, start, end, pids. The end is known for a trace recorded with perf's
// clock data (-k) read from `trace_path`: its last write, on the trace's
// clock; else 0 (unknown).
residency::TraceFacts FactsOf(const index::TraceIndex& idx, const perf::FileInfo& info,
                              const std::string& trace_path = "");

absl::StatusOr<ResidencyLoad> LoadResidency(const residency::TraceFacts& facts, const std::string& trace_path,
                                            const ResidencyRequest& request);

}  // namespace pageblame::session

#endif  // PAGEBLAME_SESSION_RESIDENCY_LOAD_H_
