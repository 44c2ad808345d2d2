#include "processor/replay/trace_loader.h"

#include <sys/stat.h>

#include "processor/base/status_macros.h"
#include "processor/replay/load_pass.h"

namespace pageblame::replay {
namespace {

// One pass over the file. With Ordering::kLanes, returns null if the trace
// broke the lane rule (the caller loads again with kRounds).
absl::StatusOr<std::unique_ptr<LoadedTrace>> LoadOnce(const LoadOptions& options,
                                                      ReplayWorker::Ordering ordering) {
  LoadPass pass(options, ordering);
  RETURN_IF_ERROR(pass.Open());
  return pass.Run();
}

}  // namespace

LoadedView LoadedView::Of(const LoadedTrace& t) {
  LoadedView v;
  v.index = &t.index();
  v.info = &t.info();
  v.sources = &t.sources();
  v.format_warnings = &t.format_warnings();
  v.unwind = t.unwind_stats();
  v.mappings = &t.symbolizer().mappings();
  v.dso_lookups = &t.dso_lookups();
  v.attach_maps = &t.attach_maps();
  return v;
}

absl::StatusOr<std::unique_ptr<LoadedTrace>> LoadTrace(const LoadOptions& options) {
  // The lane order needs a second pass when a trace breaks its rule, so only
  // a regular file (not stdin or a FIFO) is loaded that way.
  struct stat st;
  const bool file = !options.chunks.empty() ||
                    (options.path != "-" && ::stat(options.path.c_str(), &st) == 0 && S_ISREG(st.st_mode));
  if (file && !options.perf_rounds_only && !options.next_chunk) {
    ASSIGN_OR_RETURN(std::unique_ptr<LoadedTrace> t,
                     LoadOnce(options, ReplayWorker::Ordering::kLanes));
    if (t) return t;
  }
  return LoadOnce(options, ReplayWorker::Ordering::kRounds);
}

}  // namespace pageblame::replay
