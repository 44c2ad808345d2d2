#include "processor/recorder/runtime_file_copy.h"

#include <unistd.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "processor/base/side_file_trust.h"
#include "processor/symbols/jit_dump.h"

namespace pageblame::recorder {

size_t RuntimeFileCopy::WholeLines(absl::string_view text) {
  const size_t last = text.rfind('\n');
  return last == absl::string_view::npos ? 0 : last + 1;
}

RuntimeFileCopy::Result RuntimeFileCopy::Copy(RecordingFiles* files, const std::vector<uint32_t>& pids,
                                              const std::string& tmp_dir) {
  Result out;
  for (uint32_t pid : pids) {
    for (bool jitdump : {false, true}) {
      const std::string name = jitdump ? absl::StrCat("jit-", pid, ".dump") : absl::StrCat("perf-", pid, ".map");
      const std::string path = absl::StrCat(tmp_dir, "/", name);
      if (::access(path.c_str(), F_OK) != 0) continue;
      absl::StatusOr<std::unique_ptr<InputFile>> f =
          OpenSideFile(path, jitdump ? "jitdump" : "perf map", /*force=*/false);
      absl::StatusOr<std::string> bytes = f.ok() ? (*f)->ReadAll() : absl::StatusOr<std::string>(f.status());
      if (!bytes.ok()) {
        out.errors.emplace_back(bytes.status().message());
        continue;
      }
      const size_t keep = jitdump ? symbols::JitDump::WholeLength(*bytes) : WholeLines(*bytes);
      if (keep == 0) continue;  // nothing whole yet
      absl::Status s = files->WriteRuntimeTable(name, absl::string_view(*bytes).substr(0, keep));
      if (s.ok()) {
        out.copied.push_back(files->RuntimeTablePath(name));
      } else {
        out.errors.emplace_back(s.message());
      }
    }
  }
  return out;
}

}  // namespace pageblame::recorder
