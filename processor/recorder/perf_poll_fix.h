// PerfPollFix: where `pageblame record` finds its fix for perf's spin
// (perf_poll_shim.c, built as lib/pageblame-perf-poll.so beside
// bin/pageblame), and whether a running perf has it loaded.
//
// perf attached per thread (-p) spins on a core once a thread it records
// has ended (perf_poll_shim.c says why); the shim, preloaded into perf,
// stops that. perf runs as root: the library is used only when it, and the
// directory holding it, can be written by nobody but root or the user
// running pageblame (else another user could put code into perf).
//
//   absl::StatusOr<std::string> fix = PerfPollFix::Locate();
//   if (fix.ok()) run_options.preload = *fix;  // LD_PRELOAD for perf
//   ...
//   if (!PerfPollFix::LoadedIn(perf_pid, *fix)) warn;  // perf setuid, or static
#ifndef PAGEBLAME_RECORDER_PERF_POLL_FIX_H_
#define PAGEBLAME_RECORDER_PERF_POLL_FIX_H_

#include <sys/types.h>

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pageblame::recorder {

class PerfPollFix {
 public:
  static constexpr char kFileName[] = "pageblame-perf-poll.so";
  // <directory of this executable>/../lib/pageblame-perf-poll.so, checked
  // as above. NotFound or PermissionDenied, naming the file, otherwise.
  static absl::StatusOr<std::string> Locate();
  // The same for a library at `path` (tests).
  static absl::Status Check(const std::string& path);
  // Whether /proc/PID/maps text maps `path`.
  static bool Maps(absl::string_view proc_maps, const std::string& path);
  // Whether process `pid` (perf, once it runs) has `path` mapped.
  static bool LoadedIn(pid_t pid, const std::string& path);
};

}  // namespace pageblame::recorder

#endif  // PAGEBLAME_RECORDER_PERF_POLL_FIX_H_
