#include "tests/trace_patcher.h"

#include <cstring>
#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "processor/base/status_macros.h"
#include "processor/decode/tracing_data.h"
#include "processor/perf/perf_reader.h"

namespace pageblame::testing {

absl::StatusOr<TracePatcher> TracePatcher::Open(const std::string& path) {
  TracePatcher t;
  t.path_ = path;
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(path);
  t.bytes_.assign(std::istreambuf_iterator<char>(in), {});
  return t;
}

absl::StatusOr<std::vector<uint64_t>> TracePatcher::FieldOffsets(const std::string& event,
                                                                 const std::string& field) const {
  ASSIGN_OR_RETURN(std::unique_ptr<perf::PerfReader> reader, perf::PerfReader::Open(path_));
  ASSIGN_OR_RETURN(std::unique_ptr<decode::TracingData> td,
                   decode::TracingData::Parse(reader->info().tracing_data));
  std::vector<uint64_t> out;
  perf::RawRecord rec;
  perf::Sample s;
  while (true) {
    ASSIGN_OR_RETURN(bool more, reader->Next(&rec));
    if (!more) break;
    if (rec.type != perf::kRecordSample || !reader->ParseSample(rec, &s).ok()) continue;
    if (s.attr->name.substr(0, s.attr->name.find('/')) != event) continue;
    const decode::EventFormat* ev = td->FindEvent(static_cast<int>(s.attr->config));
    const decode::FieldFormat* f = ev ? ev->FindField(field) : nullptr;
    if (f == nullptr) return absl::NotFoundError(absl::StrCat(event, " has no field ", field));
    out.push_back(rec.offset + static_cast<uint64_t>(s.raw.data() - rec.bytes.data()) + f->offset);
  }
  return out;
}

absl::StatusOr<std::vector<uint64_t>> TracePatcher::RecordOffsets(uint32_t type) const {
  ASSIGN_OR_RETURN(std::unique_ptr<perf::PerfReader> reader, perf::PerfReader::Open(path_));
  std::vector<uint64_t> out;
  perf::RawRecord rec;
  while (true) {
    ASSIGN_OR_RETURN(bool more, reader->Next(&rec));
    if (!more) break;
    if (rec.type == type) out.push_back(rec.offset);
  }
  return out;
}

uint64_t TracePatcher::FirstSampleTypeOffset() const {
  // perf_file_header: magic, size, attr_size, then the attrs section's
  // offset; perf_event_attr: type, size, config, sample_period, sample_type.
  uint64_t attrs;
  std::memcpy(&attrs, bytes_.data() + 24, 8);
  return attrs + 24;
}

uint64_t TracePatcher::Read(uint64_t offset) const {
  uint64_t v;
  std::memcpy(&v, bytes_.data() + offset, 8);
  return v;
}

void TracePatcher::Write(uint64_t offset, uint64_t value) {
  std::memcpy(bytes_.data() + offset, &value, 8);
}

void TracePatcher::Overwrite(uint64_t offset, const std::string& bytes) {
  bytes_.replace(offset, bytes.size(), bytes);
}

absl::Status TracePatcher::Save(const std::string& path) const {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes_.data(), static_cast<std::streamsize>(bytes_.size()));
  return out ? absl::OkStatus() : absl::UnavailableError(absl::StrCat("cannot write ", path));
}

}  // namespace pageblame::testing
