// The TRACING_DATA feature of a perf.data file: the ftrace format files of the
// recorded tracepoints, parsed with libtraceevent so that we read tracepoint
// payloads with the layouts of the kernel that recorded them, not ours.
//
//   ASSIGN_OR_RETURN(auto td, TracingData::Parse(file_info.tracing_data));
//   const tep_event* ev = td->FindEvent(attr.config);   // "syscalls", "sys_enter_mmap"
//
// Container layout mirrors tools/perf/util/trace-event-read.c
// (trace_report): magic "\x17\x08\x44tracing", version string, endianness,
// long size, page size, header_page, header_event, ftrace formats, then
// per-system event formats, kallsyms, printk formats. We only need the event
// formats; the rest is skipped with bounds checks.
#ifndef PAGEBLAME_DECODE_TRACING_DATA_H_
#define PAGEBLAME_DECODE_TRACING_DATA_H_

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"

struct tep_handle;
struct tep_event;

namespace pageblame::decode {

class TracingData {
 public:
  ~TracingData();
  TracingData(const TracingData&) = delete;
  TracingData& operator=(const TracingData&) = delete;

  // Parses the raw feature bytes. Errors name what was truncated or malformed.
  static absl::StatusOr<std::unique_ptr<TracingData>> Parse(std::string_view bytes);

  // The event whose format id is `id` (a tracepoint attr's config), or null.
  const tep_event* FindEvent(int id) const;
  int long_size() const { return long_size_; }
  int events_parsed() const { return events_parsed_; }
  int events_failed() const { return events_failed_; }

 private:
  TracingData();
  tep_handle* tep_;
  int long_size_ = 8;
  int events_parsed_ = 0;
  int events_failed_ = 0;
};

}  // namespace pageblame::decode

#endif  // PAGEBLAME_DECODE_TRACING_DATA_H_
