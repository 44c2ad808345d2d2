#include "processor/session/session.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "processor/base/atomic_file.h"
#include "processor/base/input_file.h"
#include "processor/base/side_file_trust.h"
#include "processor/base/status_macros.h"
#include "processor/base/text_escape.h"
#include "processor/perf/chunk_files.h"
#include "processor/replay/recording_file.h"
#include "processor/replay/trace_loader.h"
#include "processor/session/checkpoint_note.h"
#include "processor/session/load_warnings.h"

namespace pageblame::session {

namespace {

replay::LoadOptions LoadOptionsOf(const SessionOptions& options) {
  replay::LoadOptions o;
  o.path = options.path;
  o.symbols = options.symbols;
  o.symbols.trace_path = options.path;
  o.symbols.force = options.force;
  o.progress = options.progress;
  o.time_unwinding = options.time_unwinding;
  o.preload_symbols = options.preload_symbols;
  o.raw_duplicate_times = options.raw_duplicate_times;
  // No TRACE but TRACE.<timestamp> files: a recording perf wrote in chunks
  // (record --max-size), read as one.
  struct stat st;
  if (o.path != "-" && IsCheckpointIndex(replay::RecordingFile::PathFor(o.path, o.raw_duplicate_times))) {
    // A recorder killed while it folded (record --max-size): what it left of
    // perf's chunks cannot be read as a trace; its checkpoint is the recording.
    o.folded = true;
    return o;
  }
  if (o.path != "-" && ::stat(o.path.c_str(), &st) != 0 && errno == ENOENT) {
    o.chunks = perf::ChunkFiles::Of(o.path);
    // Neither: the recorder folded every chunk into TRACE.index and removed them.
    const std::string index = replay::RecordingFile::PathFor(o.path, o.raw_duplicate_times);
    o.folded = o.chunks.empty() && ::stat(index.c_str(), &st) == 0;
  }
  return o;
}

// The recording kept in the trace's index, or null (none, not trusted,
// stale, damaged: `note` says which).
std::unique_ptr<replay::LoadedTrace> FromIndex(const replay::LoadOptions& o, const replay::RecordingFile::Identity& id,
                                               std::string* note) {
  const std::string path = replay::RecordingFile::PathFor(o.path, o.raw_duplicate_times);
  if (::access(path.c_str(), F_OK) != 0) return nullptr;
  using Loaded = absl::StatusOr<std::unique_ptr<replay::LoadedTrace>>;
  Loaded t = [&]() -> Loaded {
    ASSIGN_OR_RETURN(std::unique_ptr<InputFile> f, OpenSideFile(path, "index", o.symbols.force));
    // It decides every answer, and pageblame writes it 0600: one that
    // another user owns or could have rewritten is not used, wherever it
    // lies (replayed instead; -f does not change that, the replay is there).
    RETURN_IF_ERROR(TrustedInSharedDir(f->fd(), path));
    // Read a piece at a time: never the whole file, nor its body, in memory.
    return replay::RecordingFile::Decode(*f, path, id, o.symbols);
  }();
  if (t.ok()) {
    *note = absl::StrCat("loaded from ", path,
                         (*t)->checkpoint() ? " (the checkpoint of a recording that was not stopped: every answer warns how far it goes)" : "");
    return *std::move(t);
  }
  *note = absl::StrCat(t.status().message(), o.folded ? "" : "; the trace is replayed");
  return nullptr;
}

// After a replay: the index beside the trace, for the next command. Not
// written is no failure (a directory of someone else's, a full disk): the
// next command replays too.
bool WriteIndex(const replay::LoadedTrace& t, const replay::LoadOptions& o, const replay::RecordingFile::Identity& id,
                std::string* note) {
  const std::string path = replay::RecordingFile::PathFor(o.path, o.raw_duplicate_times);
  // Into the file as it is encoded and compressed: the index's tables are
  // the memory it takes, not its bytes as well.
  uint64_t size = 0;
  absl::Status s = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(std::unique_ptr<AtomicFile> f, AtomicFile::Create(path, 0600));
    RETURN_IF_ERROR(replay::RecordingFile::Write(replay::LoadedView::Of(t), id, 0, nullptr, f.get()));
    size = f->written();
    return f->Commit();
  }();
  *note = s.ok() ? absl::StrCat(path, " written (", size, " bytes)") : std::string(s.message());
  return s.ok();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Session>> Session::Open(const SessionOptions& options) {
  const replay::LoadOptions o = LoadOptionsOf(options);
  std::optional<replay::RecordingFile::Identity> id;
  if (options.use_index && o.path != "-") {
    if (auto i = replay::RecordingFile::Identity::Of(o); i.ok()) id = *i;
  }
  std::string note;
  std::unique_ptr<replay::LoadedTrace> trace = id ? FromIndex(o, *id, &note) : nullptr;
  IndexUse use = trace != nullptr ? IndexUse::kLoaded : IndexUse::kNone;
  if (trace == nullptr && o.folded) {
    // Nothing to replay instead: its raw chunks were folded into it and removed.
    return absl::FailedPreconditionError(absl::StrCat(
        !options.use_index ? absl::StrCat(o.path, ": --no-index: a folded recording is its index alone")
        : note.empty()     ? absl::StrCat(o.path, ": the recording's folded index is not usable")
                           : note,
        " (a recording folded by record --max-size has no raw trace left: read it with the pageblame that made it)"));
  }
  if (trace == nullptr) {
    ASSIGN_OR_RETURN(trace, replay::LoadTrace(o));
    std::string written;
    if (id && options.write_index && WriteIndex(*trace, o, *id, &written)) use = IndexUse::kWritten;
    note = absl::StrCat(note.empty() ? "replayed" : note, written.empty() ? "" : "; ", written);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Session> s, Of(std::move(trace), options));
  s->load_note_ = std::move(note);
  s->index_use_ = use;
  return s;
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
// resident bytes that are missing), then the heap file's.
absl::Status Session::LoadSideFiles() {
  warnings_ = LoadWarnings(*trace_);
  if (const std::optional<replay::FoldCheckpoint>& c = trace_->checkpoint()) {
    warnings_.insert(warnings_.begin(), CheckpointWarning(*c, options_.path));
  }
  ResidencyRequest request = options_.residency;
  request.force = options_.force;
  ASSIGN_OR_RETURN(ResidencyLoad rss, LoadResidency(Facts(), options_.path, request));
  residency_ = std::move(rss.index);
  if (rss.warning) warnings_.push_back(*rss.warning);
  ASSIGN_OR_RETURN(HeapLoad heap, LoadHeap(Facts(), options_.path, options_.heap, options_.force));
  heap_ = std::move(heap.index);
  if (heap.warning) warnings_.push_back(*heap.warning);
  return absl::OkStatus();
}

std::string Session::AttachMapsNote() const {
  const replay::AttachMapsUse& a = trace_->attach_maps();
  if (a.path.empty()) return "";
  return absl::StrCat("the mappings at the attach from ", EscapeName(a.path), ": ", a.added_pages, " pages added, ",
                      a.removed_pages, " ended, ", a.mismatched_pages,
                      " made by calls with another prot there (kept)");
}

uint64_t Session::Reached() const {
  return std::max(residency_ ? residency_->last_time() : 0, heap_ ? heap_->last_time() : 0);
}

}  // namespace pageblame::session
