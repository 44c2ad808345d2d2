#include "processor/heap/heap_snapshot_file.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "processor/base/byte_reader.h"
#include "processor/base/byte_writer.h"
#include "processor/base/input_file.h"
#include "processor/base/status_macros.h"

namespace pageblame::heap {
namespace {

constexpr uint8_t kHasTime = 1, kHasThreads = 2, kHasCpus = 4;
constexpr uint8_t kMain = 1, kTorn = 2, kResident = 4;
constexpr uint64_t kUnit = 16;

// A string cut to what the reader accepts (kMaxHeapString).
void PutCutString(std::string* out, const std::string& s) {
  PutString(out, std::string_view(s).substr(0, kMaxHeapString));
}

void PutArena(std::string* out, const ArenaStats& a) {
  const HeapFigures& f = a.figures;
  const bool resident = f.free_resident_bytes.has_value() && f.releasable_resident_bytes.has_value();
  PutVarint(out, a.address);
  out->push_back(static_cast<char>((a.main ? kMain : 0) | (a.torn ? kTorn : 0) | (resident ? kResident : 0)));
  for (uint64_t v : {f.system_bytes, f.in_use_bytes, f.free_bytes, f.tcache_bytes, f.fastbin_bytes, f.top_bytes,
                     f.free_chunks, f.releasable_bytes})
    PutVarint(out, v);
  if (resident) {
    PutVarint(out, *f.free_resident_bytes);
    PutVarint(out, *f.releasable_resident_bytes);
  }
  for (uint64_t v : {a.binned_chunks, a.fastbin_chunks, a.tcache_chunks, a.chunks, a.heaps, a.attached_threads})
    PutVarint(out, v);
  PutCutString(out, a.damage);
}

// Reads a record body, every value checked; errors say where.
class BodyReader {
 public:
  BodyReader(absl::Span<const uint8_t> body, size_t base, absl::string_view name)
      : r_(body), base_(base), name_(name) {}

  absl::Status Bad(absl::string_view what) const {
    return absl::DataLossError(absl::StrCat(name_, ": offset ", base_ + r_.pos(), ": ", what));
  }
  absl::Status Varint(uint64_t* v, absl::string_view what) {
    return r_.ReadVarint(v) ? absl::OkStatus() : Bad(absl::StrCat("truncated ", what));
  }
  absl::Status Byte(uint8_t* v, absl::string_view what) {
    return r_.Read(v) ? absl::OkStatus() : Bad(absl::StrCat("truncated ", what));
  }
  absl::Status String(std::string* s, absl::string_view what) {
    uint64_t n = 0;
    RETURN_IF_ERROR(Varint(&n, what));
    absl::Span<const uint8_t> b;
    if (n > kMaxHeapString) return Bad(absl::StrCat(what, " of ", n, " bytes (at most ", kMaxHeapString, ")"));
    if (!r_.ReadSpan(n, &b)) return Bad(absl::StrCat("truncated ", what));
    s->assign(b.begin(), b.end());
    return absl::OkStatus();
  }
  bool empty() const { return r_.empty(); }

