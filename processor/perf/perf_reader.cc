#include "processor/perf/perf_reader.h"

#include <sys/stat.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "processor/base/byte_reader.h"
#include "processor/base/mapped_file.h"
#include "processor/base/status_macros.h"
#include "processor/perf/header_parser.h"
#include "processor/perf/perf_file_reader.h"
#include "processor/perf/perf_format.h"
#include "processor/perf/perf_pipe_reader.h"
#include "processor/perf/sample_parser.h"

namespace pageblame::perf {

absl::StatusOr<std::unique_ptr<PerfReader>> PerfReader::Open(const std::string& path) {
  if (path == "-") return PerfPipeReader::OpenStdin();
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": is a directory, not a perf.data file"));
  }
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // A FIFO or character device (e.g. /dev/stdin, a named pipe) cannot be
    // mapped; it can only hold a pipe-mode stream.
    return PerfPipeReader::OpenPath(path);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> file, MappedFile::Open(path));
  RETURN_IF_ERROR(CheckStart(path, "file", file->size()));
  ByteReader r(file->bytes());
  uint64_t magic = 0, header_size = 0;
  r.Read(&magic);
  r.Read(&header_size);
  if (magic == format::kMagic2 && header_size == format::kPipeHeaderSize) {
    // A pipe-mode stream saved to a file (perf record -o - > file).
    return PerfPipeReader::OpenPath(path);
  }
  return PerfFileReader::Open(std::move(file));
}

void PerfReader::IndexAttrs() {
  attr_by_id_.clear();
  id_cache_ = {};  // attrs may have moved
  for (size_t i = 0; i < info_.attrs.size(); ++i) {
    for (uint64_t id : info_.attrs[i].ids) attr_by_id_.emplace(id, static_cast<uint32_t>(i));
  }
  // perf requires every event to put the id at the same place (evlist.c
  // evlist__valid_sample_type); if they disagree the id cannot be found.
  for (EventAttr& a : info_.attrs) a.layout = LayoutOf(a.sample_type, a.read_format);
  sample_id_pos_ = trailer_id_pos_ = -1;
  sample_id_all_ = false;
  if (info_.attrs.empty()) return;
  const uint64_t st0 = info_.attrs[0].sample_type;
  sample_id_pos_ = SampleIdPos(st0);
  trailer_id_pos_ = TrailerIdPos(st0);
  sample_id_all_ = info_.attrs[0].sample_id_all;
  for (const EventAttr& attr : info_.attrs) {
    if (SampleIdPos(attr.sample_type) != sample_id_pos_) sample_id_pos_ = -1;
    if (TrailerIdPos(attr.sample_type) != trailer_id_pos_) trailer_id_pos_ = -1;
  }
}

absl::Status PerfReader::RecordError(uint64_t offset, absl::string_view what) const {
  return absl::DataLossError(absl::StrFormat("%s: record at offset 0x%x: %s", path_, offset, what));
}

absl::Status PerfReader::RecordError(const RawRecord& rec, absl::string_view what) const {
  return absl::DataLossError(absl::StrCat(
      path_, ": ", RecordDecompressor::Where(rec.offset, rec.decompressed_offset), ": ", what));
}

absl::Status PerfReader::Decompress(const RawRecord& rec) {
  if (decompressor_ == nullptr) {
    // perf has only zstd (compress.h); say so rather than fail on the data.
    if (info_.compressed && info_.compression_type != format::kCompressionZstd) {
      return absl::UnimplementedError(absl::StrFormat(
          "%s: the COMPRESSED feature says compression type %u; only zstd (%u) is supported",
          path_, info_.compression_type, format::kCompressionZstd));
    }
    decompressor_ = std::make_unique<RecordDecompressor>(path_);
  }
  RETURN_IF_ERROR(decompressor_->Feed(rec));
  decompressing_ = true;
  return absl::OkStatus();
}

absl::StatusOr<bool> PerfReader::NextDecompressed(RawRecord* out) {
  ASSIGN_OR_RETURN(bool got, decompressor_->Next(out));
  if (!got) decompressing_ = false;
  return got;
}

void PerfReader::ContinueStreamOf(PerfReader* earlier) {
  decompressor_ = std::move(earlier->decompressor_);
  if (decompressor_) decompressor_->set_path(path_);  // errors name the chunk they are in
  cut_at_end_ = absl::OkStatus();
}

void PerfReader::FinishDecompressing() {
  if (decompressor_) cut_at_end_ = decompressor_->Finish();
}

