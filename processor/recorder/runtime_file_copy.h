// RuntimeFileCopy: at the stop, `pageblame record` keeps the perf map and
// the jitdump a recorded process's runtime writes (/tmp/perf-PID.map,
// /tmp/jit-PID.dump: .NET, node --perf-basic-prof) in TRACE.runtime/, as
// they are then, so that the trace names its JIT frames by itself: after
// /tmp is cleaned, the process ended, or its pid was reused, and without
// the cut tail of a file the runtime is still writing (symbols/perf_map.h
// looks in TRACE.runtime/ first).
//
// Only whole records are kept: the perf map up to its last complete line,
// the jitdump up to its last complete record (symbols::JitDump::WholeLength).
// The files are read by the rule every side file in /tmp is
// (base/side_file_trust.h: one another user could have written is not
// copied), and written through RecordingFiles (made new, 0600).
//
//   RuntimeFileCopy::Result r = RuntimeFileCopy::Copy(files.get(), {pid}, "/tmp");
#ifndef PAGEBLAME_RECORDER_RUNTIME_FILE_COPY_H_
#define PAGEBLAME_RECORDER_RUNTIME_FILE_COPY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "processor/recorder/recording_files.h"

namespace pageblame::recorder {

class RuntimeFileCopy {
 public:
  struct Result {
    std::vector<std::string> copied;  // the copies' paths
    std::vector<std::string> errors;  // one per file that is there but was not copied
  };
  static Result Copy(RecordingFiles* files, const std::vector<uint32_t>& pids, const std::string& tmp_dir);
  // What of a perf map to keep: up to its last newline.
  static size_t WholeLines(absl::string_view text);
};

}  // namespace pageblame::recorder

#endif  // PAGEBLAME_RECORDER_RUNTIME_FILE_COPY_H_
