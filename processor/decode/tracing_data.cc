#include "processor/decode/tracing_data.h"

#include <cstring>
#include <string>
#include <utility>

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
  if (!r.Read(&size) || size > r.remaining() || !r.ReadSpan(size, &s)) return false;
  *out = std::string_view(reinterpret_cast<const char*>(s.data()), s.size());
  return true;
}

}  // namespace

void TracingData::AddFailure(std::string what) {
  ++events_failed_;
  if (failures_.size() < kMaxFailures) failures_.push_back(std::move(what));
}

absl::StatusOr<std::unique_ptr<TracingData>> TracingData::Parse(std::string_view bytes) {
  if (bytes.empty()) {
    return absl::NotFoundError(
        "the trace has no tracepoint formats (TRACING_DATA feature); record it with "
        "`perf record -e syscalls:...` or `perf trace record`");
  }
  std::unique_ptr<TracingData> td(new TracingData());
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
  // Payload numbers are in the recording machine's order; the perf reader
  // accepts native-endian (little-endian) files only.
  if (bigendian != 0) return Truncated("a big-endian machine's formats");
  if (long_size != 4 && long_size != 8) {
    return Truncated(absl::StrCat("long size ", long_size));
  }
  td->long_size_ = long_size;

  // header_page / header_event: a fixed tag string, then a u64 size + data
  // (the ring buffer's page and event headers: not needed for perf samples).
  for (std::string_view tag : {std::string_view("header_page"), std::string_view("header_event")}) {
    std::string_view got, data;
    if (!r.ReadCString(&got) || got != tag || !ReadSized<uint64_t>(r, &data)) {
      return Truncated(std::string(tag));
    }
  }

  // The ftrace formats (function, print, ...): skipped, replay reads none.
  uint32_t ftrace_count;
  if (!r.Read(&ftrace_count)) return Truncated("ftrace format count");
  for (uint32_t i = 0; i < ftrace_count; ++i) {
    std::string_view fmt;
    if (!ReadSized<uint64_t>(r, &fmt)) return Truncated("ftrace format");
  }
  uint32_t systems;
  if (!r.Read(&systems)) return Truncated("event system count");
  for (uint32_t s = 0; s < systems; ++s) {
    std::string_view system_view;
    uint32_t count;
    if (!r.ReadCString(&system_view) || !r.Read(&count)) return Truncated("event system");
    const std::string system(system_view);
    for (uint32_t i = 0; i < count; ++i) {
      std::string_view fmt;
      if (!ReadSized<uint64_t>(r, &fmt)) return Truncated(absl::StrCat("format of ", system));
      absl::StatusOr<EventFormat> ev = EventFormat::Parse(fmt, system);
      if (!ev.ok()) {
        td->AddFailure(absl::StrCat(system, " format ", i + 1, ": ", ev.status().message()));
        continue;
      }
      if (!td->by_id_.emplace(ev->id(), td->events_.size()).second) {
        td->AddFailure(absl::StrCat(system, " format ", i + 1, ": ", ev->name(), " has ID ",
                                    ev->id(), ", which an earlier format has"));
        continue;
      }
      td->events_.push_back(*std::move(ev));
    }
  }
  // kallsyms, printk formats and saved cmdlines follow; we need none of them.
  return td;
}

const EventFormat* TracingData::FindEvent(int id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &events_[it->second];
}

}  // namespace pageblame::decode
