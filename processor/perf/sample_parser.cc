#include "processor/perf/sample_parser.h"

#include <cstring>

#include "absl/numeric/bits.h"

#include "absl/strings/str_cat.h"
#include "processor/base/byte_reader.h"
#include "processor/perf/perf_format.h"

namespace pageblame::perf {

namespace {

absl::Status Short(const char* field, size_t pos) {
  return absl::DataLossError(
      absl::StrCat("sample too short for its ", field, " (at body byte ", pos, ")"));
}

// The PERF_SAMPLE_READ block (perf_output_read_one/_group):
// non-group: value, [enabled], [running], [id], [lost];
// group: nr, [enabled], [running], nr * {value, [id], [lost]}.
// Bytes of [enabled], [running]; of one value with its [id], [lost].
size_t ReadTimesBytes(uint64_t read_format) {
  return ((read_format & format::kFormatTotalTimeEnabled) ? 8 : 0) +
         ((read_format & format::kFormatTotalTimeRunning) ? 8 : 0);
}
size_t ReadValueBytes(uint64_t read_format) {
  return 8 + ((read_format & format::kFormatId) ? 8 : 0) +
         ((read_format & format::kFormatLost) ? 8 : 0);
}

bool SkipRead(uint64_t read_format, ByteReader* r) {
  const size_t times = ReadTimesBytes(read_format);
  const size_t per_value = ReadValueBytes(read_format);
  if (!(read_format & format::kFormatGroup)) return r->Skip(times + per_value);
  uint64_t nr;
  if (!r->Read(&nr) || !r->Skip(times)) return false;
  if (nr > r->remaining() / per_value) return false;
  return r->Skip(nr * per_value);
}

// The fields after RAW that --call-graph dwarf adds (perf_output_sample:
// BRANCH_STACK, REGS_USER, STACK_USER), as perf's evsel__parse_sample reads
// them. Never an error: the sample stays good for replay, and what was wrong
// is left in out->user_copy_error for the unwinder to count.
void ParseUserTail(const EventAttr& attr, ByteReader* r, Sample* out) {
  const uint64_t st = attr.sample_type;
  if (st & kSampleBranchStack) {
    // u64 nr, [u64 hw_idx], nr * {from, to, flags}.
    uint64_t nr;
    const size_t extra = (attr.branch_sample_type & kBranchHwIndex) ? 8 : 0;
    if (!r->Read(&nr) || !r->Skip(extra) || nr > r->remaining() / 24 || !r->Skip(nr * 24)) {
      out->user_copy_error = UserCopyError::kBranchStackCut;
      return;
    }
  }
  if (st & kSampleRegsUser) {
    // u64 abi; with an abi, one u64 per bit of sample_regs_user.
    if (!r->Read(&out->regs_abi)) {
      out->user_copy_error = UserCopyError::kRegsCut;
      return;
    }
    if (out->regs_abi != kRegsAbiNone &&
        !r->ReadSpan(8 * static_cast<size_t>(absl::popcount(attr.sample_regs_user)),
                     &out->user_regs)) {
      out->regs_abi = kRegsAbiNone;
      out->user_copy_error = UserCopyError::kRegsCut;
      return;
    }
  }
  if (st & kSampleStackUser) {
    // u64 size; if non-zero, size bytes and a u64 dyn_size (how many of
    // them the kernel could copy; perf_output_sample_ustack).
    uint64_t size;
    absl::Span<const uint8_t> copy;
    if (!r->Read(&size) || (size != 0 && !r->ReadSpan(size, &copy))) {
      out->user_copy_error = UserCopyError::kStackCut;
      return;
    }
    if (size == 0) return;
    uint64_t dyn_size;
    if (!r->Read(&dyn_size) || dyn_size > size) {
      out->user_copy_error = UserCopyError::kDynSizeTooBig;
      dyn_size = size;
    }
    out->user_stack = copy.subspan(0, dyn_size);
  }
}

constexpr uint64_t kUserTailBits = kSampleBranchStack | kSampleRegsUser | kSampleStackUser;

// Field by field, for any sample_type; the errors name the field.
absl::Status ParseFieldByField(const EventAttr& attr, absl::Span<const uint8_t> body, Sample* out,
                               std::vector<uint64_t>* scratch) {
  *out = Sample();
  out->attr = &attr;
  const uint64_t st = attr.sample_type;
  ByteReader r(body);
  if ((st & kSampleIdentifier) && !r.Read(&out->id)) return Short("IDENTIFIER", r.pos());
  if ((st & kSampleIp) && !r.Read(&out->ip)) return Short("IP", r.pos());
  if ((st & kSampleTid) && !(r.Read(&out->pid) && r.Read(&out->tid))) {
    return Short("TID", r.pos());
  }
  if ((st & kSampleTime) && !r.Read(&out->time)) return Short("TIME", r.pos());
  if ((st & kSampleAddr) && !r.Skip(8)) return Short("ADDR", r.pos());
  if ((st & kSampleId) && !r.Read(&out->id)) return Short("ID", r.pos());
  if ((st & kSampleStreamId) && !r.Skip(8)) return Short("STREAM_ID", r.pos());
  if ((st & kSampleCpu) && !(r.Read(&out->cpu) && r.Skip(4))) return Short("CPU", r.pos());
  if ((st & kSamplePeriod) && !r.Skip(8)) return Short("PERIOD", r.pos());
  if ((st & kSampleRead) && !SkipRead(attr.read_format, &r)) return Short("READ", r.pos());
  if (st & kSampleCallchain) {
    uint64_t nr;
    absl::Span<const uint8_t> ips;
    if (!r.Read(&nr) || nr > r.remaining() / 8 || !r.ReadSpan(nr * 8, &ips)) {
      return Short("CALLCHAIN", r.pos());
    }
    if (reinterpret_cast<uintptr_t>(ips.data()) % alignof(uint64_t) == 0) {
      out->callchain = {reinterpret_cast<const uint64_t*>(ips.data()), nr};
    } else {
      // Records are 8-byte multiples at 8-aligned offsets in perf's output;
      // a misaligned one (odd data offset) is copied rather than read through
      // a misaligned pointer.
      scratch->resize(nr);
      if (nr != 0) std::memcpy(scratch->data(), ips.data(), nr * 8);
      out->callchain = {scratch->data(), nr};
    }
  }
  if (st & kSampleRaw) {
    // u32 size, then `size` bytes; the kernel pads size so that the pair ends
    // 8-aligned (perf_prepare_sample), and the padding is part of `size`.
    uint32_t size;
    if (!r.Read(&size) || !r.ReadSpan(size, &out->raw)) return Short("RAW", r.pos());
  }
  if (st & kUserTailBits) ParseUserTail(attr, &r, out);
  // Fields after STACK_USER (WEIGHT, DATA_SRC, ...) are not needed.
  return absl::OkStatus();
}

}  // namespace

int SampleIdPos(uint64_t st) {
  if (st & kSampleIdentifier) return 0;
  if (!(st & kSampleId)) return -1;
  int pos = 0;
  for (uint64_t bit : {kSampleIp, kSampleTid, kSampleTime, kSampleAddr}) {
    if (st & bit) ++pos;
  }
  return pos;
}

int TrailerIdPos(uint64_t st) {
  if (st & kSampleIdentifier) return 1;
  if (!(st & kSampleId)) return -1;
  int pos = 1;
  for (uint64_t bit : {kSampleCpu, kSampleStreamId}) {
    if (st & bit) ++pos;
  }
  return pos;
}

size_t TrailerSize(uint64_t st) {
  size_t n = 0;
  for (uint64_t bit :
       {kSampleTid, kSampleTime, kSampleId, kSampleStreamId, kSampleCpu, kSampleIdentifier}) {
    if (st & bit) n += 8;
  }
  return n;
}

SampleLayout LayoutOf(uint64_t st, uint64_t read_format) {
  SampleLayout l;
  l.sample_type = st;
  l.read_format = read_format;
  // A READ group's size depends on its count: the fields after it move.
  if ((st & kSampleRead) && (read_format & format::kFormatGroup)) return l;
  int pos = 0;
  auto field = [&](uint64_t bit, int16_t* at, int bytes) {
    if (!(st & bit)) return;
    if (at != nullptr) *at = static_cast<int16_t>(pos);
    pos += bytes;
  };
  field(kSampleIdentifier, &l.identifier, 8);
  field(kSampleIp, &l.ip, 8);
  field(kSampleTid, &l.tid, 8);
  field(kSampleTime, &l.time, 8);
  field(kSampleAddr, nullptr, 8);
  field(kSampleId, &l.id, 8);
  field(kSampleStreamId, nullptr, 8);
  field(kSampleCpu, &l.cpu, 8);
  field(kSamplePeriod, nullptr, 8);
  if (st & kSampleRead) {
    pos += static_cast<int>(ReadTimesBytes(read_format) + ReadValueBytes(read_format));
  }
  l.prefix = static_cast<uint16_t>(pos);
  l.fixed = true;
  return l;
}

absl::Status ParseSampleBody(const EventAttr& attr, absl::Span<const uint8_t> body,
                             Sample* out, std::vector<uint64_t>* scratch) {
  const SampleLayout& l = attr.layout;
  const uint64_t st = attr.sample_type;
  if (!l.fixed || l.sample_type != st || l.read_format != attr.read_format ||
      body.size() < l.prefix) {
    return ParseFieldByField(attr, body, out, scratch);
  }
  const uint8_t* p = body.data();
  auto u64_at = [p](int at) {
    uint64_t v;
    std::memcpy(&v, p + at, 8);
    return v;
  };
  auto u32_at = [p](int at) {
    uint32_t v;
    std::memcpy(&v, p + at, 4);
    return v;
  };
  *out = Sample();
  out->attr = &attr;
  if (l.identifier >= 0) out->id = u64_at(l.identifier);
  if (l.ip >= 0) out->ip = u64_at(l.ip);
  if (l.tid >= 0) {
    out->pid = u32_at(l.tid);
    out->tid = u32_at(l.tid + 4);
  }
  if (l.time >= 0) out->time = u64_at(l.time);
  if (l.id >= 0) out->id = u64_at(l.id);
  if (l.cpu >= 0) out->cpu = u32_at(l.cpu);
  size_t pos = l.prefix;
  if (st & kSampleCallchain) {
    if (body.size() - pos < 8) return ParseFieldByField(attr, body, out, scratch);
    const uint64_t nr = u64_at(static_cast<int>(pos));
    pos += 8;
    if (nr > (body.size() - pos) / 8) return ParseFieldByField(attr, body, out, scratch);
    if (reinterpret_cast<uintptr_t>(p + pos) % alignof(uint64_t) != 0) {
      return ParseFieldByField(attr, body, out, scratch);  // copies it (rare)
    }
    out->callchain = {reinterpret_cast<const uint64_t*>(p + pos), nr};
    pos += nr * 8;
  }
  if (st & kSampleRaw) {
    if (body.size() - pos < 4) return ParseFieldByField(attr, body, out, scratch);
    const uint32_t size = u32_at(static_cast<int>(pos));
    pos += 4;
    if (size > body.size() - pos) return ParseFieldByField(attr, body, out, scratch);
    out->raw = body.subspan(pos, size);
    pos += size;
  }
  if (st & kUserTailBits) {
    ByteReader r(body);
    r.Seek(pos);
    ParseUserTail(attr, &r, out);
  }
  return absl::OkStatus();
}

void ParseTrailer(uint64_t st, absl::Span<const uint8_t> trailer, SampleId* out) {
  *out = SampleId();
  ByteReader r(trailer);
  if (st & kSampleTid) {
    r.Read(&out->pid);
    r.Read(&out->tid);
  }
  if (st & kSampleTime) out->has_time = r.Read(&out->time);
  // ID and STREAM_ID (the id was already used to find the attr), then CPU;
  // IDENTIFIER is not needed.
  if ((st & kSampleId) && !r.Skip(8)) return;
  if ((st & kSampleStreamId) && !r.Skip(8)) return;
  if (st & kSampleCpu) out->has_cpu = r.Read(&out->cpu);
}

}  // namespace pageblame::perf
