#include "processor/decode/syscall_decoder.h"

#include <algorithm>

#include <cstdint>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "processor/decode/memory_event_kind.h"

namespace pageblame::decode {
namespace {

constexpr uint32_t kPerfTypeTracepoint = 2;

// Argument names of syscalls:sys_enter_X, in the syscall's own order
// (the SYSCALL_DEFINEn parameter names, as the format files spell them).
const std::vector<const char*>& ArgNames(Syscall sc) {
  static const std::vector<const char*> kNames[kSyscallCount] = {
      {"addr", "len", "prot", "flags", "fd", "off"},          // mmap
      {"addr", "len"},                                        // munmap
      {"brk"},                                                // brk
      {"addr", "old_len", "new_len", "flags", "new_addr"},    // mremap
      {"start", "len", "prot"},                               // mprotect
      {"start", "len", "prot", "pkey"},                       // pkey_mprotect
      {"start", "len_in", "behavior"},                        // madvise
  };
  return kNames[static_cast<int>(sc)];
}

// The tracepoint of an attr named "syscalls:sys_enter_mmap" (EVENT_DESC;
// perf may add "/call-graph=.../" terms) if it is one replay reads: a memory
// syscall's enter or exit, or raw_syscalls'. "" otherwise.
std::string ReplayedEvent(const std::string& attr_name) {
  absl::string_view name = attr_name;
  return MemoryEventKind::Of(name.substr(0, name.find('/'))).TracepointName();
}

}  // namespace

absl::StatusOr<SyscallDecoder> SyscallDecoder::Create(const perf::FileInfo& info,
                                                      const TracingData& td) {
  SyscallDecoder dec;
  dec.arch_ = info.arch;
  dec.attrs_base_ = info.attrs.empty() ? nullptr : &info.attrs[0];
  dec.decoders_.resize(info.attrs.size());
  std::optional<SyscallNumbers> numbers = RawSyscallNumbers(info.arch);
  if (numbers) dec.raw_nr_ = *numbers;

  // perf trace's globs can name one tracepoint twice ('syscalls:*_mprotect'
  // also matches sys_enter_pkey_mprotect): the same call then comes as two
  // samples of two attrs. Only the first attr of a tracepoint is decoded.
  absl::flat_hash_set<uint64_t> tracepoints;
  for (size_t i = 0; i < info.attrs.size(); ++i) {
    const perf::EventAttr& attr = info.attrs[i];
    if (attr.type != kPerfTypeTracepoint) continue;
    if (!tracepoints.insert(attr.config).second) continue;
    dec.AddTracepoint(i, attr, td, numbers.has_value());
  }
  dec.ChooseSources();
  return dec;
}

void SyscallDecoder::AddTracepoint(size_t i, const perf::EventAttr& attr, const TracingData& td,
                                   bool have_raw_numbers) {
  const EventFormat* ev =
      attr.config <= INT32_MAX ? td.FindEvent(static_cast<int>(attr.config)) : nullptr;
  if (ev == nullptr) {
    if (td.events_failed() > 0) NoteUnreadableFormat(attr, td);
    return;
  }
  if (NamesDisagree(attr, *ev)) return;
  AttrDecoder& d = decoders_[i];
  d.has_callchain = (attr.sample_type & perf::kSampleCallchain) != 0;
  const MemoryEventKind kind = MemoryEventKind::Of(ev->system(), ev->name());
  switch (kind.kind()) {
    case MemoryEventKind::Kind::kOther:
      return;
    case MemoryEventKind::Kind::kRawEnter:
    case MemoryEventKind::Kind::kRawExit:
      if (have_raw_numbers) AddRaw(*ev, kind, &d);
      return;
    case MemoryEventKind::Kind::kEnter:
      AddEnter(*ev, kind.syscall(), &d);
      return;
    case MemoryEventKind::Kind::kExit:
      AddExit(*ev, kind.syscall(), &d);
      return;
  }
}

void SyscallDecoder::NoteUnreadableFormat(const perf::EventAttr& attr, const TracingData& td) {
  // Its format may be one of those that could not be read.
  formats_failed_ = td.events_failed();
  if (format_failure_.empty() && !td.failures().empty()) format_failure_ = td.failures()[0];
  const std::string event = ReplayedEvent(attr.name);
  if (event.empty() || !unreadable_event_.empty()) return;
  unreadable_event_ = attr.name;
  // The failure that names it, if its name line could be read.
  for (const std::string& f : td.failures()) {
    if (absl::StrContains(f, absl::StrCat("format of ", event, ","))) unreadable_why_ = f;
  }
}

bool SyscallDecoder::NamesDisagree(const perf::EventAttr& attr, const EventFormat& ev) {
  // The attr's name (EVENT_DESC) and its format's must agree on whether
  // this is an event replay reads, and which: one of them is damaged
  // otherwise, and the calls would be silently lost or misread.
  if (!absl::StrContains(attr.name, ':') || !unreadable_event_.empty()) return false;
  const std::string& system = ev.system();
  const std::string& name = ev.name();
  const std::string by_attr = ReplayedEvent(attr.name);
  const std::string by_format = ReplayedEvent(absl::StrCat(system, ":", name));
  if (by_attr == by_format) return false;
  unreadable_event_ = by_attr.empty() ? absl::StrCat(system, ":", name) : attr.name;
  unreadable_why_ = absl::StrCat("the attr named ", attr.name, " has config ", attr.config,
                                 ", the ID of the format of ", system, ":", name);
  return true;
}

SyscallDecoder::Field SyscallDecoder::FieldOf(const EventFormat& ev, const char* name) {
  Field f;
  if (const FieldFormat* ff = ev.FindField(name)) {
    f.offset = ff->offset;
    f.size = ff->size;
    f.is_signed = ff->is_signed;
  }
  return f;
}

void SyscallDecoder::NoteMissingField(const EventFormat& ev, std::optional<Syscall> sc,
                                      const std::string& what) {
  missing_fields_.push_back(
      {sc, absl::StrCat("the format of ", ev.system(), ":", ev.name(), " has ", what)});
}

void SyscallDecoder::AddRaw(const EventFormat& ev, MemoryEventKind kind, AttrDecoder* d) {
  d->nr = FieldOf(ev, "id");
  const bool enter = kind.kind() == MemoryEventKind::Kind::kRawEnter;
  d->kind = enter ? Kind::kRawEnter : Kind::kRawExit;
  if (enter) {
    d->args[0] = FieldOf(ev, "args");
  } else {
    d->ret = FieldOf(ev, "ret");
  }
  const Field& value = enter ? d->args[0] : d->ret;
  if (!d->nr.valid() || !value.valid()) {
    NoteMissingField(ev, std::nullopt,
                     absl::StrCat("no field `", d->nr.valid() ? (enter ? "args" : "ret") : "id", "`"));
    d->kind = Kind::kIgnore;
  } else if (enter && value.size < 48) {
    NoteMissingField(ev, std::nullopt, absl::StrCat("only ", value.size, " bytes of `args` (6 values need 48)"));
    d->kind = Kind::kIgnore;
  }
  if (d->kind == Kind::kRawEnter) has_raw_enter_ = true;
  if (d->kind == Kind::kRawExit) has_raw_exit_ = true;
}

void SyscallDecoder::AddEnter(const EventFormat& ev, Syscall sc, AttrDecoder* d) {
  d->kind = Kind::kEnter;
  d->syscall = sc;
  const auto& names = ArgNames(sc);
  for (size_t a = 0; a < names.size(); ++a) {
    d->args[a] = FieldOf(ev, names[a]);
    if (!d->args[a].valid() && d->kind != Kind::kIgnore) {  // unknown layout: don't guess
      NoteMissingField(ev, sc, absl::StrCat("no field `", names[a], "`"));
      d->kind = Kind::kIgnore;
    }
  }
  d->contiguous_args = static_cast<int>(names.size());
  for (size_t a = 0; a < names.size(); ++a) {
    if (d->args[a].size != 8 || d->args[a].offset != d->args[0].offset + 8 * static_cast<int>(a)) {
      d->contiguous_args = 0;
    }
  }
  if (d->kind == Kind::kEnter) has_enter_[static_cast<int>(sc)] = true;
}

void SyscallDecoder::AddExit(const EventFormat& ev, Syscall sc, AttrDecoder* d) {
  d->kind = Kind::kExit;
  d->syscall = sc;
  d->ret = FieldOf(ev, "ret");
  if (!d->ret.valid()) {
    NoteMissingField(ev, sc, "no field `ret`");
    d->kind = Kind::kIgnore;
  }
  if (d->kind == Kind::kExit) has_exit_[static_cast<int>(sc)] = true;
}

void SyscallDecoder::ChooseSources() {
  for (int s = 0; s < kSyscallCount; ++s) {
    if (has_enter_[s] && has_exit_[s]) {
      source_[s] = kSpecific;
    } else if (has_raw_enter_ && has_raw_exit_) {
      source_[s] = kRaw;
    } else {
      source_[s] = kNone;
    }
  }
  for (Source s : source_) uses_raw_ |= (s == kRaw);
  // Events of a syscall whose source is the other kind are dropped in Decode.
  for (AttrDecoder& d : decoders_) {
    if ((d.kind == Kind::kEnter || d.kind == Kind::kExit) &&
        source_[static_cast<int>(d.syscall)] != kSpecific) {
      d.kind = Kind::kIgnore;
    }
    // Only the enters need a chain: the loader takes a call's stack from its
    // enter. The recommended DWARF form records the exits with call-graph=no.
    if ((d.kind == Kind::kEnter || (d.kind == Kind::kRawEnter && uses_raw_)) && !d.has_callchain) {
      missing_callchain_ = true;
    }
  }
}

bool SyscallDecoder::ReadField(const Field& f, const perf::Sample& s, uint64_t* out) {
  if (f.offset < 0 || static_cast<size_t>(f.offset) + f.size > s.raw.size()) return false;
  const uint8_t* p = s.raw.data() + f.offset;
  switch (f.size) {
    case 8: { uint64_t v; std::memcpy(&v, p, 8); *out = v; return true; }
    case 4: {
      uint32_t v; std::memcpy(&v, p, 4);
      *out = f.is_signed ? static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v))) : v;
      return true;
    }
    case 2: { uint16_t v; std::memcpy(&v, p, 2); *out = v; return true; }
    case 1: *out = *p; return true;
    default: return false;
  }
}