 private:
  ByteReader r_;
  size_t base_;
  absl::string_view name_;
};

absl::Status ParseArena(BodyReader* r, ArenaStats* a) {
  uint8_t flags = 0;
  RETURN_IF_ERROR(r->Varint(&a->address, "arena address"));
  RETURN_IF_ERROR(r->Byte(&flags, "arena flags"));
  if (flags & ~(kMain | kTorn | kResident)) return r->Bad(absl::StrCat("unknown arena flags ", flags));
  a->main = flags & kMain;
  a->torn = flags & kTorn;
  HeapFigures& f = a->figures;
  for (uint64_t* v : {&f.system_bytes, &f.in_use_bytes, &f.free_bytes, &f.tcache_bytes, &f.fastbin_bytes,
                      &f.top_bytes, &f.free_chunks, &f.releasable_bytes})
    RETURN_IF_ERROR(r->Varint(v, "arena figures"));
  if (f.tcache_bytes > f.free_bytes || f.fastbin_bytes > f.free_bytes || f.top_bytes > f.free_bytes ||
      f.in_use_bytes > f.system_bytes)
    return r->Bad("arena figures that do not add up (a part larger than its whole)");
  if (flags & kResident) {
    uint64_t fr = 0, rr = 0;
    RETURN_IF_ERROR(r->Varint(&fr, "resident bytes"));
    RETURN_IF_ERROR(r->Varint(&rr, "resident bytes"));
    if (fr > f.free_bytes || rr > f.releasable_bytes) return r->Bad("more resident bytes than bytes");
    f.free_resident_bytes = fr;
    f.releasable_resident_bytes = rr;
  }
  for (uint64_t* v : {&a->binned_chunks, &a->fastbin_chunks, &a->tcache_chunks, &a->chunks, &a->heaps,
                      &a->attached_threads})
    RETURN_IF_ERROR(r->Varint(v, "arena counts"));
  return r->String(&a->damage, "arena damage");
}

absl::Status ParseRanges(BodyReader* r, HeapSnapshot* s) {
  uint64_t n = 0, at = 0;
  RETURN_IF_ERROR(r->Varint(&n, "free range count"));
  const uint64_t max_units = ~uint64_t{0} / kUnit;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t gap = 0, len = 0, arena = 0;
    uint8_t kind = 0;
    RETURN_IF_ERROR(r->Varint(&gap, "free range"));
    RETURN_IF_ERROR(r->Varint(&len, "free range"));
    RETURN_IF_ERROR(r->Varint(&arena, "free range"));
    RETURN_IF_ERROR(r->Byte(&kind, "free range"));
    if (len == 0 || gap > max_units - at || len > max_units - at - gap)
      return r->Bad(absl::StrCat("free range ", i, ": ", gap, " units on, ", len, " long: outside the address space"));
    if (arena >= s->arenas.size() || kind > kMaxFreeKind)
      return r->Bad(absl::StrCat("free range ", i, ": arena ", arena, " kind ", int{kind}, " unknown"));
    s->free_ranges.push_back({(at + gap) * kUnit, (at + gap + len) * kUnit, static_cast<uint32_t>(arena),
                              static_cast<FreeKind>(kind)});
    at += gap + len;
    // Chunks of a heap are never empty: every range counts one whole one;
    // the vector cannot outgrow the file (each range is >= 4 bytes of it).
  }
  return absl::OkStatus();
}

absl::StatusOr<HeapSnapshot> ParseBody(BodyReader* r, uint32_t pid) {
  HeapSnapshot s;
  s.pid = pid;
  uint8_t flags = 0, allocator = 0, layout = 0;
  RETURN_IF_ERROR(r->Byte(&flags, "snapshot flags"));
  if (flags & ~(kHasTime | kHasThreads | kHasCpus)) return r->Bad(absl::StrCat("unknown snapshot flags ", flags));
  uint64_t v = 0;
  for (auto [bit, field] : {std::pair{kHasTime, &s.time}, {kHasThreads, &s.threads}, {kHasCpus, &s.cpus}}) {
    if ((flags & bit) == 0) continue;
    RETURN_IF_ERROR(r->Varint(&v, "snapshot numbers"));
    *field = v;
  }
  RETURN_IF_ERROR(r->Byte(&allocator, "allocator"));
  RETURN_IF_ERROR(r->Byte(&layout, "layout source"));
  if (allocator > kMaxAllocator || layout > static_cast<uint8_t>(LayoutSource::kTable))
    return r->Bad(absl::StrCat("unknown allocator ", int{allocator}, " or layout source ", int{layout}));
  s.allocator = static_cast<Allocator>(allocator);
  s.layout = static_cast<LayoutSource>(layout);
  RETURN_IF_ERROR(r->Varint(&v, "attempts"));
  if (v > 1000) return r->Bad(absl::StrCat(v, " attempts"));
  s.attempts = static_cast<uint32_t>(v);
  RETURN_IF_ERROR(r->String(&s.glibc_version, "glibc version"));
  RETURN_IF_ERROR(r->String(&s.layout_from, "layout source"));
  RETURN_IF_ERROR(r->String(&s.note, "note"));
  for (uint64_t* p : {&s.mmapped_count, &s.mmapped_bytes, &s.arena_max, &s.arena_test})
    RETURN_IF_ERROR(r->Varint(p, "mp_ figures"));
  uint64_t arenas = 0;
  RETURN_IF_ERROR(r->Varint(&arenas, "arena count"));
  if (arenas > kMaxHeapArenas) return r->Bad(absl::StrCat(arenas, " arenas (at most ", kMaxHeapArenas, ")"));
  for (uint64_t i = 0; i < arenas; ++i) {
    ArenaStats a;
    RETURN_IF_ERROR(ParseArena(r, &a));
    s.arenas.push_back(std::move(a));
  }
  RETURN_IF_ERROR(ParseRanges(r, &s));
  if (!r->empty()) return r->Bad("bytes after the last free range");
  return s;
}

absl::Status Bad(absl::string_view name, size_t offset, absl::string_view what) {
  return absl::DataLossError(absl::StrCat(name, ": offset ", offset, ": ", what));
}

}  // namespace

