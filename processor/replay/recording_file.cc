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
#include "processor/base/byte_reader.h"
#include "processor/base/byte_writer.h"
#include "processor/base/status_macros.h"
#include "processor/index/index_codec.h"
#include "processor/replay/attach_maps.h"
#include "processor/replay/replay_version.h"
#include "processor/symbols/dso_lookup.h"

namespace pageblame::replay {
namespace {

constexpr char kMagic[8] = {'P', 'B', 'I', 'N', 'D', 'E', 'X', '\1'};
constexpr size_t kHashedBytes = 64 * 1024;  // at each end of the trace
// Far above any recording's index (a fraction of its trace), far below what
// would exhaust a machine if a damaged header claimed it.
constexpr uint64_t kMaxRawBytes = uint64_t{64} << 30;

absl::Status Damaged(const std::string& name, absl::string_view what) {
  return absl::DataLossError(absl::StrCat(name, ": the index is damaged: ", what));
}

absl::Status Stale(const std::string& name, absl::string_view why) {
  return absl::FailedPreconditionError(absl::StrCat(name, ": stale: ", why));
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

std::string Body(const LoadedView& t, uint64_t thin_cutoff) {
  std::string out, idx;
  if (thin_cutoff > 0) {
    index::IndexCodec::EncodeThinned(*t.index, thin_cutoff, &idx);
  } else {
    index::IndexCodec::Encode(*t.index, &idx);
  }
  PutString(&out, idx);
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

// The reads of one body, each false when it runs past the end.
class BodyReader {
 public:
  explicit BodyReader(std::string_view bytes) : r_(bytes.data(), bytes.size()) {}
  ByteReader& r() { return r_; }

  bool String(std::string* s) {
    std::string_view v;
    if (!r_.ReadString(&v)) return false;
    *s = std::string(v);
    return true;
  }
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
    for (uint64_t i = 0; i < n; ++i) {
      symbols::MappingHistory::Op op;
      uint8_t kind = 0;
      if (!r_.Read(&kind) || kind > static_cast<uint8_t>(symbols::MappingHistory::Op::Kind::kExec) ||
          !r_.Read(&op.pid) || !r_.Read(&op.parent) || !r_.Read(&op.time) || !r_.Read(&op.start) || !r_.Read(&op.len) ||
          !r_.Read(&op.pgoff) || !r_.ReadString(&op.path) || !r_.ReadString(&op.build_id)) {
        return false;
      }
      op.kind = static_cast<symbols::MappingHistory::Op::Kind>(kind);
      m->Apply(op);  // interns the strings: the views into the bytes do not outlive them
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
  ByteReader r_;
};

// The header as written: its format, build, identity and checkpoint.
struct Header {
  uint32_t version = 0;
  std::string_view replay_version;
  RecordingFile::Identity id;
  bool checkpoint = false;
  FoldCheckpoint progress;
};

// The header's fields; DataLoss if they are not there. A header of another
// format version stops after the version (what follows may differ).
absl::Status ReadHeader(ByteReader* r, const std::string& name, Header* h) {
  absl::Span<const uint8_t> magic;
  if (!r->ReadSpan(sizeof(kMagic), &magic) || std::memcmp(magic.data(), kMagic, sizeof(kMagic)) != 0) {
    return absl::DataLossError(absl::StrCat(name, ": not a pageblame index (no PBINDEX magic)"));
  }
  if (!r->Read(&h->version)) return Damaged(name, "its header is cut");
  if (h->version != RecordingFile::kFormatVersion) return absl::OkStatus();
  RecordingFile::Identity& id = h->id;
  uint8_t checkpoint = 0;
  std::string_view last_chunk;
  if (!r->ReadString(&h->replay_version) || !r->Read(&id.size) || !r->Read(&id.mtime_ns) ||
      !r->Read(&id.sample_hash) || !r->Read(&id.options) || !r->Read(&id.attach_maps.size) ||
      !r->Read(&id.attach_maps.mtime_ns) || !r->Read(&checkpoint) || checkpoint > 1 ||
      !r->Read(&h->progress.wall_ns) || !r->Read(&h->progress.chunks) || !r->Read(&h->progress.until) ||
      !r->ReadString(&last_chunk)) {
    return Damaged(name, "its header is cut");
  }
  h->checkpoint = checkpoint == 1;
  h->progress.last_chunk = std::string(last_chunk);
  return absl::OkStatus();
}

// The header's identity, checked against the trace's now.
absl::Status CheckHeader(ByteReader* r, const std::string& name, const RecordingFile::Identity& expected,
                         Header* h) {
  RETURN_IF_ERROR(ReadHeader(r, name, h));
  const uint32_t version = h->version;
  const std::string_view replay_version = h->replay_version;
  const RecordingFile::Identity& id = h->id;
  if (version != RecordingFile::kFormatVersion) return Stale(name, absl::StrCat("format ", version));
  if (replay_version != kReplayVersion) return Stale(name, "made by another build of pageblame");
  if (id.size != expected.size || id.mtime_ns != expected.mtime_ns || id.sample_hash != expected.sample_hash) {
    return Stale(name, "the trace changed since it was made");
  }
  if (id.options != expected.options) return Stale(name, "made with other load options (-f, the plugin's)");
  if (!(id.attach_maps == expected.attach_maps)) {
    return Stale(name, "the table of the mappings at the attach beside the trace changed since it was made");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Decompress(ByteReader* r, const std::string& name) {
  uint64_t raw_size = 0, stored = 0;
  absl::Span<const uint8_t> frame;
  if (!r->Read(&raw_size) || !r->Read(&stored) || stored != r->remaining() || !r->ReadSpan(stored, &frame)) {
    return Damaged(name, "its body's sizes do not match the file");
  }
  if (raw_size > kMaxRawBytes || ZSTD_getFrameContentSize(frame.data(), frame.size()) != raw_size) {
    return Damaged(name, "its body's size is not its frame's");
  }
  std::string body(raw_size, '\0');
  const size_t got = ZSTD_decompress(body.data(), body.size(), frame.data(), frame.size());
  if (ZSTD_isError(got) || got != raw_size) {
    return Damaged(name, absl::StrCat("its body does not decompress (",
                                      ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short", ")"));
  }
  return body;
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

std::string RecordingFile::Encode(const LoadedTrace& trace, const Identity& id, uint64_t thin_cutoff) {
  return Encode(LoadedView::Of(trace), id, thin_cutoff, nullptr);
}

std::string RecordingFile::Encode(const LoadedView& trace, const Identity& id, uint64_t thin_cutoff,
                                  const FoldCheckpoint* checkpoint) {
  std::string out(kMagic, sizeof(kMagic));
  PutFixed<uint32_t>(&out, kFormatVersion);
  PutString(&out, kReplayVersion);
  for (uint64_t v : {id.size, id.mtime_ns, id.sample_hash}) PutFixed(&out, v);
  PutFixed<uint8_t>(&out, id.options);
  PutFixed(&out, id.attach_maps.size);
  PutFixed(&out, id.attach_maps.mtime_ns);
  PutCheckpoint(&out, checkpoint);
  const std::string body = Body(trace, thin_cutoff);
  std::string frame(ZSTD_compressBound(body.size()), '\0');
  // With zstd's checksum of the content: a byte changed inside the frame
  // otherwise decompresses, unnoticed, to other numbers (a time, an
  // address) that no check of the tables can tell from true ones.
  std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> cctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
  size_t n = cctx ? ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, 3) : 1;
  if (cctx && !ZSTD_isError(n)) n = ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_checksumFlag, 1);
  if (cctx && !ZSTD_isError(n)) n = ZSTD_compress2(cctx.get(), frame.data(), frame.size(), body.data(), body.size());
  frame.resize(!cctx || ZSTD_isError(n) ? 0 : n);
  PutFixed<uint64_t>(&out, body.size());
  PutFixed<uint64_t>(&out, frame.size());
  out += frame;
  return out;
}

absl::StatusOr<std::unique_ptr<LoadedTrace>> RecordingFile::Decode(std::string_view bytes, const std::string& name,
                                                                   const Identity& expected,
                                                                   const symbols::SymbolizerOptions& symbols) {
  ByteReader header(bytes.data(), bytes.size());
  Header h;
  RETURN_IF_ERROR(CheckHeader(&header, name, expected, &h));
  ASSIGN_OR_RETURN(std::string body, Decompress(&header, name));
  ASSIGN_OR_RETURN(std::unique_ptr<LoadedTrace> trace, DecodeBody(body, name, symbols));
  if (h.checkpoint) trace->set_checkpoint(std::move(h.progress));
  return trace;
}

std::optional<RecordingFile::Folded> RecordingFile::PeekFolded(std::string_view head) {
  ByteReader r(head.data(), head.size());
  Header h;
  if (!ReadHeader(&r, "", &h).ok() || h.version != kFormatVersion || (h.id.options & kFolded) == 0) {
    return std::nullopt;
  }
  Folded f;
  if (h.checkpoint) f.checkpoint = std::move(h.progress);
  return f;
}

absl::StatusOr<std::unique_ptr<LoadedTrace>> RecordingFile::DecodeBody(std::string_view body, const std::string& name,
                                                                       const symbols::SymbolizerOptions& symbols) {
  BodyReader r(body);
  std::string_view idx_bytes;
  if (!r.r().ReadString(&idx_bytes)) return Damaged(name, "its index runs past the end");
  auto idx = std::make_unique<index::TraceIndex>();
  if (absl::Status s = index::IndexCodec::Decode(idx_bytes, idx.get()); !s.ok()) {
    return absl::DataLossError(absl::StrCat(name, ": ", s.message()));
  }
  perf::FileInfo info;
  std::string sources;
  uint64_t n_warnings = 0;
  if (!r.Info(&info) || !r.String(&sources) || !r.Count(1, &n_warnings))
    return Damaged(name, "its trace facts are cut");
  std::vector<std::string> warnings(n_warnings);
  for (std::string& w : warnings) {
    if (!r.String(&w)) return Damaged(name, "its warnings are cut");
  }
  std::optional<unwind::UnwindStats> unwind;
  auto mappings = std::make_shared<symbols::MappingHistory>();
  std::vector<symbols::DsoLookup> lookups;
  AttachMapsUse attach;
  if (!r.Unwind(&unwind) || !r.Mappings(mappings.get()) || !r.Lookups(&lookups) || !r.AttachMaps(&attach) ||
      !r.r().empty()) {
    return Damaged(name, "its unwinding, mappings, binaries or attach table are cut, or bytes follow them");
  }
  const symbols::DsoLocator locator(symbols::Symbolizer::LocatorOptions(symbols));
  for (const symbols::DsoLookup& l : lookups) {
    if (std::string why = l.Changed(locator); !why.empty()) return Stale(name, why);
  }
  auto trace = std::make_unique<LoadedTrace>(std::move(idx), std::make_unique<symbols::Symbolizer>(symbols, mappings),
                                             std::move(info), std::move(sources));
  trace->set_format_warnings(std::move(warnings));
  if (unwind) trace->set_unwind_stats(*unwind);
  trace->set_dso_lookups(std::move(lookups));
  trace->set_attach_maps(std::move(attach));
  return trace;
}

}  // namespace pageblame::replay
