#include "processor/replay/recording_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "processor/base/build_info.h"
#include "processor/base/byte_sink.h"
#include "processor/base/byte_writer.h"
#include "processor/base/status_macros.h"
#include "processor/base/stream_reader.h"
#include "processor/base/zstd_sink.h"
#include "processor/base/text_escape.h"
#include "processor/base/zstd_source.h"
#include "processor/index/index_codec.h"
#include "processor/replay/attach_maps.h"
#include "processor/replay/replay_version.h"
#include "processor/symbols/dso_lookup.h"

namespace pageblame::replay {
namespace {

constexpr char kMagic[8] = {'P', 'B', 'I', 'N', 'D', 'E', 'X', '\1'};
constexpr size_t kHashedBytes = 64 * 1024;  // at each end of the trace
// The first format whose header names the pageblame that made it; longer
// than kMaxMaker is a damaged header, not a name.
constexpr uint32_t kMakerFormat = 5;
constexpr size_t kMaxMaker = 256;
// Far above any recording's index (a fraction of its trace), far below what
// would exhaust a machine if a damaged header claimed it.
constexpr uint64_t kMaxRawBytes = uint64_t{64} << 30;
// The most a zstd frame's header takes (ZSTD_FRAMEHEADERSIZE_MAX, which
// zstd.h declares only for static linking): enough to read its content size.
constexpr size_t kFrameHeaderMax = 18;

absl::Status Damaged(const std::string& name, absl::string_view what) {
  return absl::DataLossError(absl::StrCat(name, ": the index is damaged: ", what));
}

absl::Status Stale(const std::string& name, absl::string_view why) {
  return absl::FailedPreconditionError(absl::StrCat(name, ": stale: ", why));
}

// Damaged: `what` is cut, and why when the stream itself failed (a frame
// that does not decompress, a file that ends early).
absl::Status Cut(const std::string& name, absl::string_view what, const StreamReader& r) {
  return Damaged(name, r.status().ok() ? std::string(what) : absl::StrCat(what, " (", r.status().message(), ")"));
}

uint64_t Fnv(const char* data, size_t n, uint64_t h) {
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 1099511628211ull;
  }
  return h;
}

// ---------------------------------------------------------------- the body

void PutOptional(std::string* out, const std::optional<uint64_t>& v) {
  PutFixed<uint8_t>(out, v.has_value());
  PutFixed<uint64_t>(out, v.value_or(0));
}

void PutInfo(std::string* out, const perf::FileInfo& info) {
  PutString(out, info.arch);
  PutFixed<uint64_t>(out, info.cmdline.size());
  for (const std::string& a : info.cmdline) PutString(out, a);
  PutFixed<uint64_t>(out, info.attrs.size());
  for (const perf::EventAttr& a : info.attrs) {
    PutFixed<uint8_t>(out, a.clockid.has_value());
    PutFixed<int32_t>(out, a.clockid.value_or(0));
  }
  PutOptional(out, info.clock_start);
  PutFixed<uint8_t>(out, info.clock_start_clockid.has_value());
  PutFixed<int32_t>(out, info.clock_start_clockid.value_or(0));
  PutOptional(out, info.clock_start_wall);
}

std::vector<uint64_t*> UnwindCounters(unwind::UnwindStats* u) {
  return {&u->samples,        &u->frames,         &u->frames_cfi,    &u->frames_fp,      &u->frames_jit,
          &u->stop_end,       &u->stop_no_module, &u->stop_no_cfi,   &u->stop_stack_end, &u->stop_bad_read,
          &u->stop_not_above, &u->stop_max_depth, &u->no_registers,  &u->other_abi,      &u->mask_lacks_ip_sp,
          &u->cut_copies,     &u->waited,         &u->waited_reread, &u->waited_lost,    &u->waited_max_bytes,
          &u->rule_hits,      &u->rule_misses,    &u->files_opened,  &u->files_missing,  &u->files_cfi_refused,
          &u->cache_bytes,    &u->nanos};
}

void PutUnwind(std::string* out, const unwind::UnwindStats* u) {
  PutFixed<uint8_t>(out, u != nullptr);
  if (u == nullptr) return;
  unwind::UnwindStats copy = *u;
  for (uint64_t* v : UnwindCounters(&copy)) PutFixed(out, *v);
  PutString(out, copy.first_cfi_refused);
}

void PutMappings(std::string* out, const symbols::MappingHistory& m) {
  PutFixed<uint64_t>(out, m.ops().size());
  for (const symbols::MappingHistory::Op& op : m.ops()) {
    PutFixed<uint8_t>(out, static_cast<uint8_t>(op.kind));
    PutFixed(out, op.pid);
    PutFixed(out, op.parent);
    for (uint64_t v : {op.time, op.start, op.len, op.pgoff}) PutFixed(out, v);
    PutString(out, op.path);
    PutString(out, op.build_id);
  }
}

void PutLookups(std::string* out, const std::vector<symbols::DsoLookup>& lookups) {
  PutFixed<uint64_t>(out, lookups.size());
  for (const symbols::DsoLookup& l : lookups) {
    for (const std::string* s : {&l.path, &l.build_id, &l.elf_path, &l.debug_path}) PutString(out, *s);
    for (uint64_t v : {l.elf.size, l.elf.mtime_ns, l.debug.size, l.debug.mtime_ns}) PutFixed(out, v);
  }
}

void PutAttachMaps(std::string* out, const AttachMapsUse& a) {
  PutString(out, a.path);
  PutString(out, a.warning);
  for (uint64_t v : {a.added_pages, a.removed_pages, a.mismatched_pages}) PutFixed(out, v);
}

// The body: the index (its length, then its bytes: IndexCodec), then the
// facts (below).
void PutIndex(const LoadedView& t, uint64_t thin_cutoff, ByteSink* out) {
  if (thin_cutoff > 0) {
    index::IndexCodec::EncodeThinned(*t.index, thin_cutoff, out);
  } else {
    index::IndexCodec::Encode(*t.index, out);
  }
}

// What the body holds after the index (small: no table of calls or stacks).
std::string Facts(const LoadedView& t) {
  std::string out;
  PutInfo(&out, *t.info);
  PutString(&out, *t.sources);
  PutFixed<uint64_t>(&out, t.format_warnings->size());
  for (const std::string& w : *t.format_warnings) PutString(&out, w);
  PutUnwind(&out, t.unwind);
  PutMappings(&out, *t.mappings);
  PutLookups(&out, *t.dso_lookups);
  PutAttachMaps(&out, *t.attach_maps);
  return out;
}

// The checkpoint part of the header: u8 1 and its fields for a checkpoint,
// u8 0 and zeros for a finished recording's index.
void PutCheckpoint(std::string* out, const FoldCheckpoint* c) {
  const FoldCheckpoint none;
  if (c == nullptr) c = &none;
  PutFixed<uint8_t>(out, c != &none);
  for (uint64_t v : {c->wall_ns, c->chunks, c->until}) PutFixed(out, v);
  PutString(out, c->last_chunk);
}

// ---------------------------------------------------------------- reading it

// The reads of one body's facts, each false when it runs past the end.
class BodyReader {
 public:
  explicit BodyReader(StreamReader* r) : r_(*r) {}

