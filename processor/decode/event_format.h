// One tracepoint's format, as tracefs prints it (events/SYSTEM/NAME/format)
// and perf stores it in the trace (TRACING_DATA): the event's name, its id
// (a tracepoint attr's config) and the layout of its payload.
//
//   ASSIGN_OR_RETURN(EventFormat ev, EventFormat::Parse(text, "syscalls"));
//   const FieldFormat* len = ev.FindField("len");  // offset 24, size 8
//
// The text is untrusted (it comes from the trace file), so it is parsed here,
// strictly, and nothing else parses it. Only the layout is taken:
//
//   name: sys_enter_mmap
//   ID: 174
//   format:
//   <TAB>field:unsigned short common_type;<TAB>offset:0;<TAB>size:2;<TAB>signed:0;
//   ...                                 (common fields, then one blank line)
//   <TAB>field:unsigned long addr;<TAB>offset:16;<TAB>size:8;<TAB>signed:0;
//   ...
//
//   print fmt: "addr: 0x%08lx, ...", ((unsigned long)(REC->addr)), ...
//
// `print fmt` (a C expression for the kernel's own text output) is never
// read: replay does not print events, and it is where libtraceevent, which
// used to parse these formats, crashed on a single changed byte (constant
// folding of "R/C->ret" divides by zero; issue 21). A field's name is the
// identifier that ends its declaration, before an array suffix ("unsigned long
// args[6]" is "args"; "__data_loc char[] filename" is "filename"), as
// libtraceevent names it; `signed:` is optional (older kernels). Errors say
// which line is wrong and why; an event with any malformed line is refused
// whole, since a half-read layout could name the wrong bytes.
#ifndef PAGEBLAME_DECODE_EVENT_FORMAT_H_
#define PAGEBLAME_DECODE_EVENT_FORMAT_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace pageblame::decode {

struct FieldFormat {
  std::string name;
  std::string type;  // the declaration without the name ("unsigned long", "char[]")
  int offset = 0;    // in the tracepoint payload (perf's PERF_SAMPLE_RAW bytes)
  int size = 0;
  bool is_signed = false;
  bool common = false;  // one of the common_* fields every event starts with
};

class EventFormat {
 public:
  // Bounds on a field: a payload is part of one perf record, at most 64 KiB.
  static constexpr int kMaxFieldEnd = 1 << 16;

  // Parses one format text; `system` (the tracepoint's group, e.g.
  // "syscalls") must be an identifier. DataLoss naming the line on any
  // malformed part.
  static absl::StatusOr<EventFormat> Parse(std::string_view text, std::string_view system);

  const std::string& system() const { return system_; }
  const std::string& name() const { return name_; }
  int id() const { return id_; }
  const std::vector<FieldFormat>& fields() const { return fields_; }

  // The non-common field called `name` (as libtraceevent's tep_find_field:
  // common_* fields are not searched), or nullptr.
  const FieldFormat* FindField(std::string_view name) const;

 private:
  std::string system_;
  std::string name_;
  int id_ = 0;
  std::vector<FieldFormat> fields_;
};

}  // namespace pageblame::decode

#endif  // PAGEBLAME_DECODE_EVENT_FORMAT_H_
