// The heap snapshots of a loaded trace: TRACE.heap beside it (found by the
// trace's name; heap/heap_index.h), by the rule residency snapshots follow
// (residency_load.h):
//   - no file beside the trace: no heap snapshots;
//   - a file beside it that is broken, of another trace, or that another
//     user could have written (base/side_file_trust.h): a warning, and the
//     answer without the split into in use and free;
//   - an answer that is the heap snapshots (`heap -i`) and the file is
//     missing, broken or of another trace: an error (exit 1).
//
//   ASSIGN_OR_RETURN(HeapLoad h, LoadHeap(facts, "t.data", {}, /*force=*/false));
//   if (h.warning) say(*h.warning);   // Session::Open does this
#ifndef PAGEBLAME_SESSION_HEAP_LOAD_H_
#define PAGEBLAME_SESSION_HEAP_LOAD_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "processor/heap/heap_index.h"
#include "processor/residency/residency_index.h"

namespace pageblame::session {

struct HeapRequest {
  bool off = false;       // not loaded at all
  bool required = false;  // the answer is the heap snapshots
};

struct HeapLoad {
  std::unique_ptr<heap::HeapIndex> index;  // null: none
  std::optional<std::string> warning;      // "warning: ..."
};

absl::StatusOr<HeapLoad> LoadHeap(const residency::TraceFacts& facts, const std::string& trace_path,
                                  const HeapRequest& request, bool force);

}  // namespace pageblame::session

#endif  // PAGEBLAME_SESSION_HEAP_LOAD_H_
