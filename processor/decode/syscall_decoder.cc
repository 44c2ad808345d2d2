#include "processor/decode/syscall_decoder.h"

#include <traceevent/event-parse.h>

#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

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
  };
  return kNames[static_cast<int>(sc)];
}

}  // namespace

std::optional<SyscallNumbers> RawSyscallNumbers(const std::string& arch) {
  if (arch.empty() || arch == "x86_64") return SyscallNumbers{9, 11, 12, 25};
  if (arch == "aarch64" || arch == "arm64" || arch.rfind("riscv64", 0) == 0) {
    return SyscallNumbers{222, 215, 214, 216};
  }
  return std::nullopt;
}

std::string_view SyscallName(Syscall sc) {
  switch (sc) {
    case Syscall::kMmap: return "mmap";
    case Syscall::kMunmap: return "munmap";
    case Syscall::kBrk: return "brk";
    case Syscall::kMremap: return "mremap";
    case Syscall::kCount: break;
  }
  return "?";
}

absl::StatusOr<SyscallDecoder> SyscallDecoder::Create(const perf::FileInfo& info,
                                                      const TracingData& td) {
  SyscallDecoder dec;
  dec.arch_ = info.arch;
  dec.attrs_base_ = info.attrs.empty() ? nullptr : &info.attrs[0];
  dec.decoders_.resize(info.attrs.size());
  std::optional<SyscallNumbers> numbers = RawSyscallNumbers(info.arch);
  bool have_raw_numbers = numbers.has_value();
  if (numbers) dec.raw_nr_ = *numbers;

  auto field = [](const tep_event* ev, const char* name) {
    Field f;
    tep_format_field* tf = tep_find_field(const_cast<tep_event*>(ev), name);
    if (tf != nullptr) {
      f.offset = tf->offset;
      f.size = tf->size;
      f.is_signed = (tf->flags & TEP_FIELD_IS_SIGNED) != 0;
    }
    return f;
  };

  for (size_t i = 0; i < info.attrs.size(); ++i) {
    const perf::EventAttr& attr = info.attrs[i];
    if (attr.type != kPerfTypeTracepoint) continue;
    const tep_event* ev = td.FindEvent(static_cast<int>(attr.config));
    if (ev == nullptr || ev->system == nullptr || ev->name == nullptr) continue;
    std::string system = ev->system, name = ev->name;
    AttrDecoder& d = dec.decoders_[i];
    d.has_callchain = (attr.sample_type & perf::kSampleCallchain) != 0;
    if (system == "raw_syscalls") {
      if (!have_raw_numbers) continue;
      if (name == "sys_enter") {
        d.kind = Kind::kRawEnter;
        d.nr = field(ev, "id");
        d.args[0] = field(ev, "args");
        if (!d.nr.valid() || !d.args[0].valid() || d.args[0].size < 48) d.kind = Kind::kIgnore;
      } else if (name == "sys_exit") {
        d.kind = Kind::kRawExit;
        d.nr = field(ev, "id");
        d.ret = field(ev, "ret");
        if (!d.nr.valid() || !d.ret.valid()) d.kind = Kind::kIgnore;
      }
      if (d.kind == Kind::kRawEnter) dec.has_raw_enter_ = true;
      if (d.kind == Kind::kRawExit) dec.has_raw_exit_ = true;
      continue;
    }
    if (system != "syscalls") continue;
    for (int s = 0; s < kSyscallCount; ++s) {
      Syscall sc = static_cast<Syscall>(s);
      std::string scname(SyscallName(sc));
      if (name == absl::StrCat("sys_enter_", scname)) {
        d.kind = Kind::kEnter;
        d.syscall = sc;
        const auto& names = ArgNames(sc);
        for (size_t a = 0; a < names.size(); ++a) {
          d.args[a] = field(ev, names[a]);
          if (!d.args[a].valid()) d.kind = Kind::kIgnore;  // unknown layout: don't guess
        }
        d.contiguous_args = static_cast<int>(names.size());
        for (size_t a = 0; a < names.size(); ++a) {
          if (d.args[a].size != 8 || d.args[a].offset != d.args[0].offset + 8 * static_cast<int>(a)) {
            d.contiguous_args = 0;
          }
        }
        if (d.kind == Kind::kEnter) dec.has_enter_[s] = true;
      } else if (name == absl::StrCat("sys_exit_", scname)) {
        d.kind = Kind::kExit;
        d.syscall = sc;
        d.ret = field(ev, "ret");
        if (!d.ret.valid()) d.kind = Kind::kIgnore;
        if (d.kind == Kind::kExit) dec.has_exit_[s] = true;
      }
    }
  }

  for (int s = 0; s < kSyscallCount; ++s) {
    if (dec.has_enter_[s] && dec.has_exit_[s]) {
      dec.source_[s] = kSpecific;
    } else if (dec.has_raw_enter_ && dec.has_raw_exit_) {
      dec.source_[s] = kRaw;
    } else {
      dec.source_[s] = kNone;
    }
  }
  for (Source s : dec.source_) dec.uses_raw_ |= (s == kRaw);
  // Events of a syscall whose source is the other kind are dropped in Decode.
  for (AttrDecoder& d : dec.decoders_) {
    if ((d.kind == Kind::kEnter || d.kind == Kind::kExit) &&
        dec.source_[static_cast<int>(d.syscall)] != kSpecific) {
      d.kind = Kind::kIgnore;
    }
    // Only an enter's chain is kept (the call's stack); exits may come
    // without one, as in the design's --call-graph dwarf recording
    // (`syscalls:sys_exit_X/call-graph=no/`).
    if ((d.kind == Kind::kEnter || d.kind == Kind::kRawEnter) && !d.has_callchain) {
      dec.missing_callchain_ = true;
    }
  }
  return dec;
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
      if (!ReadField(d.nr, s, &nr)) return false;
      int sc = -1;
      for (int i = 0; i < kSyscallCount; ++i) {
        if (static_cast<int64_t>(nr) == raw_nr_[i]) sc = i;
      }
      if (sc < 0 || source_[sc] == kNone) return false;
      out->syscall = static_cast<Syscall>(sc);
      out->twin = source_[sc] != kRaw;
      if (out->twin) {
        out->phase = d.kind == Kind::kRawEnter ? DecodedSyscall::Phase::kEnter
                                               : DecodedSyscall::Phase::kExit;
        return true;
      }
      if (d.kind == Kind::kRawEnter) {
        out->phase = DecodedSyscall::Phase::kEnter;
        const Field& a = d.args[0];
        if (static_cast<size_t>(a.offset) + 48 > s.raw.size()) return false;
        std::memcpy(out->args, s.raw.data() + a.offset, 48);
      } else {
        out->phase = DecodedSyscall::Phase::kExit;
        uint64_t ret;
        if (!ReadField(d.ret, s, &ret)) return false;
        out->ret = static_cast<int64_t>(ret);
      }
      return true;
    }
    case Kind::kEnter: {
      out->twin = false;
      out->phase = DecodedSyscall::Phase::kEnter;
      out->syscall = d.syscall;
      if (const int n = d.contiguous_args; n > 0) {
        const size_t at = static_cast<size_t>(d.args[0].offset);
        if (at + 8 * static_cast<size_t>(n) > s.raw.size()) return false;
        std::memcpy(out->args, s.raw.data() + at, 8 * static_cast<size_t>(n));
        for (int a = n; a < 6; ++a) out->args[a] = 0;
        return true;
      }
      for (int a = 0; a < 6; ++a) {
        out->args[a] = 0;
        if (d.args[a].valid() && !ReadField(d.args[a], s, &out->args[a])) return false;
      }
      return true;
    }
    case Kind::kExit: {
      out->twin = false;
      out->phase = DecodedSyscall::Phase::kExit;
      out->syscall = d.syscall;
      uint64_t ret;
      if (!ReadField(d.ret, s, &ret)) return false;
      out->ret = static_cast<int64_t>(ret);
      return true;
    }
  }
  return false;
}

absl::Status SyscallDecoder::NoSyscallEvents() {
  return absl::FailedPreconditionError(
      absl::StrCat("the trace has no mmap/munmap/brk/mremap syscall events; ", kHowToRecord));
}

absl::Status SyscallDecoder::CheckUsable() const {
  bool any = false;
  for (Source s : source_) any |= (s != kNone);
  if (!any) {
    bool half = has_raw_enter_ || has_raw_exit_;
    for (int s = 0; s < kSyscallCount; ++s) half |= has_enter_[s] || has_exit_[s];
    return absl::FailedPreconditionError(absl::StrCat(
        half ? "the trace has only the enter or only the exit events of the memory syscalls "
               "(both are needed: the arguments come with the enter, the result with the exit); "
             : "the trace has no mmap/munmap/brk/mremap syscall events; ",
        kHowToRecord));
  }
  if (missing_callchain_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the trace's syscall events have no call chains (recorded without -g/--call-graph); ",
        kHowToRecord));
  }
  return absl::OkStatus();
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
