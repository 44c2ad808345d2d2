#include "processor/session/session.h"

#include <utility>

#include "processor/base/status_macros.h"
#include "processor/replay/trace_loader.h"
#include "processor/session/load_warnings.h"

namespace pageblame::session {

absl::StatusOr<std::unique_ptr<Session>> Session::Open(const SessionOptions& options) {
  replay::LoadOptions o;
  o.path = options.path;
  o.symbols = options.symbols;
  o.symbols.trace_path = options.path;
  o.symbols.force = options.force;
  o.progress = options.progress;
  o.time_unwinding = options.time_unwinding;
  o.preload_symbols = options.preload_symbols;
  o.raw_duplicate_times = options.raw_duplicate_times;
  ASSIGN_OR_RETURN(std::unique_ptr<replay::LoadedTrace> trace, replay::LoadTrace(o));
  return Of(std::move(trace), options);
}

absl::StatusOr<std::unique_ptr<Session>> Session::Of(std::unique_ptr<replay::LoadedTrace> trace,
                                                     const SessionOptions& options) {
  std::unique_ptr<Session> s(new Session(std::move(trace), options));
  RETURN_IF_ERROR(s->LoadSideFiles());
  return s;
}

Session::Session(std::unique_ptr<replay::LoadedTrace> trace, SessionOptions options)
    : options_(std::move(options)), trace_(std::move(trace)) {
  frames_ = std::make_unique<StackFrames>(trace_->index(), trace_->symbolizer());
}

Session::~Session() = default;

const index::TraceIndex& Session::index() const { return trace_->index(); }
symbols::Symbolizer& Session::symbolizer() const { return trace_->symbolizer(); }
const perf::FileInfo& Session::info() const { return trace_->info(); }
const std::string& Session::sources() const { return trace_->sources(); }
const unwind::UnwindStats* Session::unwind_stats() const { return trace_->unwind_stats(); }

// The load's warnings first, then the residency file's (it is the answer's
// resident bytes that are missing).
absl::Status Session::LoadSideFiles() {
  warnings_ = LoadWarnings(*trace_);
  ResidencyRequest request = options_.residency;
  request.force = options_.force;
  ASSIGN_OR_RETURN(ResidencyLoad rss, LoadResidency(Facts(), options_.path, request));
  residency_ = std::move(rss.index);
  if (rss.warning) warnings_.push_back(*rss.warning);
  return absl::OkStatus();
}

}  // namespace pageblame::session
