#include "processor/decode/tracing_data.h"

#include <traceevent/event-parse.h>

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "processor/base/byte_reader.h"
#include "processor/base/status_macros.h"

namespace pageblame::decode {
namespace {

absl::Status Truncated(const std::string& what) {
  return absl::DataLossError(
      absl::StrCat("TRACING_DATA feature is truncated or malformed (", what,
                   "); re-record the trace with a perf that writes tracepoint formats"));
}

// A section that is a u64 (or u32) size followed by that many bytes.
template <typename SizeT>
bool ReadSized(ByteReader& r, std::string_view* out) {
  SizeT size;
  absl::Span<const uint8_t> s;
  if (!r.Read(&size) || !r.ReadSpan(size, &s)) return false;
  *out = std::string_view(reinterpret_cast<const char*>(s.data()), s.size());
  return true;
}

}  // namespace

TracingData::TracingData() : tep_(tep_alloc()) {}
TracingData::~TracingData() { tep_free(tep_); }

absl::StatusOr<std::unique_ptr<TracingData>> TracingData::Parse(std::string_view bytes) {
  if (bytes.empty()) {
    return absl::NotFoundError(
        "the trace has no tracepoint formats (TRACING_DATA feature); record it with "
        "`perf record -e syscalls:...` or `perf trace record`");
  }
  std::unique_ptr<TracingData> td(new TracingData());
  if (td->tep_ == nullptr) return absl::ResourceExhaustedError("tep_alloc failed");
  ByteReader r(bytes.data(), bytes.size());

  static constexpr char kMagic[] = "\x17\x08\x44tracing";
  absl::Span<const uint8_t> magic;
  if (!r.ReadSpan(10, &magic) || std::memcmp(magic.data(), kMagic, 10) != 0) {
    return Truncated("bad magic");
  }
  std::string_view version;
  uint8_t bigendian, long_size;
  int32_t page_size;
  if (!r.ReadCString(&version) || !r.Read(&bigendian) || !r.Read(&long_size) ||
      !r.Read(&page_size)) {
    return Truncated("header");
  }
  // Payload numbers are in the recording machine's order; we only accept
  // native-endian files (the perf reader already checked), so this matches.
  tep_set_file_bigendian(td->tep_, bigendian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
  tep_set_local_bigendian(td->tep_, TEP_LITTLE_ENDIAN);
  tep_set_long_size(td->tep_, long_size);
  tep_set_page_size(td->tep_, page_size);
  td->long_size_ = long_size;

  // header_page / header_event: a fixed tag string, then a u64 size + data.
  for (std::string_view tag : {std::string_view("header_page"), std::string_view("header_event")}) {
    std::string_view got, data;
    if (!r.ReadCString(&got) || got != tag || !ReadSized<uint64_t>(r, &data)) {
      return Truncated(std::string(tag));
    }
    if (tag == "header_page") {
      tep_parse_header_page(td->tep_, const_cast<char*>(data.data()), data.size(), long_size);
    }
  }

  auto parse_format = [&](std::string_view fmt, const char* system) {
    if (tep_parse_event(td->tep_, fmt.data(), fmt.size(), system) == TEP_ERRNO__SUCCESS) {
      ++td->events_parsed_;
    } else {
      ++td->events_failed_;  // an event we likely don't need; counted, not fatal
    }
  };

  uint32_t ftrace_count;
  if (!r.Read(&ftrace_count)) return Truncated("ftrace format count");
  for (uint32_t i = 0; i < ftrace_count; ++i) {
    std::string_view fmt;
    if (!ReadSized<uint64_t>(r, &fmt)) return Truncated("ftrace format");
    parse_format(fmt, "ftrace");
  }
  uint32_t systems;
  if (!r.Read(&systems)) return Truncated("event system count");
  for (uint32_t s = 0; s < systems; ++s) {
    std::string_view system;
    uint32_t count;
    if (!r.ReadCString(&system) || !r.Read(&count)) return Truncated("event system");
    std::string system_name(system);
    for (uint32_t i = 0; i < count; ++i) {
      std::string_view fmt;
      if (!ReadSized<uint64_t>(r, &fmt)) return Truncated("format of " + std::string(system));
      parse_format(fmt, system_name.c_str());
    }
  }
  // kallsyms, printk formats and saved cmdlines follow; we need none of them.
  return td;
}

const tep_event* TracingData::FindEvent(int id) const { return tep_find_event(tep_, id); }

}  // namespace pageblame::decode
