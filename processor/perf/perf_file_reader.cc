#include "processor/perf/perf_file_reader.h"

#include <utility>

#include "absl/base/optimization.h"
#include "absl/numeric/bits.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "processor/base/byte_reader.h"
#include "processor/base/status_macros.h"
#include "processor/perf/header_parser.h"
#include "processor/perf/event_header.h"
#include "processor/perf/perf_format.h"

namespace pageblame::perf {

namespace {

const char* FeatureName(int feature) {
  switch (feature) {
    case format::kFeatTracingData: return "TRACING_DATA";
    case format::kFeatBuildId: return "BUILD_ID";
    case format::kFeatHostname: return "HOSTNAME";
    case format::kFeatOsRelease: return "OSRELEASE";
    case format::kFeatVersion: return "VERSION";
    case format::kFeatArch: return "ARCH";
    case format::kFeatNrCpus: return "NRCPUS";
    case format::kFeatCmdline: return "CMDLINE";
    case format::kFeatEventDesc: return "EVENT_DESC";
    case format::kFeatCompressed: return "COMPRESSED";
    // The recording's start on its clock: side files are checked against it
    // (residency/residency_index.h, replay/attach_maps.h).
    case format::kFeatClockData: return "CLOCK_DATA";
    default: return nullptr;
  }
}

}  // namespace

PerfFileReader::PerfFileReader(std::unique_ptr<MappedFile> file) : file_(std::move(file)) {
  path_ = file_->path();
}

absl::StatusOr<std::unique_ptr<PerfReader>> PerfFileReader::Open(
    std::unique_ptr<MappedFile> file) {
  std::unique_ptr<PerfFileReader> reader(new PerfFileReader(std::move(file)));
  RETURN_IF_ERROR(reader->ReadHeader());
  return std::unique_ptr<PerfReader>(std::move(reader));
}

absl::Status PerfFileReader::HeaderError(absl::string_view what) const {
  return absl::DataLossError(absl::StrCat(path_, ": ", what));
}

absl::Status PerfFileReader::CheckSection(absl::string_view name, const Section& s) const {
  const uint64_t file_size = file_->size();
  if (s.offset > file_size || s.size > file_size - s.offset) {
    return HeaderError(absl::StrFormat(
        "%s section [0x%x, 0x%x) runs past the end of the file (0x%x bytes): truncated file?",
        name, s.offset, s.offset + s.size, file_size));
  }
  return absl::OkStatus();
}

absl::Span<const uint8_t> PerfFileReader::Bytes(const Section& s) const {
  return file_->bytes().subspan(s.offset, s.size);  // after CheckSection
}

absl::Status PerfFileReader::ReadHeader() {
  const size_t file_size = file_->size();
  RETURN_IF_ERROR(CheckStart(path_, "file", file_size));
  ByteReader r(file_->bytes());
  uint64_t magic = 0, header_size = 0, attr_size = 0;
  r.Read(&magic);
  r.Read(&header_size);
  RETURN_IF_ERROR(CheckMagic(path_, magic));
  // header.c perf_file_header__read(): the full header, or the older one
  // that ends before the feature bitmap.
  const bool has_features = header_size != format::kFileHeaderSizeNoFeatures;
  if (has_features && header_size < format::kFileHeaderSize) {
    return HeaderError(absl::StrCat("perf_file_header size ", header_size, " < ",
                                    format::kFileHeaderSize, ": corrupt header"));
  }
  if (header_size > file_size) {
    return HeaderError(absl::StrCat("truncated header: the file has ", file_size,
                                    " bytes, the header says ", header_size));
  }
  Section attrs, data, event_types;
  r.Read(&attr_size);
  r.Read(&attrs.offset);
  r.Read(&attrs.size);
  r.Read(&data.offset);
  r.Read(&data.size);
  r.Read(&event_types.offset);
  r.Read(&event_types.size);
  uint64_t bitmap[format::kFeatureBitmapWords] = {};
  if (has_features) {
    for (uint64_t& word : bitmap) r.Read(&word);
  }

  if (data.size == 0) {
    // perf record writes the final header at exit; 0 means it never did
    // (header.c warns the same way and perf report refuses the file).
    return HeaderError(
        "data size is 0: the header was never finalized (was perf record killed?)");
  }
  RETURN_IF_ERROR(CheckSection("attrs", attrs));
  RETURN_IF_ERROR(CheckSection("data", data));
  RETURN_IF_ERROR(ReadAttrs(attrs, attr_size));
  data_begin_ = pos_ = data.offset;
  data_end_ = data.offset + data.size;
  info_.data_size = data.size;
  if (has_features) RETURN_IF_ERROR(ReadFeatures(bitmap, data_end_));
  IndexAttrs();
  // A record is at most 64 KiB (u16 size): it always fits the window.
  static_assert(FileWindow::kDefaultWindow > 0xffff);
  window_ = std::make_unique<FileWindow>(file_.get(), data_begin_, data_end_);
  return absl::OkStatus();
}

absl::Status PerfFileReader::ReadAttrs(const Section& attrs, uint64_t attr_size) {
  // Each entry: a perf_event_attr of attr.size bytes, then the
  // perf_file_section of its ids; read in sequence like header.c read_attr().
  if (attr_size < format::kAttrSizeVer0 + format::kFileSectionSize) {
    return HeaderError(absl::StrCat("attr_size ", attr_size, " in the header is too small"));
  }
  const uint64_t nr = attrs.size / attr_size;
  ByteReader r(Bytes(attrs));
  info_.attrs.reserve(nr);
  for (uint64_t i = 0; i < nr; ++i) {
    const size_t entry_offset = attrs.offset + r.pos();
    auto entry_error = [&](absl::string_view what) {
      return HeaderError(absl::StrFormat("attr %d at 0x%x: %s", i, entry_offset, what));
    };
    uint32_t size;
    absl::Status st = ReadAttrSize(r.rest(), &size);
    if (!st.ok()) return entry_error(st.message());
    absl::Span<const uint8_t> attr_bytes;
    Section ids;
    if (!r.ReadSpan(size, &attr_bytes) || !r.Read(&ids.offset) || !r.Read(&ids.size)) {
      return entry_error(absl::StrCat("attr of ", size, " bytes runs past the attrs section"));
    }
    EventAttr attr;
    RETURN_IF_ERROR(ParseEventAttr(attr_bytes, &attr));
    RETURN_IF_ERROR(CheckSection(absl::StrCat("ids of attr ", i), ids));
    ByteReader id_reader(Bytes(ids));
    attr.ids.resize(ids.size / sizeof(uint64_t));
    for (uint64_t& id : attr.ids) id_reader.Read(&id);
    info_.attrs.push_back(std::move(attr));
  }
  return absl::OkStatus();
}

absl::Status PerfFileReader::ReadFeatures(const uint64_t (&bitmap)[4], uint64_t table_offset) {
  // header.c perf_header__process_sections(): one perf_file_section per set
  // bit, in bit order, starting right after the data section.
  int nr = 0;
  for (uint64_t word : bitmap) nr += absl::popcount(word);
  Section table{table_offset, static_cast<uint64_t>(nr) * format::kFileSectionSize};
  RETURN_IF_ERROR(CheckSection("feature table", table));
  ByteReader r(Bytes(table));
  for (int feature = 0; feature < 256; ++feature) {
    if (!(bitmap[feature / 64] & (1ULL << (feature % 64)))) continue;
    Section s;
    r.Read(&s.offset);
    r.Read(&s.size);
    // Check even the features we skip: a section past the end of the file
    // means the file was cut short.
    const char* name = FeatureName(feature);
    RETURN_IF_ERROR(CheckSection(
        name != nullptr ? absl::StrCat(name, " feature") : absl::StrCat("feature ", feature), s));
    if (name == nullptr) continue;  // a feature we do not need
    absl::Status st = ParseFeature(feature, Bytes(s), &info_);
    if (!st.ok()) {
      return HeaderError(absl::StrFormat("%s feature at 0x%x: %s", name, s.offset, st.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status PerfFileReader::BadHeader(size_t left, uint32_t type, uint16_t size) const {
  if (left < format::kEventHeaderSize) {
    return RecordError(pos_, absl::StrCat("only ", left,
                                          " bytes left in the data section for a header"));
  }
  if (size < format::kEventHeaderSize) {
    return RecordError(pos_, absl::StrCat("size ", size, " < 8: corrupt record"));
  }
  return RecordError(pos_, absl::StrFormat(
      "type %u, size %u runs past the end of the data section at 0x%x", type, size, data_end_));
}

absl::Status PerfFileReader::SkipUserRecord(uint32_t type, const uint8_t* base, uint16_t size,
                                            size_t offset) {
  // perf's own records in the data section carry nothing we need, but two of
  // them are followed by a payload outside their size (session.c
  // perf_session__process_user_event returns it as `skip`), and COMPRESSED
  // ones hold records.
  ByteReader body(base, size);
  uint64_t payload = 0;
  if (type == kRecordHeaderTracingData) {
    uint32_t n = 0;
    body.Skip(format::kEventHeaderSize);
    body.Read(&n);
    payload = n;
  } else if (type == format::kRecordAuxtrace) {
    body.Skip(format::kEventHeaderSize);
    body.Read(&payload);
  } else if (type == format::kRecordCompressed || type == format::kRecordCompressed2) {
    // Its records come next (Next()); its bytes stay in the window until
    // they are used up, as Next() reads nothing else meanwhile.
    RawRecord rec;
    rec.type = type;
    rec.bytes = absl::Span<const uint8_t>(base, size);
    rec.offset = offset;
    return Decompress(rec);
  }
  if (payload > data_end_ - pos_) {
    return RecordError(offset, absl::StrCat("payload of ", payload,
                                            " bytes runs past the end of the data section"));
  }
  pos_ += payload;
  return absl::OkStatus();
}

absl::StatusOr<bool> PerfFileReader::Next(RawRecord* out) {
  // Records are valid only until the next call: the window moves on. Called
  // for every record: errors and perf's own records are built elsewhere, so
  // that this stays a short function.
  if (ABSL_PREDICT_FALSE(decompressing_)) {
    ASSIGN_OR_RETURN(bool got, NextDecompressed(out));
    if (got) return true;
  }
  while (pos_ < data_end_) {
    const size_t left = data_end_ - pos_;
    if (ABSL_PREDICT_FALSE(left < format::kEventHeaderSize)) return BadHeader(left, 0, 0);
    ASSIGN_OR_RETURN(const uint8_t* header, window_->At(pos_, format::kEventHeaderSize));
    const EventHeader h = ReadEventHeader(header);
    const uint32_t type = h.type;
    const uint16_t size = h.size;
    if (ABSL_PREDICT_FALSE(!h.SizeIsSane() || size > left)) return BadHeader(left, type, size);
    ASSIGN_OR_RETURN(const uint8_t* base, window_->At(pos_, size));
    const size_t offset = pos_;
    pos_ += size;
    if (ABSL_PREDICT_FALSE(type >= format::kRecordUserTypeStart &&
                           type != kRecordFinishedRound && type != kRecordFinishedInit)) {
      RETURN_IF_ERROR(SkipUserRecord(type, base, size, offset));
      if (decompressing_) {
        ASSIGN_OR_RETURN(bool got, NextDecompressed(out));
        if (got) return true;
      }
      continue;
    }
    out->type = type;
    out->misc = h.misc;
    out->bytes = absl::Span<const uint8_t>(base, size);
    out->offset = offset;
    out->decompressed_offset = RawRecord::kNotCompressed;
    return true;
  }
  FinishDecompressing();
  return false;
}

absl::StatusOr<bool> PerfFileReader::ReadAgain(const RawRecord& seen, std::vector<uint8_t>* buffer,
                                               RawRecord* out) const {
  if (!CanReadAgain(seen)) return false;
  const size_t size = seen.bytes.size();
  if (size < format::kEventHeaderSize || seen.offset < data_begin_ ||
      seen.offset > data_end_ || size > data_end_ - seen.offset) {
    return RecordError(seen.offset, "a record to read again lies outside the data section");
  }
  buffer->resize(size);
  ASSIGN_OR_RETURN(size_t got, file_->ReadAt(seen.offset, absl::MakeSpan(*buffer)));
  const EventHeader h = ReadEventHeader(buffer->data());
  if (got != size || h.type != seen.type || h.size != size) {
    return RecordError(seen.offset, "the record read again differs from the first read (the file changed?)");
  }
  *out = seen;
  out->bytes = absl::MakeConstSpan(*buffer);
  return true;
}

}  // namespace pageblame::perf