bool SyscallDecoder::Decode(const perf::Sample& s, DecodedSyscall* out) const {
  out->malformed = false;
  if (s.attr == nullptr || attrs_base_ == nullptr) return false;
  size_t idx = static_cast<size_t>(s.attr - attrs_base_);
  if (idx >= decoders_.size()) return false;
  const AttrDecoder& d = decoders_[idx];
  switch (d.kind) {
    case Kind::kIgnore:
      return false;
    case Kind::kRawEnter:
    case Kind::kRawExit: {
      // Cheap first: most raw events are other syscalls and are dropped by
      // number before anything else is read.
      uint64_t nr;
      if (!ReadField(d.nr, s, &nr)) return out->malformed = true, false;
      const std::optional<Syscall> which = SyscallOfNumber(raw_nr_, static_cast<int64_t>(nr));
      if (!which) return false;
      const int sc = static_cast<int>(*which);
      if (source_[sc] == kNone) return false;
      out->syscall = *which;
      out->raw_duplicate = source_[sc] != kRaw;
      if (out->raw_duplicate) {
        out->phase = d.kind == Kind::kRawEnter ? DecodedSyscall::Phase::kEnter
                                               : DecodedSyscall::Phase::kExit;
        return true;
      }
      if (d.kind == Kind::kRawEnter) {
        out->phase = DecodedSyscall::Phase::kEnter;
        const Field& a = d.args[0];
        if (static_cast<size_t>(a.offset) + 48 > s.raw.size()) return out->malformed = true, false;
        std::memcpy(out->args, s.raw.data() + a.offset, 48);
      } else {
        out->phase = DecodedSyscall::Phase::kExit;
        uint64_t ret;
        if (!ReadField(d.ret, s, &ret)) return out->malformed = true, false;
        out->ret = static_cast<int64_t>(ret);
      }
      return true;
    }
    case Kind::kEnter: {
      out->raw_duplicate = false;
      out->phase = DecodedSyscall::Phase::kEnter;
      out->syscall = d.syscall;
      if (const int n = d.contiguous_args; n > 0) {
        const size_t at = static_cast<size_t>(d.args[0].offset);
        if (at + 8 * static_cast<size_t>(n) > s.raw.size()) return out->malformed = true, false;
        std::memcpy(out->args, s.raw.data() + at, 8 * static_cast<size_t>(n));
        for (int a = n; a < 6; ++a) out->args[a] = 0;
        return true;
      }
      for (int a = 0; a < 6; ++a) {
        out->args[a] = 0;
        if (d.args[a].valid() && !ReadField(d.args[a], s, &out->args[a])) {
          return out->malformed = true, false;
        }
      }
      return true;
    }
    case Kind::kExit: {
      out->raw_duplicate = false;
      out->phase = DecodedSyscall::Phase::kExit;
      out->syscall = d.syscall;
      uint64_t ret;
      if (!ReadField(d.ret, s, &ret)) return out->malformed = true, false;
      out->ret = static_cast<int64_t>(ret);
      return true;
    }
  }
  return false;
}

