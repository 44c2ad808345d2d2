#include "processor/perf/header_parser.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "processor/base/byte_reader.h"
#include "processor/base/status_macros.h"
#include "processor/perf/perf_format.h"

namespace pageblame::perf {

namespace {

absl::Status Short(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("truncated ", what));
}

// header.c do_read_string(): u32 len, then `len` bytes holding a
// NUL-terminated string padded with NULs.
bool ReadHeaderString(ByteReader* r, std::string* out) {
  uint32_t len;
  std::string_view s;
  if (!r->Read(&len) || !r->ReadFixedString(len, &s)) return false;
  out->assign(s);
  return true;
}

absl::Status ParseString(absl::Span<const uint8_t> bytes, absl::string_view what,
                         std::string* out) {
  ByteReader r(bytes);
  if (!ReadHeaderString(&r, out)) return Short(what);
  return absl::OkStatus();
}

// HEADER_CMDLINE: u32 nr, then nr header strings (argv, perf's own first).
absl::Status ParseCmdline(absl::Span<const uint8_t> bytes, std::vector<std::string>* out) {
  ByteReader r(bytes);
  uint32_t nr;
  if (!r.Read(&nr)) return Short("CMDLINE feature");
  // Each string needs at least its u32 length: refuse counts that cannot fit
  // before reserving anything.
  if (nr > r.remaining() / sizeof(uint32_t)) return Short("CMDLINE feature");
  out->clear();
  out->reserve(nr);
  for (uint32_t i = 0; i < nr; ++i) {
    std::string arg;
    if (!ReadHeaderString(&r, &arg)) return Short("CMDLINE feature");
    out->push_back(std::move(arg));
  }
  return absl::OkStatus();
}

EventAttr* FindAttrById(FileInfo* info, uint64_t id) {
  for (EventAttr& attr : info->attrs) {
    if (std::find(attr.ids.begin(), attr.ids.end(), id) != attr.ids.end()) return &attr;
  }
  return nullptr;
}

// HEADER_EVENT_DESC (header.c write_event_desc/read_event_desc): u32 nr,
// u32 attr_size, then per event: attr (attr_size bytes), u32 nr_ids,
// header string name, nr_ids u64 ids. We only take the names, matched to
// the attrs by id (the attrs section is authoritative for the attr itself).
absl::Status ParseEventDesc(absl::Span<const uint8_t> bytes, FileInfo* info) {
  ByteReader r(bytes);
  uint32_t nr, attr_size;
  if (!r.Read(&nr) || !r.Read(&attr_size)) return Short("EVENT_DESC feature");
  for (uint32_t i = 0; i < nr; ++i) {
    uint32_t nr_ids;
    std::string name;
    if (!r.Skip(attr_size) || !r.Read(&nr_ids) || !ReadHeaderString(&r, &name)) {
      return Short("EVENT_DESC feature");
    }
    if (nr_ids > r.remaining() / sizeof(uint64_t)) return Short("EVENT_DESC feature ids");
    EventAttr* target = nullptr;
    for (uint32_t j = 0; j < nr_ids; ++j) {
      uint64_t id = 0;
      r.Read(&id);  // fits: checked above
      if (target == nullptr) target = FindAttrById(info, id);
    }
    // Without ids (a single-event file may have none) the order is the same
    // as the attrs section's.
    if (target == nullptr && nr_ids == 0 && nr == info->attrs.size()) {
      target = &info->attrs[i];
    }
    if (target != nullptr) target->name = std::move(name);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckStart(const std::string& path, const char* what, uint64_t size) {
  constexpr uint64_t kStart = 16;  // u64 magic, u64 header size
  if (size == 0) {
    return absl::DataLossError(
        absl::StrCat(path, ": empty ", what, ": no perf.data header at offset 0"));
  }
  if (size < kStart) {
    return absl::DataLossError(absl::StrCat(path, ": not a perf.data ", what, ": only ", size,
                                            " bytes, its header at offset 0 needs ", kStart));
  }
  return absl::OkStatus();
}

absl::Status CheckMagic(const std::string& path, uint64_t magic) {
  if (magic == format::kMagic2) return absl::OkStatus();
  if (magic == format::kMagic2Swapped) {
    return absl::UnimplementedError(absl::StrCat(
        path, ": perf.data of the other byte order (big-endian) is not supported"));
  }
  if (magic == format::kMagic1) {
    return absl::UnimplementedError(
        absl::StrCat(path, ": old perf.data format (PERFFILE v1) is not supported"));
  }
  return absl::DataLossError(absl::StrCat(
      path, ": not a perf.data file (bad magic): the 8 bytes at offset 0 are '",
      absl::CHexEscape(absl::string_view(reinterpret_cast<const char*>(&magic), sizeof(magic))),
      "', not 'PERFILE2'"));
}

absl::Status ReadAttrSize(absl::Span<const uint8_t> bytes, uint32_t* size) {
  ByteReader r(bytes);
  uint32_t type;
  if (!r.Read(&type) || !r.Read(size)) return Short("perf_event_attr");
  if (*size == 0) *size = format::kAttrSizeVer0;
  if (*size < format::kAttrSizeVer0) {
    return absl::DataLossError(absl::StrCat("perf_event_attr size ", *size, " < ",
                                            format::kAttrSizeVer0));
  }
  return absl::OkStatus();
}

absl::Status ParseEventAttr(absl::Span<const uint8_t> bytes, EventAttr* out) {
  if (bytes.size() < format::kAttrSizeVer0) return Short("perf_event_attr");
  auto u64_at = [&](size_t offset) -> uint64_t {
    uint64_t v = 0;
    ByteReader r(bytes);
    if (r.Seek(offset)) r.Read(&v);  // 0 when the attr predates the field
    return v;
  };
  ByteReader r(bytes);
  r.Read(&out->type);
  out->config = u64_at(format::kAttrConfigOffset);
  out->sample_type = u64_at(format::kAttrSampleTypeOffset);
  out->read_format = u64_at(format::kAttrReadFormatOffset);
  const uint64_t flags = u64_at(format::kAttrFlagsOffset);
  out->sample_id_all = (flags & format::kAttrFlagSampleIdAll) != 0;
  out->mmap_data = (flags & format::kAttrFlagMmapData) != 0;
  out->sample_regs_user = bytes.size() >= format::kAttrSampleRegsUserOffset + 8
                              ? u64_at(format::kAttrSampleRegsUserOffset) : 0;
  out->sample_regs_intr = bytes.size() >= format::kAttrSampleRegsIntrOffset + 8
                              ? u64_at(format::kAttrSampleRegsIntrOffset) : 0;
  out->branch_sample_type = bytes.size() >= format::kAttrBranchSampleTypeOffset + 8
                                ? u64_at(format::kAttrBranchSampleTypeOffset) : 0;
  if (bytes.size() >= format::kAttrSampleStackUserOffset + 4) {
    ByteReader s(bytes);
    s.Seek(format::kAttrSampleStackUserOffset);
    s.Read(&out->sample_stack_user);
  }
  int32_t clockid = 0;
  ByteReader c(bytes);
  if ((flags & format::kAttrFlagUseClockid) && c.Seek(format::kAttrClockidOffset) && c.Read(&clockid)) {
    out->clockid = clockid;
  }
  return absl::OkStatus();
}

absl::Status ParseBuildIds(absl::Span<const uint8_t> bytes, std::vector<BuildIdEntry>* out) {
  ByteReader r(bytes);
  while (!r.empty()) {
    const size_t start = r.pos();
    uint32_t type;
    uint16_t misc, size;
    int32_t pid = 0;
    absl::Span<const uint8_t> id;
    if (!r.Read(&type) || !r.Read(&misc) || !r.Read(&size)) return Short("build id record");
    if (size < format::kBuildIdRecordFixedSize || size - format::kEventHeaderSize > r.remaining()) {
      return absl::DataLossError(absl::StrCat("bad build id record at +", start, ": size ", size));
    }
    r.Read(&pid);
    r.ReadSpan(24, &id);
    // Since perf 5.11 (PERF_RECORD_MISC_BUILD_ID_SIZE) build_id[20] holds the
    // id's length, so that md5 (16-byte) ids survive; before, it was 20.
    size_t id_len = format::kBuildIdMaxSize;
    if (misc & format::kMiscBuildIdSize) id_len = std::min<size_t>(id[20], format::kBuildIdMaxSize);
    std::string_view filename;
    r.ReadFixedString(size - format::kBuildIdRecordFixedSize, &filename);
    BuildIdEntry entry;
    entry.pid = pid;
    entry.build_id.assign(reinterpret_cast<const char*>(id.data()), id_len);
    entry.filename.assign(filename);
    out->push_back(std::move(entry));
  }
  return absl::OkStatus();
}

absl::Status ParseFeature(int feature, absl::Span<const uint8_t> bytes, FileInfo* info) {
  switch (feature) {
    case format::kFeatTracingData:
      info->tracing_data.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      return absl::OkStatus();
    case format::kFeatBuildId:
      return ParseBuildIds(bytes, &info->build_ids);
    case format::kFeatHostname:
      return ParseString(bytes, "HOSTNAME feature", &info->hostname);
    case format::kFeatOsRelease:
      return ParseString(bytes, "OSRELEASE feature", &info->os_release);
    case format::kFeatVersion:
      return ParseString(bytes, "VERSION feature", &info->perf_version);
    case format::kFeatArch:
      return ParseString(bytes, "ARCH feature", &info->arch);
    case format::kFeatNrCpus: {
      // u32 nr_cpus_available, u32 nr_cpus_online (header.c write_nrcpus).
      ByteReader r(bytes);
      uint32_t online;
      if (!r.Read(&info->nr_cpus) || !r.Read(&online)) {
        return absl::DataLossError(
            absl::StrCat("NRCPUS feature: ", bytes.size(), " bytes, expected 8"));
      }
      return absl::OkStatus();
    }
    case format::kFeatCmdline:
      return ParseCmdline(bytes, &info->cmdline);
    case format::kFeatEventDesc:
      return ParseEventDesc(bytes, info);
    case format::kFeatCompressed: {
      // header.c write_compressed: u32 comp_ver, comp_type, comp_level,
      // comp_ratio, comp_mmap_len.
      ByteReader r(bytes);
      uint32_t version;
      if (!r.Read(&version) || !r.Read(&info->compression_type) ||
          !r.Read(&info->compression_level) || !r.Read(&info->compression_ratio) ||
          !r.Read(&info->compression_mmap_len)) {
        return absl::DataLossError(
            absl::StrCat("COMPRESSED feature: ", bytes.size(), " bytes, expected 20"));
      }
      info->compressed = true;
      return absl::OkStatus();
    }
    case format::kFeatClockData: {
      // header.c write_clock_data: u32 version, u32 clockid, u64 wall-clock
      // ns, u64 clockid ns, both read once as the recording began.
      ByteReader r(bytes);
      uint32_t version, clockid;
      uint64_t tod, clock;
      if (!r.Read(&version) || !r.Read(&clockid) || !r.Read(&tod) || !r.Read(&clock)) {
        return absl::DataLossError(absl::StrCat("CLOCK_DATA feature: ", bytes.size(), " bytes, expected 24"));
      }
      info->clock_start = clock;
      info->clock_start_clockid = static_cast<int32_t>(clockid);
      info->clock_start_wall = tod;
      return absl::OkStatus();
    }
    default:
      return absl::OkStatus();
  }
}

absl::Status ApplyHeaderAttr(absl::Span<const uint8_t> record, FileInfo* info) {
  // perf/event.h perf_record_header_attr: header, attr (attr.size bytes),
  // then u64 ids up to the record's end (session.c perf_event__process_attr).
  absl::Span<const uint8_t> body = record.subspan(format::kEventHeaderSize);
  uint32_t attr_size;
  RETURN_IF_ERROR(ReadAttrSize(body, &attr_size));
  if (attr_size > body.size()) return Short("HEADER_ATTR record");
  EventAttr attr;
  RETURN_IF_ERROR(ParseEventAttr(body.subspan(0, attr_size), &attr));
  ByteReader ids(body.subspan(attr_size));
  uint64_t id;
  attr.ids.reserve(ids.remaining() / sizeof(uint64_t));
  while (ids.Read(&id)) attr.ids.push_back(id);
  info->attrs.push_back(std::move(attr));
  return absl::OkStatus();
}

absl::Status ApplyEventUpdate(absl::Span<const uint8_t> record, FileInfo* info) {
  // perf_record_event_update: header, u64 type, u64 id, then the payload.
  ByteReader r(record);
  uint64_t type, id;
  if (!r.Skip(format::kEventHeaderSize) || !r.Read(&type) || !r.Read(&id)) {
    return Short("EVENT_UPDATE record");
  }
  if (type != format::kEventUpdateName) return absl::OkStatus();
  std::string_view name;
  r.ReadFixedString(r.remaining(), &name);
  // An update for an id we do not know is harmless: names are optional.
  if (EventAttr* attr = FindAttrById(info, id)) attr->name.assign(name);
  return absl::OkStatus();
}

absl::Status ApplyEventType(absl::Span<const uint8_t> record, FileInfo* info) {
  // perf_record_header_event_type: header, u64 event_id, char name[64].
  ByteReader r(record);
  uint64_t event_id;
  std::string_view name;
  if (!r.Skip(format::kEventHeaderSize) || !r.Read(&event_id)) {
    return Short("HEADER_EVENT_TYPE record");
  }
  r.ReadFixedString(std::min<size_t>(r.remaining(), 64), &name);
  constexpr uint32_t kTypeTracepoint = 2;
  for (EventAttr& attr : info->attrs) {
    if (attr.type == kTypeTracepoint && attr.config == event_id && attr.name.empty()) {
      attr.name.assign(name);
    }
  }
  return absl::OkStatus();
}

absl::Status ApplyHeaderFeature(absl::Span<const uint8_t> record, FileInfo* info) {
  // perf_record_header_feature: header, u64 feat_id, then the same bytes the
  // file-mode feature section would hold (header.c perf_event__process_feature).
  ByteReader r(record);
  uint64_t feature;
  if (!r.Skip(format::kEventHeaderSize) || !r.Read(&feature)) {
    return Short("HEADER_FEATURE record");
  }
  if (feature >= 256) return absl::OkStatus();
  return ParseFeature(static_cast<int>(feature), r.rest(), info);
}

}  // namespace pageblame::perf
