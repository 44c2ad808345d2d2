// One `perf script --dlfilter pageblame-dlfilter.so` run: everything between
// the dlfilter's start and stop, independent of perf's C API (dlfilter.cc is
// the thin C shim around it).
//
//   ASSIGN_OR_RETURN(auto s, FilterSession::Start(dlargs, env));   // parses, indexes the trace
//   for each sample:  keep = s->Keep(view);             // O(log calls of the thread)
//   for each sample perf will print:  s->Printed(view, resolve);
//   s->Finish(stdout);                                  // the summary
//
// Start() loads the same perf.data that perf script reads with the pageblame
// library (replay::LoadTrace), so the kept calls and the answers are the
// library's: the calls of the requested pages' histories (PageSelection),
// found again among perf's samples by thread and time (KeepSet). A sample is
// kept iff it is a memory-syscall event (EventClassifier) of a kept call, or,
// with no pages/regions, any memory-syscall event (of pid=N if given).
//
// perf may read one chunk of a recording perf wrote in chunks (record
// --max-size, perf record --switch-output): Start() then loads the whole
// recording (RecordingInput: all its chunks, or its folded index), so the
// answers are `pageblame query -i TRACE`'s, and perf prints the samples of
// the kept calls in the chunk it reads; the summary counts the others by the
// chunks they are in (earlier or later: SeenSpan), so none is silently missing.
//
// One more sample is kept: a raw_syscalls:sys_exit that comes right after a
// kept call's last sample on the same thread, for the same syscall. The
// kernel fires raw_syscalls and syscalls:* probes from the same tracepoint
// in registration order, which differs between recordings (an attached
// `perf trace record -p` can put syscalls:sys_exit_X first); the library
// (replay/load_pass.cc) only attaches a raw duplicate that precedes its call's
// sample, so such a raw exit lies just outside [first_time, last_time].
#ifndef PAGEBLAME_PLUGIN_FILTER_SESSION_H_
#define PAGEBLAME_PLUGIN_FILTER_SESSION_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "plugin/dlfilter_options.h"
#include "plugin/event_classifier.h"
#include "plugin/keep_set.h"
#include "plugin/page_selection.h"
#include "plugin/perf_frame_names.h"
#include "plugin/recording_input.h"
#include "processor/session/session.h"
#include "processor/residency/residency_index.h"

namespace pageblame::plugin {

// The parts of perf's sample the plugin reads.
struct SampleView {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t time = 0;
  const char* event = nullptr;  // perf's event name, stable per event
  absl::Span<const uint8_t> raw;
  absl::Span<const uint64_t> callchain;  // perf's raw chain, with PERF_CONTEXT_* markers
};

// Where perf script runs: its command line and whether stdin is a FIFO.
struct PerfEnvironment {
  std::vector<std::string> argv;
  bool stdin_is_fifo = false;
};

class FilterSession {
 public:
  using Resolve = PerfFrameNames::Resolver;

  static absl::StatusOr<std::unique_ptr<FilterSession>> Start(const std::vector<std::string>& dlargs,
                                                              const PerfEnvironment& env);

  // True: perf should print this sample. Cheap: asked for every sample
  // before perf resolves it (the dlfilter's filter_event_early).
  bool Keep(const SampleView& s);
  // A kept sample that passed perf's own filters too (filter_event): counts
  // it and, if its call's stack is printed in the summary, names the frames
  // with `resolve` (which resolves ips in the context of this sample).
  void Printed(const SampleView& s, Resolve resolve);

  // Writes the summary to print after perf's events (nothing with
  // summary=none) to `out`.
  void Finish(std::FILE* out) const;
  // With summary=json or none, what the text summary would say of a chunk
  // (ChunkNote), for stderr: the JSON alone goes to stdout. "" otherwise.
  std::string StderrNote() const;

  const std::string& trace_path() const { return path_; }
  // Warnings to show once at start (lost events), one per line.
  const std::vector<std::string>& warnings() const { return warnings_; }
  uint64_t memory_samples() const { return memory_samples_; }
  uint64_t printed_samples() const { return printed_samples_; }
  size_t kept_calls() const { return keep_.size(); }

 private:
  FilterSession() = default;
  // The kept call a memory sample belongs to (invalid: drop it).
  EventId CallOf(const SampleView& s);
  // For a chunk of a recording: which one, and how many kept calls perf
  // printed nothing of because they are in its other chunks; "" otherwise.
  std::string ChunkNote() const;

  DlfilterOptions options_;
  RecordingInput input_;
  std::string path_;  // the recording loaded (input_.recording)
  SeenSpan seen_;     // the times of every sample perf handed us
  std::unique_ptr<session::Session> trace_;
  std::unique_ptr<PageSelection> selection_;
  std::unique_ptr<EventClassifier> classifier_;
  std::vector<Target> targets_;
  KeepSet keep_;
  absl::flat_hash_set<EventId> printed_stacks_;  // still to be named by perf
  PerfFrameNames names_;
  absl::flat_hash_map<EventId, uint32_t> samples_;  // printed samples per call
  // Per thread: the kept call whose last sample was the thread's latest
  // memory sample (a raw exit raw_duplicate may follow), and the last raw_duplicate kept so.
  absl::flat_hash_map<uint32_t, EventId> ended_;
  struct RawDuplicate {
    uint64_t time;
    EventId id;
  };
  absl::flat_hash_map<uint32_t, RawDuplicate> trailing_raw_duplicate_;
  std::vector<std::string> warnings_;
  uint64_t at_ = index::kEndOfTrace;  // the summary's moment (options_.at, resolved)
  uint64_t memory_samples_ = 0;
  uint64_t printed_samples_ = 0;
};

}  // namespace pageblame::plugin

#endif  // PAGEBLAME_PLUGIN_FILTER_SESSION_H_