absl::Status SyscallDecoder::NoSyscallEvents() {
  return absl::FailedPreconditionError(
      absl::StrCat("the trace has no memory syscall events (mmap, munmap, brk, mremap, mprotect, pkey_mprotect, madvise); ", kHowToRecord));
}

absl::Status SyscallDecoder::CheckUsable() const {
  if (!unreadable_event_.empty()) {
    return absl::DataLossError(absl::StrCat(
        "the format of ", unreadable_event_,
        " stored in the trace (TRACING_DATA) is malformed, so its calls cannot be replayed (",
        unreadable_why_.empty() ? format_failure_ : unreadable_why_, ")"));
  }
  bool any = false;
  for (Source s : source_) any |= (s != kNone);
  if (!any && !missing_fields_.empty()) {
    // Recorded, but not in a layout replay can read: say which, not "record them".
    return absl::DataLossError(absl::StrCat("the trace's memory syscall events cannot be read: ",
                                            missing_fields_.front().why,
                                            " (TRACING_DATA), so its calls cannot be replayed"));
  }
  if (!any && formats_failed_ > 0) {
    // Not a recording problem: the trace is damaged.
    return absl::DataLossError(absl::StrCat(
        "the trace has no usable memory syscall events: ", formats_failed_,
        " of its tracepoint formats (TRACING_DATA) are malformed (first: ", format_failure_, ")"));
  }
  if (!any) {
    bool half = has_raw_enter_ || has_raw_exit_;
    for (int s = 0; s < kSyscallCount; ++s) half |= has_enter_[s] || has_exit_[s];
    return absl::FailedPreconditionError(absl::StrCat(
        half ? "the trace has only the enter or only the exit events of the memory syscalls "
               "(both are needed: the arguments come with the enter, the result with the exit); "
             : "the trace has no memory syscall events (mmap, munmap, brk, mremap, mprotect, pkey_mprotect, madvise); ",
        kHowToRecord));
  }
  if (missing_callchain_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the trace's syscall events have no call chains (recorded without -g/--call-graph); ",
        kHowToRecord));
  }
  return absl::OkStatus();
}