  bool String(std::string* s) { return r_.ReadString(s); }
  // A count of entries of at least `min` bytes that can fit.
  bool Count(size_t min, uint64_t* n) { return r_.Read(n) && *n <= r_.remaining() / min; }

  template <typename T>
  bool Optional(std::optional<T>* v) {
    uint8_t has = 0;
    T value{};
    if (!r_.Read(&has) || !r_.Read(&value)) return false;
    if (has) *v = value;
    return true;
  }

  bool Info(perf::FileInfo* info) {
    uint64_t n = 0;
    if (!String(&info->arch) || !Count(1, &n)) return false;
    info->cmdline.resize(n);
    for (std::string& a : info->cmdline) {
      if (!String(&a)) return false;
    }
    if (!Count(5, &n)) return false;
    info->attrs.resize(n);
    for (perf::EventAttr& a : info->attrs) {
      if (!Optional(&a.clockid)) return false;
    }
    return Optional(&info->clock_start) && Optional(&info->clock_start_clockid) && Optional(&info->clock_start_wall);
  }

  bool Unwind(std::optional<unwind::UnwindStats>* out) {
    uint8_t has = 0;
    if (!r_.Read(&has)) return false;
    if (!has) return true;
    unwind::UnwindStats u;
    for (uint64_t* v : UnwindCounters(&u)) {
      if (!r_.Read(v)) return false;
    }
    if (!String(&u.first_cfi_refused)) return false;
    *out = u;
    return true;
  }

