#include "processor/session/heap_load.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "processor/base/side_file_trust.h"
#include "processor/heap/heap_snapshot_file.h"

namespace pageblame::session {

absl::StatusOr<HeapLoad> LoadHeap(const residency::TraceFacts& facts, const std::string& trace_path,
                                  const HeapRequest& request, bool force) {
  HeapLoad out;
  if (request.off) return out;
  const std::string path = heap::HeapSnapshotPathFor(trace_path);
  struct stat st;
  if (trace_path == "-" || ::stat(path.c_str(), &st) != 0) {
    if (request.required) {
      return absl::FailedPreconditionError(absl::StrCat(
          "no heap snapshots: ", trace_path == "-" ? "a trace read from a pipe has none beside it"
                                                    : absl::StrCat(path, " does not exist"),
          " (pageblame record writes TRACE.heap beside the trace for processes whose malloc is glibc's)"));
    }
    return out;
  }
  absl::StatusOr<std::unique_ptr<InputFile>> file = OpenSideFile(path, heap::kHeapFileWhat, force);
  absl::StatusOr<heap::HeapIndex> index =
      file.ok() ? heap::HeapIndex::Load(**file, facts) : absl::StatusOr<heap::HeapIndex>(file.status());
  if (!index.ok()) {
    if (request.required) return index.status();
    out.warning = absl::StrCat("warning: ", index.status().message(), "; in use and free bytes are left out");
    return out;
  }
  out.index = std::make_unique<heap::HeapIndex>(*std::move(index));
  return out;
}

}  // namespace pageblame::session