std::vector<std::string> SyscallDecoder::FormatWarnings() const {
  std::vector<std::string> out;
  for (const MissingField& m : missing_fields_) {
    if (m.syscall) {
      if (source_[static_cast<int>(*m.syscall)] != kNone) continue;  // replayed from raw_syscalls
      out.push_back(absl::StrCat(m.why, ": ", std::string(SyscallName(*m.syscall)), " calls are not replayed"));
    } else if (std::find(source_.begin(), source_.end(), kNone) != source_.end()) {
      out.push_back(absl::StrCat(m.why, ": calls with no syscalls:* events of their own are not replayed"));
    }
  }
  return out;
}

std::string SyscallDecoder::DescribeSources() const {
  std::vector<std::string> parts;
  for (int s = 0; s < kSyscallCount; ++s) {
    std::string name(SyscallName(static_cast<Syscall>(s)));
    switch (source_[s]) {
      case kSpecific:
        parts.push_back(absl::StrCat(name, ": syscalls:sys_{enter,exit}_", name));
        break;
      case kRaw:
        parts.push_back(absl::StrCat(name, ": raw_syscalls (nr ", raw_nr_[s], ")"));
        break;
      case kNone:
        parts.push_back(absl::StrCat(name, ": not recorded"));
        break;
    }
  }
  return absl::StrJoin(parts, "; ");
}

bool SyscallDecoder::uses_raw_syscalls() const { return uses_raw_; }

}  // namespace pageblame::decode
