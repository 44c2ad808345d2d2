// The TRACING_DATA feature of a perf.data file: the ftrace format files of the
// recorded tracepoints, so that we read tracepoint payloads with the layouts
// of the kernel that recorded them, not ours.
//
//   ASSIGN_OR_RETURN(auto td, TracingData::Parse(file_info.tracing_data));
//   const EventFormat* ev = td->FindEvent(attr.config);  // "syscalls", "sys_enter_mmap"
//   const FieldFormat* len = ev->FindField("len");
//
// Container layout mirrors tools/perf/util/trace-event-read.c
// (trace_report): magic "\x17\x08\x44tracing", version string, endianness,
// long size, page size, header_page, header_event, ftrace formats, then
// per-system event formats, kallsyms, printk formats. We only need the event
// formats (EventFormat, our own strict parser: the trace is untrusted input,
// see event_format.h); the rest is skipped with bounds checks. A malformed
// event format is counted, not fatal (the trace may not need that event);
// failures() says what was wrong with the first few.
#ifndef PAGEBLAME_DECODE_TRACING_DATA_H_
#define PAGEBLAME_DECODE_TRACING_DATA_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "processor/decode/event_format.h"

namespace pageblame::decode {

class TracingData {
 public:
  // At most this many reasons are kept in failures().
  static constexpr size_t kMaxFailures = 4;

  // Parses the raw feature bytes. Errors (DataLoss; NotFound when there are
  // none) name what was truncated or malformed in the container; a malformed
  // event format inside it is counted in events_failed() instead.
  static absl::StatusOr<std::unique_ptr<TracingData>> Parse(std::string_view bytes);

  // The event whose format id is `id` (a tracepoint attr's config), or null.
  // If two formats claim one id, the first is kept and the second counted as
  // failed.
  const EventFormat* FindEvent(int id) const;
  int long_size() const { return long_size_; }
  int events_parsed() const { return static_cast<int>(events_.size()); }
  int events_failed() const { return events_failed_; }
  // "syscalls format 3: format of sys_enter_mmap, line 5: bad size '8x'"
  // for the first kMaxFailures failed event formats.
  const std::vector<std::string>& failures() const { return failures_; }

 private:
  TracingData() = default;
  void AddFailure(std::string what);

  std::vector<EventFormat> events_;
  absl::flat_hash_map<int, size_t> by_id_;  // id -> index in events_
  int long_size_ = 8;
  int events_failed_ = 0;
  std::vector<std::string> failures_;
};

}  // namespace pageblame::decode

#endif  // PAGEBLAME_DECODE_TRACING_DATA_H_
