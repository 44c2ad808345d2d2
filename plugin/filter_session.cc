#include "plugin/filter_session.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "plugin/perf_command_line.h"
#include "plugin/summary_writer.h"
#include "processor/base/status_macros.h"
#include "processor/base/text_escape.h"
#include "processor/session/selection.h"

namespace pageblame::plugin {

namespace {

// The recording `in` names, loaded as the CLI loads it (session/session.h):
// a trace, the chunks of a recording in order, or a folded index.
absl::StatusOr<std::unique_ptr<session::Session>> OpenRecording(const RecordingInput& in,
                                                                const PerfEnvironment& env) {
  session::SessionOptions so;
  so.path = in.recording;
  const PerfSymbolPaths perf_paths = SymbolPathsFromArgv(env.argv, std::getenv("PERF_BUILDID_DIR"));
  so.symbols.debug_dir = perf_paths.buildid_dir;
  so.symbols.symfs = perf_paths.symfs;
  // perf script -f: perf reads another user's /tmp/perf-PID.map, and so do
  // we (and the other side files beside the trace).
  so.force = ForceFromArgv(env.argv);
  // keep_set.h: a call's samples include its raw duplicates. A folded
  // recording's index (TRACE.index) was made without their times: the
  // recorder's perf records no raw_syscalls, so its spans are whole.
  so.raw_duplicate_times = !in.folded;
  // TRACE.rss beside the trace, as the CLI finds it; a broken one is a
  // warning (the summary is still given, without resident bytes).
  absl::StatusOr<std::unique_ptr<session::Session>> s = session::Session::Open(so);
  if (s.ok() || !in.is_chunk) return s;
  return absl::Status(s.status().code(), absl::StrCat(in.perf_input, " is ", in.Describe(),
                                                      ", read as one recording: ", s.status().message()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<FilterSession>> FilterSession::Start(
    const std::vector<std::string>& dlargs, const PerfEnvironment& env) {
  std::unique_ptr<FilterSession> s(new FilterSession());
  ASSIGN_OR_RETURN(s->options_, ParseDlfilterArgs(dlargs));
  // A chunk of a recording: the whole recording is loaded (recording_input.h).
  ASSIGN_OR_RETURN(s->input_,
                   RecordingInput::Of(TraceInputFromArgv(env.argv, env.stdin_is_fifo), s->options_.trace));
  s->path_ = s->input_.recording;
  RETURN_IF_ERROR(CheckRereadable(s->path_));
  ASSIGN_OR_RETURN(s->trace_, OpenRecording(s->input_, env));
  const index::TraceIndex& idx = s->trace_->index();

  auto numbers = EventClassifier::NumbersForArch(s->trace_->info().arch);
  if (!numbers) {
    return absl::UnimplementedError(absl::StrCat(
        s->path_, ": recorded on arch '", s->trace_->info().arch,
        "', whose syscall numbers the plugin does not know (x86_64, aarch64, riscv64)"));
  }
  s->classifier_ = std::make_unique<EventClassifier>(*numbers);

  // The same rules as the CLI's: a pid not in the trace is an error naming
  // its pids, a time outside it one naming its span.
  ASSIGN_OR_RETURN(session::Selection chosen,
                   session::Resolve({s->options_.pid, s->options_.at}, *s->trace_, session::PeakOf::kMapped));
  s->at_ = chosen.at;
  s->selection_ = std::make_unique<PageSelection>(idx, chosen.processes);
  s->targets_ = s->selection_->Targets(s->options_);
  for (const Target& t : s->targets_) s->selection_->AddHistoryCalls(t, &s->keep_);
  s->keep_.Finalize();
  SummaryWriter w(*s->trace_, *s->selection_, s->options_.pid, s->at_, s->names_, s->samples_,
                  s->trace_->residency());
  for (EventId id : w.PrintedStacks(s->targets_)) s->printed_stacks_.insert(id);

  // What the CLI warns about, the plugin says too.
  s->warnings_ = s->trace_->warnings();
  s->warnings_.insert(s->warnings_.end(), chosen.notes.begin(), chosen.notes.end());
  return s;
}

EventId FilterSession::CallOf(const SampleView& s) {
  bool last = false;
  EventId id = keep_.Find(s.tid, s.time, &last);
  auto ended = ended_.find(s.tid);
  if (id.valid()) {
    if (last) {
      ended_[s.tid] = id;
    } else if (ended != ended_.end()) {
      ended_.erase(ended);
    }
    return id;
  }
  if (ended == ended_.end()) return id;
  // The raw_syscalls exit raw_duplicate recorded after its call's exit (see header).
  EventId prev = ended->second;
  ended_.erase(ended);
  std::optional<decode::Syscall> raw_exit = classifier_->RawExit(s.event, s.raw);
  if (!raw_exit || *raw_exit != trace_->index().event(prev).syscall) return id;
  trailing_raw_duplicate_[s.tid] = RawDuplicate{s.time, prev};
  return prev;
}

bool FilterSession::Keep(const SampleView& s) {
  seen_.Add(s.time);
  if (!classifier_->IsMemorySyscall(s.event, s.raw)) return false;
  ++memory_samples_;
  if (options_.keep_all()) return !options_.pid || s.pid == *options_.pid;
  return CallOf(s).valid();
}

void FilterSession::Printed(const SampleView& s, Resolve resolve) {
  ++printed_samples_;
  if (options_.keep_all()) return;
  EventId id = keep_.Find(s.tid, s.time);
  if (auto t = trailing_raw_duplicate_.find(s.tid); !id.valid() && t != trailing_raw_duplicate_.end() &&
                                            t->second.time == s.time) {
    id = t->second.id;
  }
  if (!id.valid()) return;
  ++samples_[id];
  // Name the frames of a printed stack while a sample of that very call is
  // at hand (perf resolves in the sample's thread), once per call. The
  // frames are the call's interned stack: the sample's own chain for
  // frame-pointer traces, the unwound copy for --call-graph dwarf ones
  // (whose chain perf hands a dlfilter holds no user frames).
  if (auto it = printed_stacks_.find(id); it != printed_stacks_.end()) {
    const index::CallEvent& ev = trace_->index().event(id);
    const std::vector<uint64_t> frames = trace_->index().stacks().Ips(ev.stack);
    if (!frames.empty()) names_.Note(ev.pid, frames, resolve);
    printed_stacks_.erase(it);
  }
}

std::string FilterSession::ChunkNote() const {
  if (!input_.is_chunk || options_.keep_all()) return "";
  uint64_t before = 0, after = 0;
  for (EventId id : keep_.Ids()) {
    if (samples_.contains(id)) continue;
    const SeenSpan::Where w = seen_.Of(trace_->index().event(id));
    before += w == SeenSpan::Where::kBefore;
    after += w == SeenSpan::Where::kAfter;
  }
  std::string out = absl::StrCat(
      "pageblame: ", EscapeName(input_.perf_input), " is ", EscapeName(input_.Describe()),
      ": the answers are the whole recording's (pageblame query -i ", EscapeName(path_),
      "); perf printed the samples of the calls in this chunk only");
  if (before + after == 0) return absl::StrCat(out, ": all of the ", keep_.size(), " calls are in it\n");
  absl::StrAppend(&out, ": ", before + after, " of the ", keep_.size(), " calls are in its other chunks (", before,
                  " earlier", input_.folded ? ", folded" : "", ", ", after, " later)\n");
  if (input_.folded) {
    // Nothing perf reads here is in the index: the chunk came after it.
    absl::StrAppend(&out, "pageblame: the calls of this chunk are not in the answers: ",
                    "they came after what the recorder folded (see its warning above)\n");
  }
  return out;
}

std::string FilterSession::StderrNote() const {
  return options_.summary == Summary::kText ? "" : ChunkNote();
}

void FilterSession::Finish(std::FILE* out) const {
  if (options_.summary == Summary::kNone) return;
  SummaryWriter w(*trace_, *selection_, options_.pid, at_, names_, samples_, trace_->residency());
  if (input_.is_chunk) w.SetReadSpan(&seen_);
  if (options_.summary == Summary::kJson) {
    // Only the JSON, so the output after perf's events parses as one array.
    if (options_.keep_all()) {
      std::fputs("[]\n", out);
    } else {
      w.WriteJson(targets_, out);  // a failed write leaves `out`'s error flag set
    }
    return;
  }
  std::string text;
  if (!options_.keep_all()) text = w.Text(targets_);
  absl::StrAppend(&text, "\npageblame: perf printed ", printed_samples_, " of ", memory_samples_,
                  " memory-syscall samples",
                  options_.keep_all() ? "" : absl::StrCat(" (of ", keep_.size(), " calls)"), " from ",
                  EscapeName(input_.is_chunk ? input_.perf_input : path_), "\n", ChunkNote());
  // Names are escaped where they enter the text (SummaryWriter); this is
  // the last line of defence, as pageblame's OutputFile::WriteText.
  const std::string escaped = EscapeText(std::move(text));
  std::fwrite(escaped.data(), 1, escaped.size(), out);
}

}  // namespace pageblame::plugin