std::string HeapSnapshotPathFor(absl::string_view trace_path) { return absl::StrCat(trace_path, ".heap"); }

std::string EncodeHeapFileHeader(int32_t clockid) {
  std::string out(kHeapFileMagic, sizeof(kHeapFileMagic));
  PutFixed(&out, kHeapFileVersion);
  PutFixed(&out, clockid);
  PutFixed(&out, uint64_t{0});
  PutFixed(&out, uint64_t{0});
  return out;
}

std::string EncodeHeapSnapshot(const HeapSnapshot& s) {
  std::string body;
  body.push_back(static_cast<char>((s.time ? kHasTime : 0) | (s.threads ? kHasThreads : 0) | (s.cpus ? kHasCpus : 0)));
  for (const std::optional<uint64_t>& v : {s.time, s.threads, s.cpus})
    if (v) PutVarint(&body, *v);
  body.push_back(static_cast<char>(s.allocator));
  body.push_back(static_cast<char>(s.layout));
  PutVarint(&body, s.attempts);
  PutCutString(&body, s.glibc_version);
  PutCutString(&body, s.layout_from);
  PutCutString(&body, s.note);
  for (uint64_t v : {s.mmapped_count, s.mmapped_bytes, s.arena_max, s.arena_test}) PutVarint(&body, v);
  PutVarint(&body, s.arenas.size());
  for (const ArenaStats& a : s.arenas) PutArena(&body, a);
  PutVarint(&body, s.free_ranges.size());
  uint64_t at = 0;
  for (const FreeRange& r : s.free_ranges) {
    PutVarint(&body, (r.start - at) / kUnit);
    PutVarint(&body, (r.end - r.start) / kUnit);
    PutVarint(&body, r.arena);
    body.push_back(static_cast<char>(r.kind));
    at = r.end;
  }
  std::string out;
  PutFixed(&out, kHeapRecordMagic);
  PutFixed(&out, s.pid);
  PutFixed(&out, static_cast<uint64_t>(kHeapRecordHeaderSize + body.size()));
  return out + body;
}

absl::StatusOr<HeapSnapshotFile> ParseHeapSnapshotFile(absl::Span<const uint8_t> bytes, absl::string_view name) {
  ByteReader r(bytes);
  char magic[8];
  uint32_t version;
  uint64_t reserved[2];
  HeapSnapshotFile f;
  if (!r.Read(&magic) || std::memcmp(magic, kHeapFileMagic, sizeof(magic)) != 0)
    return Bad(name, 0, "not a pageblame heap snapshot file (no 'PBHEAP01')");
  if (!r.Read(&version) || !r.Read(&f.clockid) || !r.Read(&reserved)) return Bad(name, r.pos(), "truncated file header");
  if (version != kHeapFileVersion) return Bad(name, 8, absl::StrCat("version ", version, ", expected 1"));
  while (!r.empty()) {
    const size_t base = r.pos();
    uint32_t rmagic, pid;
    uint64_t size;
    if (!r.Read(&rmagic) || !r.Read(&pid) || !r.Read(&size))
      return Bad(name, base, "truncated: a 16-byte heap snapshot header was expected");
    if (rmagic != kHeapRecordMagic) return Bad(name, base, "not a heap snapshot record (no 'HEAP')");
    if (pid == 0) return Bad(name, base, "pid 0");
    absl::Span<const uint8_t> body;
    if (size < kHeapRecordHeaderSize || !r.ReadSpan(size - kHeapRecordHeaderSize, &body))
      return Bad(name, base, absl::StrCat("truncated: the record says ", size, " bytes, ",
                                          r.remaining() + kHeapRecordHeaderSize, " remain"));
    BodyReader br(body, base + kHeapRecordHeaderSize, name);
    ASSIGN_OR_RETURN(HeapSnapshot s, ParseBody(&br, pid));
    f.snapshots.push_back(std::move(s));
  }
  return f;
}

absl::StatusOr<HeapSnapshotFile> ReadHeapSnapshotFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, InputFile::ReadWhole(path, "heap snapshot file", InputFile::Accept::kRegular));
  return ParseHeapSnapshotFile(
      absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), path);
}

}  // namespace pageblame::heap