const EventAttr* PerfReader::AttrForId(uint64_t id) const {
  // The kernel numbers the ids of one session consecutively, so a small
  // direct-mapped cache keyed by the low bits holds every id of a typical
  // trace (a few events x CPUs) and skips the hash lookup per sample.
  IdCacheEntry& c = id_cache_[id % kIdCacheSize];
  if (c.attr != nullptr && c.id == id) return c.attr;
  auto it = attr_by_id_.find(id);
  if (it == attr_by_id_.end()) return nullptr;
  c = IdCacheEntry{id, &info_.attrs[it->second]};
  return c.attr;
}

absl::StatusOr<const EventAttr*> PerfReader::SampleAttr(const RawRecord& rec) const {
  RETURN_IF_ERROR(CheckType(rec, kRecordSample, kRecordSample, "SAMPLE"));
  if (info_.attrs.empty()) return RecordError(rec, "sample before any event attr");
  if (info_.attrs.size() == 1) return &info_.attrs[0];
  if (sample_id_pos_ < 0) {
    return RecordError(rec,
                       "cannot tell the sample's event: the events disagree on where "
                       "the sample id is (no PERF_SAMPLE_IDENTIFIER)");
  }
  ByteReader r(rec.bytes);
  uint64_t id;
  if (!r.Seek(format::kEventHeaderSize + 8 * static_cast<size_t>(sample_id_pos_)) ||
      !r.Read(&id)) {
    return RecordError(rec, "sample too short for its id");
  }
  if (id == 0) return &info_.attrs[0];  // synthesized
  const EventAttr* attr = AttrForId(id);
  if (attr == nullptr) return RecordError(rec, absl::StrCat("sample of unknown id ", id));
  return attr;
}

absl::StatusOr<const EventAttr*> PerfReader::AttrForSideband(const RawRecord& rec) const {
  if (info_.attrs.empty() || !sample_id_all_) return nullptr;
  if (info_.attrs.size() == 1) return &info_.attrs[0];
  if (trailer_id_pos_ < 0) {
    return RecordError(rec,
                       "cannot tell the record's event: the events disagree on where "
                       "the sample_id trailer holds the id");
  }
  const size_t back = 8 * static_cast<size_t>(trailer_id_pos_);
  uint64_t id;
  ByteReader r(rec.bytes);
  if (rec.bytes.size() < format::kEventHeaderSize + back || !r.Seek(rec.bytes.size() - back) ||
      !r.Read(&id)) {
    return RecordError(rec, "record too short for its sample_id trailer");
  }
  if (id == 0) return &info_.attrs[0];  // perf's synthesized records carry id 0
  const EventAttr* attr = AttrForId(id);
  if (attr == nullptr) {
    return RecordError(rec, absl::StrCat("sample_id trailer of unknown id ", id));
  }
  return attr;
}

absl::Status PerfReader::ParseSampleId(const RawRecord& rec, size_t fixed_size, SampleId* out,
                                       size_t* trailer_size) const {
  *out = SampleId();
  *trailer_size = 0;
  if (rec.bytes.size() < fixed_size) {
    return RecordError(rec, absl::StrCat("record type ", rec.type, " of ",
                                                rec.bytes.size(), " bytes is shorter than its ",
                                                fixed_size, "-byte layout"));
  }
  ASSIGN_OR_RETURN(const EventAttr* attr, AttrForSideband(rec));
  if (attr == nullptr || !attr->sample_id_all) return absl::OkStatus();
  const size_t n = TrailerSize(attr->sample_type);
  if (rec.bytes.size() - fixed_size < n) {
    return RecordError(rec, absl::StrCat("record type ", rec.type, " of ",
                                                rec.bytes.size(), " bytes has no room for its ",
                                                n, "-byte sample_id trailer"));
  }
  ParseTrailer(attr->sample_type, rec.bytes.subspan(rec.bytes.size() - n), out);
  *trailer_size = n;
  return absl::OkStatus();
}

absl::Status PerfReader::CheckType(const RawRecord& rec, uint32_t a, uint32_t b,
                                   const char* what) const {
  if (rec.type == a || rec.type == b) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: %s: type %u is not %s", path_,
                      RecordDecompressor::Where(rec.offset, rec.decompressed_offset), rec.type,
                      what));
}

absl::Status PerfReader::ParseSample(const RawRecord& rec, Sample* out) const {
  ASSIGN_OR_RETURN(const EventAttr* attr, SampleAttr(rec));
  return ParseSample(rec, *attr, out);
}

absl::Status PerfReader::ParseSample(const RawRecord& rec, const EventAttr& attr,
                                     Sample* out) const {
  absl::Status st = ParseSampleBody(attr, rec.bytes.subspan(format::kEventHeaderSize), out,
                                    &callchain_scratch_);
  if (!st.ok()) return RecordError(rec, st.message());
  return absl::OkStatus();
}

