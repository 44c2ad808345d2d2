// Turns tracepoint samples into DecodedSyscall, using field offsets from the
// trace's own formats (TracingData). Built once per file; Decode() is on the
// hot path and does no lookups by name and no allocation.
//
//   ASSIGN_OR_RETURN(SyscallDecoder dec, SyscallDecoder::Create(info, *tracing_data));
//   RETURN_IF_ERROR(dec.CheckUsable());
//   DecodedSyscall d;
//   if (dec.Decode(sample, &d)) ...   // false: not a memory syscall we replay
//
// Sources: for each syscall, if the trace has both syscalls:sys_enter_X and
// syscalls:sys_exit_X, those are used and the raw_syscalls duplicates of the same
// call (which `perf trace record` writes for every syscall) are dropped, so a
// call counts once. Otherwise raw_syscalls:sys_enter/sys_exit are used,
// matched by syscall number (table per architecture).
#ifndef PAGEBLAME_DECODE_SYSCALL_DECODER_H_
#define PAGEBLAME_DECODE_SYSCALL_DECODER_H_

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "processor/decode/syscall_event.h"
#include "processor/decode/tracing_data.h"
#include "processor/perf/perf_records.h"

namespace pageblame::decode {

class SyscallDecoder {
 public:
  // What to record instead, for error messages about unusable traces.
  static constexpr char kHowToRecord[] =
      "record with: perf trace record --call-graph fp -e "
      "'syscalls:*_mmap,syscalls:*_munmap,syscalls:*_brk,syscalls:*_mremap' -p PID "
      "(or: perf record -g -e syscalls:sys_enter_mmap,syscalls:sys_exit_mmap,... -p PID)";
  static absl::Status NoSyscallEvents();

  static absl::StatusOr<SyscallDecoder> Create(const perf::FileInfo& info, const TracingData& td);

  bool Decode(const perf::Sample& sample, DecodedSyscall* out) const;

  // False if no sample of `attr` can decode to anything replay uses, so the
  // loader can skip it before parsing: events of other syscalls, and the
  // raw_syscalls duplicates of calls that syscalls:* events already describe
  // (unless `raw_duplicates`: the dlfilter plugin wants their times to know which of
  // perf's samples belong to a call). This is what makes a trace of mostly
  // raw_syscalls duplicates cost half as much to load.
  bool Wanted(const perf::EventAttr* attr, bool raw_duplicates) const {
    if (attr == nullptr || attrs_base_ == nullptr) return false;
    const size_t idx = static_cast<size_t>(attr - attrs_base_);
    if (idx >= decoders_.size()) return false;
    switch (decoders_[idx].kind) {
      case Kind::kIgnore:
        return false;
      case Kind::kRawEnter:
      case Kind::kRawExit:
        return raw_duplicates || uses_raw_;
      case Kind::kEnter:
      case Kind::kExit:
        return true;
    }
    return false;
  }

  // An error that says what to record instead, if the trace cannot be
  // replayed: no memory syscall events, only enters or only exits, or no
  // call chains on the enters (exits need none). FailedPrecondition; but
  // DataLoss, saying what is wrong, when the format of an event replay reads
  // is malformed, or the trace has no usable events and some formats are.
  absl::Status CheckUsable() const;

  // "mmap: syscalls:sys_{enter,exit}_mmap; brk: raw_syscalls (nr 12); ..."
  std::string DescribeSources() const;
  // For a usable trace: each event whose format lacks a field replay needs,
  // when that leaves calls unreplayed ("the format of syscalls:sys_enter_mprotect
  // has no field `prot`: mprotect calls are not replayed").
  std::vector<std::string> FormatWarnings() const;
  bool uses_raw_syscalls() const;

 private:
  struct Field {
    int offset = -1;
    int size = 0;
    bool is_signed = false;
    bool valid() const { return offset >= 0; }
  };
  enum class Kind : uint8_t { kIgnore, kRawEnter, kRawExit, kEnter, kExit };
  struct AttrDecoder {
    Kind kind = Kind::kIgnore;
    Syscall syscall = Syscall::kMmap;  // kEnter/kExit only
    bool has_callchain = false;
    Field nr;                  // raw: "id"
    Field args[6];             // kEnter: per-arg fields; kRawEnter: args[0] = "args" array
    Field ret;                 // exits
    // kEnter: the syscall's args are this many 8-byte fields one after the
    // other from args[0] (and there are no others), as the kernel lays out
    // syscalls:sys_enter_* of these calls: Decode copies them in one go.
    // 0: read field by field.
    int contiguous_args = 0;
  };
  enum Source : uint8_t { kNone, kSpecific, kRaw };

  static bool ReadField(const Field& f, const perf::Sample& s, uint64_t* out);

  // Create's steps. AddTracepoint: the first attr (FileInfo::attrs[i]) of a
  // tracepoint; the rest fill decoders_[i] or note why they cannot.
  void AddTracepoint(size_t i, const perf::EventAttr& attr, const TracingData& td,
                     bool have_raw_numbers);
  // The attr's format is missing from TRACING_DATA, some formats failed.
  void NoteUnreadableFormat(const perf::EventAttr& attr, const TracingData& td);
  // True (and the event noted unreadable) if attr's name and its format's
  // name disagree on which event replay reads this is.
  bool NamesDisagree(const perf::EventAttr& attr, const EventFormat& ev);
  static Field FieldOf(const EventFormat& ev, const char* name);  // invalid if absent
  void AddRaw(const EventFormat& ev, MemoryEventKind kind, AttrDecoder* d);
  void AddEnter(const EventFormat& ev, Syscall sc, AttrDecoder* d);
  void AddExit(const EventFormat& ev, Syscall sc, AttrDecoder* d);
  // After every attr: each syscall's source_, and what that leaves unused.
  void ChooseSources();
  // An event replay reads whose format lacks `what` ("no field `prot`"):
  // its samples are not read. `sc`: its syscall, none for raw_syscalls.
  void NoteMissingField(const EventFormat& ev, std::optional<Syscall> sc, const std::string& what);

  const perf::EventAttr* attrs_base_ = nullptr;
  std::vector<AttrDecoder> decoders_;  // indexed like FileInfo::attrs
  std::array<Source, kSyscallCount> source_{};
  std::array<int64_t, kSyscallCount> raw_nr_{};  // syscall numbers on this arch
  std::string arch_;
  bool missing_callchain_ = false;
  bool has_raw_enter_ = false, has_raw_exit_ = false;
  bool uses_raw_ = false;  // some syscall is replayed from raw_syscalls
  std::array<bool, kSyscallCount> has_enter_{}, has_exit_{};
  // Set when a tracepoint of the trace has no readable format: how many
  // formats failed and why (TracingData::failures), for CheckUsable.
  int formats_failed_ = 0;
  std::string format_failure_;
  // The first attr of an event replay reads ("syscalls:sys_enter_mmap")
  // whose format is one of those, and the failure that names it.
  std::string unreadable_event_, unreadable_why_;
  // Events whose format lacks a field replay needs (NoteMissingField).
  struct MissingField {
    std::optional<Syscall> syscall;  // none: a raw_syscalls event
    std::string why;                 // "the format of X has no field `y`"
  };
  std::vector<MissingField> missing_fields_;
};

}  // namespace pageblame::decode

#endif  // PAGEBLAME_DECODE_SYSCALL_DECODER_H_