  bool Mappings(symbols::MappingHistory* m) {
    uint64_t n = 0;
    if (!Count(43, &n)) return false;
    std::string path, build_id;  // a view lasts until the next read: copied
    for (uint64_t i = 0; i < n; ++i) {
      symbols::MappingHistory::Op op;
      uint8_t kind = 0;
      if (!r_.Read(&kind) || kind > static_cast<uint8_t>(symbols::MappingHistory::Op::Kind::kExec) ||
          !r_.Read(&op.pid) || !r_.Read(&op.parent) || !r_.Read(&op.time) || !r_.Read(&op.start) || !r_.Read(&op.len) ||
          !r_.Read(&op.pgoff) || !r_.ReadString(&path) || !r_.ReadString(&build_id)) {
        return false;
      }
      op.kind = static_cast<symbols::MappingHistory::Op::Kind>(kind);
      op.path = path;
      op.build_id = build_id;
      m->Apply(op);  // interns the strings: the views do not outlive them
    }
    return true;
  }

  bool Lookups(std::vector<symbols::DsoLookup>* out) {
    uint64_t n = 0;
    if (!Count(36, &n)) return false;
    out->resize(n);
    for (symbols::DsoLookup& l : *out) {
      if (!String(&l.path) || !String(&l.build_id) || !String(&l.elf_path) || !String(&l.debug_path) ||
          !r_.Read(&l.elf.size) || !r_.Read(&l.elf.mtime_ns) || !r_.Read(&l.debug.size) ||
          !r_.Read(&l.debug.mtime_ns)) {
        return false;
      }
    }
    return true;
  }

  bool AttachMaps(AttachMapsUse* a) {
    return String(&a->path) && String(&a->warning) && r_.Read(&a->added_pages) && r_.Read(&a->removed_pages) &&
           r_.Read(&a->mismatched_pages);
  }