absl::Status PerfReader::ParseComm(const RawRecord& rec, CommRecord* out) const {
  // perf_record_comm: header, u32 pid, u32 tid, char comm[] (padded).
  constexpr size_t kFixed = 16;
  RETURN_IF_ERROR(CheckType(rec, kRecordComm, kRecordComm, "COMM"));
  size_t trailer;
  RETURN_IF_ERROR(ParseSampleId(rec, kFixed, &out->sample_id, &trailer));
  ByteReader r(rec.bytes.subspan(0, rec.bytes.size() - trailer));
  r.Skip(format::kEventHeaderSize);
  r.Read(&out->pid);
  r.Read(&out->tid);
  r.ReadFixedString(r.remaining(), &out->comm);
  out->exec = (rec.misc & kMiscCommExec) != 0;
  return absl::OkStatus();
}

absl::Status PerfReader::ParseTask(const RawRecord& rec, TaskRecord* out) const {
  // perf_record_fork (also EXIT): header, u32 pid, ppid, tid, ptid, u64 time.
  constexpr size_t kFixed = 32;
  RETURN_IF_ERROR(CheckType(rec, kRecordFork, kRecordExit, "FORK/EXIT"));
  size_t trailer;
  RETURN_IF_ERROR(ParseSampleId(rec, kFixed, &out->sample_id, &trailer));
  ByteReader r(rec.bytes);
  r.Skip(format::kEventHeaderSize);
  r.Read(&out->pid);
  r.Read(&out->ppid);
  r.Read(&out->tid);
  r.Read(&out->ptid);
  r.Read(&out->time);
  return absl::OkStatus();
}

absl::Status PerfReader::ParseMmap(const RawRecord& rec, MmapRecord* out) const {
  // perf_record_mmap: header, u32 pid, tid, u64 start, len, pgoff, filename[].
  // perf_record_mmap2 adds after pgoff either {u32 maj, min; u64 ino,
  // ino_generation} or, with PERF_RECORD_MISC_MMAP_BUILD_ID, {u8 size,
  // u8 res, u16 res, u8 build_id[20]}; then u32 prot, flags; filename[].
  constexpr size_t kFixedMmap = 40;
  constexpr size_t kFixedMmap2 = 72;
  constexpr size_t kBuildIdOffset = 40;
  constexpr uint32_t kProtExec = 4;  // PROT_EXEC
  RETURN_IF_ERROR(CheckType(rec, kRecordMmap, kRecordMmap2, "MMAP/MMAP2"));
  const bool v2 = rec.type == kRecordMmap2;
  size_t trailer;
  RETURN_IF_ERROR(ParseSampleId(rec, v2 ? kFixedMmap2 : kFixedMmap, &out->sample_id, &trailer));
  ByteReader r(rec.bytes.subspan(0, rec.bytes.size() - trailer));
  r.Skip(format::kEventHeaderSize);
  r.Read(&out->pid);
  r.Read(&out->tid);
  r.Read(&out->start);
  r.Read(&out->len);
  r.Read(&out->pgoff);
  out->build_id = {};
  if (v2) {
    if (rec.misc & kMiscMmapBuildId) {
      uint8_t size = 0;
      absl::Span<const uint8_t> id;
      r.Read(&size);
      r.Skip(3);
      r.ReadSpan(format::kBuildIdMaxSize, &id);
      out->build_id = std::string_view(reinterpret_cast<const char*>(id.data()),
                                       std::min<size_t>(size, format::kBuildIdMaxSize));
    } else {
      r.Seek(kBuildIdOffset + 24);  // maj, min, ino, ino_generation: unused
    }
    r.Read(&out->prot);
    r.Read(&out->flags);
    out->has_prot = true;
  } else {
    // v1 has no prot: perf (machine.c) treats a non-data mapping as exec.
    out->prot = (rec.misc & format::kMiscMmapData) ? 0 : kProtExec;
    out->flags = 0;
    out->has_prot = false;
  }
  r.ReadFixedString(r.remaining(), &out->filename);
  out->cpumode = rec.misc & kMiscCpuModeMask;
  return absl::OkStatus();
}

absl::Status PerfReader::ParseLost(const RawRecord& rec, LostRecord* out) const {
  // perf_record_lost: header, u64 id, u64 lost.
  // perf_record_lost_samples: header, u64 lost.
  RETURN_IF_ERROR(CheckType(rec, kRecordLost, kRecordLostSamples, "LOST/LOST_SAMPLES"));
  out->samples = rec.type == kRecordLostSamples;
  size_t trailer;
  RETURN_IF_ERROR(ParseSampleId(rec, out->samples ? 16 : 24, &out->sample_id, &trailer));
  ByteReader r(rec.bytes);
  r.Skip(format::kEventHeaderSize);
  out->id = 0;
  if (!out->samples) r.Read(&out->id);
  r.Read(&out->lost);
  return absl::OkStatus();
}

}  // namespace pageblame::perf