 private:
  StreamReader& r_;
};

// The header as written: its format, the pageblame that made it, the
// replay's version, identity and checkpoint.
struct Header {
  uint32_t version = 0;
  std::string maker;  // from kMakerFormat on
  std::string replay_version;
  RecordingFile::Identity id;
  bool checkpoint = false;
  FoldCheckpoint progress;
};

bool Readable(uint32_t version) {
  return version >= RecordingFile::kOldestFoldedFormat && version <= RecordingFile::kFormatVersion;
}

// The header's fields; DataLoss if they are not there. A header of a format
// this build does not read stops after its maker (what follows may differ).
absl::Status ReadHeader(StreamReader* r, const std::string& name, Header* h) {
  std::string_view magic;
  if (!r->ReadView(sizeof(kMagic), &magic) || std::memcmp(magic.data(), kMagic, sizeof(kMagic)) != 0) {
    return absl::DataLossError(absl::StrCat(name, ": not a pageblame index (no PBINDEX magic)"));
  }
  if (!r->Read(&h->version)) return Damaged(name, "its header is cut");
  if (h->version >= kMakerFormat && (!r->ReadString(&h->maker) || h->maker.size() > kMaxMaker)) {
    return Cut(name, "its header's maker is cut or too long", *r);
  }
  if (!Readable(h->version)) return absl::OkStatus();
  RecordingFile::Identity& id = h->id;
  uint8_t checkpoint = 0;
  if (!r->ReadString(&h->replay_version) || !r->Read(&id.size) || !r->Read(&id.mtime_ns) ||
      !r->Read(&id.sample_hash) || !r->Read(&id.options) || !r->Read(&id.attach_maps.size) ||
      !r->Read(&id.attach_maps.mtime_ns) || !r->Read(&checkpoint) || checkpoint > 1 ||
      !r->Read(&h->progress.wall_ns) || !r->Read(&h->progress.chunks) || !r->Read(&h->progress.until) ||
      !r->ReadString(&h->progress.last_chunk)) {
    return Cut(name, "its header is cut", *r);
  }
  h->checkpoint = checkpoint == 1;
  return absl::OkStatus();
}

// Why an index of another format is not read as it is.
std::string OtherFormat(const Header& h) {
  std::string who = h.maker.empty() ? "" : absl::StrCat("made by ", EscapeName(h.maker), " with ");
  return absl::StrCat(who, "index format ", h.version, "; this build (", ThisBuild(), ") ",
                      Readable(h.version) ? absl::StrCat("writes format ", RecordingFile::kFormatVersion)
                                          : absl::StrCat("reads formats ", RecordingFile::kOldestFoldedFormat,
                                                         " to ", RecordingFile::kFormatVersion));
}

bool IsFolded(const Header& h) { return (h.id.options & RecordingFile::kFolded) != 0; }

// The header's identity, checked against the trace's now. An index of a
// trace must be this build's; a folded recording's, of a format it reads.
absl::Status CheckHeader(StreamReader* r, const std::string& name, const RecordingFile::Identity& expected,
                         Header* h) {
  RETURN_IF_ERROR(ReadHeader(r, name, h));
  const RecordingFile::Identity& id = h->id;
  if (!Readable(h->version) || (!IsFolded(*h) && h->version != RecordingFile::kFormatVersion)) {
    return Stale(name, OtherFormat(*h));
  }
  if (!IsFolded(*h) && h->replay_version != kReplayVersion) return Stale(name, "made by another build of pageblame");
  if (id.size != expected.size || id.mtime_ns != expected.mtime_ns || id.sample_hash != expected.sample_hash) {
    return Stale(name, "the trace changed since it was made");
  }
  if (id.options != expected.options) return Stale(name, "made with other load options (-f, the plugin's)");
  if (!(id.attach_maps == expected.attach_maps)) {
    return Stale(name, "the table of the mappings at the attach beside the trace changed since it was made");
  }
  return absl::OkStatus();
}

// A folded recording's maker when it is not this build ("" when it is).
std::string OtherMaker(const Header& h) {
  if (!IsFolded(h) || h.replay_version == kReplayVersion) return "";
  return h.maker.empty() ? absl::StrCat("an earlier pageblame (index format ", h.version, ")") : EscapeName(h.maker);
}

// The file's frame, from its sizes to its content's first byte: `frame`
// decompresses it (the file reader at the frame, its end the frame's).
absl::Status OpenFrame(StreamReader* file, const std::string& name, uint64_t* raw_size) {
  uint64_t stored = 0;
  if (!file->Read(raw_size) || !file->Read(&stored) || stored != file->remaining()) {
    return Cut(name, "its body's sizes do not match the file", *file);
  }
  std::string_view head;
  if (*raw_size > kMaxRawBytes || !file->Peek(std::min<uint64_t>(stored, kFrameHeaderMax), &head) ||
      ZSTD_getFrameContentSize(head.data(), head.size()) != *raw_size) {
    return Cut(name, "its body's size is not its frame's", *file);
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

// One file's part of an identity: its size, modification time and a hash of
// its first and last bytes, into `id` (added: a recording in chunks is the
// sum of its chunks, the latest time, one hash over all of them in order).
absl::Status AddFile(const std::string& path, RecordingFile::Identity* id, uint64_t* hash) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::FailedPreconditionError(absl::StrCat(path, ": not a regular file: no index"));
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  id->size += size;
  id->mtime_ns = std::max(id->mtime_ns, static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000 +
                                            static_cast<uint64_t>(st.st_mtim.tv_nsec));
  std::string buf(kHashedBytes, '\0');
  for (uint64_t at : {uint64_t{0}, size > kHashedBytes ? size - kHashedBytes : 0}) {
    const ssize_t n = ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(at));
    if (n > 0) *hash = Fnv(buf.data(), static_cast<size_t>(n), *hash);
  }
  ::close(fd);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RecordingFile::Identity> RecordingFile::Identity::Of(const LoadOptions& o) {
  Identity id;
  id.options = (o.raw_duplicate_times ? kRawDuplicateTimes : 0) | (o.symbols.force ? kForce : 0) |
               (o.attach_maps ? kAttachMaps : 0);
  // What the replay reads beside the trace: the table of the mappings at
  // the attach (replay/attach_maps.h).
  id.attach_maps = symbols::FileStamp::Of(AttachMaps::PathFor(o.path));
  if (o.folded) {
    id.options |= kFolded;
    return id;
  }
  uint64_t h = 14695981039346656037ull;
  if (o.chunks.empty()) {
    RETURN_IF_ERROR(AddFile(o.path, &id, &h));
  } else {
    // Which chunks, not only their bytes: a chunk added or removed changes it.
    for (const std::string& c : o.chunks) {
      h = Fnv(c.data(), c.size(), h);
      RETURN_IF_ERROR(AddFile(c, &id, &h));
    }
  }
  id.sample_hash = h;
  return id;
}

std::string RecordingFile::PathFor(const std::string& trace, bool raw_duplicate_times) {
  return trace + (raw_duplicate_times ? ".plugin.index" : ".index");
}

namespace {

// The header up to the checkpoint (the sizes of the body follow it).
std::string HeaderBytes(const RecordingFile::Identity& id, const FoldCheckpoint* checkpoint) {
  std::string out(kMagic, sizeof(kMagic));
  PutFixed<uint32_t>(&out, RecordingFile::kFormatVersion);
  PutString(&out, ThisBuild());
  PutString(&out, kReplayVersion);
  for (uint64_t v : {id.size, id.mtime_ns, id.sample_hash}) PutFixed(&out, v);
  PutFixed<uint8_t>(&out, id.options);
  PutFixed(&out, id.attach_maps.size);
  PutFixed(&out, id.attach_maps.mtime_ns);
  PutCheckpoint(&out, checkpoint);
  return out;
}

// The index file's bytes in order (pread: the descriptor's offset is not used).
class FileSource : public StreamReader::Source {
 public:
  FileSource(int fd, const std::string& name) : fd_(fd), name_(name) {}
  absl::StatusOr<size_t> Read(char* dst, size_t n) override {
    while (true) {
      const ssize_t got = ::pread(fd_, dst, n, static_cast<off_t>(at_));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return absl::UnavailableError(absl::StrCat("cannot read ", name_, ": ", std::strerror(errno)));
      at_ += static_cast<uint64_t>(got);
      return static_cast<size_t>(got);
    }
  }

 private:
  int fd_;
  const std::string& name_;
  uint64_t at_ = 0;
};

// What a body holds: read whole (ReadBody) before the frame's checksum is
// known good and the binaries it names are checked (Assemble).
struct BodyParts {
  std::unique_ptr<index::TraceIndex> idx = std::make_unique<index::TraceIndex>();
  perf::FileInfo info;
  std::string sources;
  std::vector<std::string> warnings;
  std::optional<unwind::UnwindStats> unwind;
  std::shared_ptr<symbols::MappingHistory> mappings = std::make_shared<symbols::MappingHistory>();
  std::vector<symbols::DsoLookup> lookups;
  AttachMapsUse attach;
};

// The body from `r` (a piece at a time when it streams), to its end.
absl::Status ReadBody(StreamReader* r, const std::string& name, BodyParts* b) {
  uint64_t idx_bytes = 0;
  if (!r->ReadVarint(&idx_bytes) || idx_bytes > r->remaining()) return Cut(name, "its index runs past the end", *r);
  const uint64_t end = r->Limit(idx_bytes);
  if (absl::Status s = index::IndexCodec::Decode(r, b->idx.get()); !s.ok()) {
    return absl::DataLossError(absl::StrCat(name, ": ", s.message()));
  }
  r->Unlimit(end);
  BodyReader facts(r);
  uint64_t n_warnings = 0;
  if (!facts.Info(&b->info) || !facts.String(&b->sources) || !facts.Count(1, &n_warnings)) {
    return Cut(name, "its trace facts are cut", *r);
  }
  b->warnings.resize(n_warnings);
  for (std::string& w : b->warnings) {
    if (!facts.String(&w)) return Cut(name, "its warnings are cut", *r);
  }
  if (!facts.Unwind(&b->unwind) || !facts.Mappings(b->mappings.get()) || !facts.Lookups(&b->lookups) ||
      !facts.AttachMaps(&b->attach) || !r->empty()) {
    return Cut(name, "its unwinding, mappings, binaries or attach table are cut, or bytes follow them", *r);
  }
  return absl::OkStatus();
}

// The trace the parts make, unless a binary the replay read changed since
// (then the trace is replayed again). A folded recording has no trace: its
// index is used anyway, the changes said (a running .NET service's jitdump
// grows as long as it runs).
absl::StatusOr<std::unique_ptr<LoadedTrace>> Assemble(BodyParts b, const std::string& name, bool folded,
                                                      const symbols::SymbolizerOptions& symbols) {
  const symbols::DsoLocator locator(symbols::Symbolizer::LocatorOptions(symbols));
  std::vector<std::string> changed;
  for (const symbols::DsoLookup& l : b.lookups) {
    if (std::string why = l.Changed(locator); !why.empty()) {
      if (!folded) return Stale(name, why);
      changed.push_back(std::move(why));
    }
  }
  auto trace = std::make_unique<LoadedTrace>(std::move(b.idx),
                                             std::make_unique<symbols::Symbolizer>(symbols, b.mappings),
                                             std::move(b.info), std::move(b.sources));
  trace->set_format_warnings(std::move(b.warnings));
  if (b.unwind) trace->set_unwind_stats(*b.unwind);
  trace->set_dso_lookups(std::move(b.lookups));
  trace->set_attach_maps(std::move(b.attach));
  trace->set_changed_binaries(std::move(changed));
  return trace;
}

// A whole index file from `file`: the header checked, then its frame read
// a piece at a time into the tables.
absl::StatusOr<std::unique_ptr<LoadedTrace>> DecodeFile(StreamReader* file, const std::string& name,
                                                        const RecordingFile::Identity& expected,
                                                        const symbols::SymbolizerOptions& symbols) {
  Header h;
  RETURN_IF_ERROR(CheckHeader(file, name, expected, &h));
  uint64_t raw_size = 0;
  RETURN_IF_ERROR(OpenFrame(file, name, &raw_size));
  ZstdSource frame(file);
  StreamReader body(&frame, raw_size);
  BodyParts parts;
  RETURN_IF_ERROR(ReadBody(&body, name, &parts));
  if (absl::Status s = frame.Finish(); !s.ok()) {
    return Damaged(name, absl::StrCat("its body is refused at its frame's end (", s.message(), ")"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<LoadedTrace> trace, Assemble(std::move(parts), name, IsFolded(h), symbols));
  if (h.checkpoint) trace->set_checkpoint(std::move(h.progress));
  trace->set_made_by(OtherMaker(h));
  return trace;
}

}  // namespace

std::string RecordingFile::Encode(const LoadedTrace& trace, const Identity& id, uint64_t thin_cutoff) {
  return Encode(LoadedView::Of(trace), id, thin_cutoff, nullptr);
}

std::string RecordingFile::Encode(const LoadedView& trace, const Identity& id, uint64_t thin_cutoff,
                                  const FoldCheckpoint* checkpoint) {
  std::string out;
  StringSink sink(&out);
  // Only zstd can fail here (memory): the frame is then cut short, which
  // Decode finds damaged.
  Write(trace, id, thin_cutoff, checkpoint, &sink).IgnoreError();
  return out;
}

absl::Status RecordingFile::Write(const LoadedView& trace, const Identity& id, uint64_t thin_cutoff,
                                  const FoldCheckpoint* checkpoint, PatchableSink* out) {
  // The body is the index's length, the index, the facts; its length goes
  // before the frame and into the frame's header: so the index is encoded
  // twice, counted, then compressed as it is encoded (never whole).
  CountingSink counted;
  PutIndex(trace, thin_cutoff, &counted);
  std::string length;
  PutVarint(&length, counted.written());
  const std::string facts = Facts(trace);
  const uint64_t raw_size = length.size() + counted.written() + facts.size();
  std::string head = HeaderBytes(id, checkpoint);
  PutFixed<uint64_t>(&head, raw_size);
  const uint64_t stored_at = out->written() + head.size();
  PutFixed<uint64_t>(&head, 0);  // the frame's size, once it is known
  out->Append(head);
  const uint64_t frame_at = out->written();
  ZstdSink frame(out, 3, raw_size);
  frame.Append(length);
  PutIndex(trace, thin_cutoff, &frame);
  frame.Append(facts);
  RETURN_IF_ERROR(frame.Finish());
  std::string stored;
  PutFixed<uint64_t>(&stored, out->written() - frame_at);
  out->Overwrite(stored_at, stored);
  return out->status();
}

absl::StatusOr<std::unique_ptr<LoadedTrace>> RecordingFile::Decode(std::string_view bytes, const std::string& name,
                                                                   const Identity& expected,
                                                                   const symbols::SymbolizerOptions& symbols) {
  StreamReader file(bytes);
  return DecodeFile(&file, name, expected, symbols);
}

absl::StatusOr<std::unique_ptr<LoadedTrace>> RecordingFile::Decode(const InputFile& file, const std::string& name,
                                                                   const Identity& expected,
                                                                   const symbols::SymbolizerOptions& symbols) {
  FileSource source(file.fd(), name);
  StreamReader r(&source, file.size());
  return DecodeFile(&r, name, expected, symbols);
}

std::optional<RecordingFile::Folded> RecordingFile::PeekFolded(std::string_view head) {
  StreamReader r(head);
  Header h;
  if (!ReadHeader(&r, "", &h).ok() || !Readable(h.version) || !IsFolded(h)) {
    return std::nullopt;
  }
  Folded f;
  if (h.checkpoint) f.checkpoint = std::move(h.progress);
  return f;
}

absl::StatusOr<std::unique_ptr<LoadedTrace>> RecordingFile::DecodeBody(std::string_view body, const std::string& name,
                                                                       const symbols::SymbolizerOptions& symbols) {
  StreamReader r(body);
  return DecodeBody(&r, name, symbols);
}

absl::StatusOr<std::unique_ptr<LoadedTrace>> RecordingFile::DecodeBody(StreamReader* body, const std::string& name,
                                                                       const symbols::SymbolizerOptions& symbols) {
  BodyParts parts;
  RETURN_IF_ERROR(ReadBody(body, name, &parts));
  return Assemble(std::move(parts), name, /*folded=*/false, symbols);
}

}  // namespace pageblame::replay
