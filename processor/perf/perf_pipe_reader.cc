#include "processor/perf/perf_pipe_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "processor/base/byte_reader.h"
#include "processor/base/status_macros.h"
#include "processor/perf/header_parser.h"
#include "processor/perf/event_header.h"
#include "processor/perf/perf_format.h"

namespace pageblame::perf {

namespace {

constexpr size_t kMaxRecordSize = 65535;  // perf_event_header.size is a u16

// The records Next() hands out: the kernel's, and the two ordering markers.
bool IsReturned(uint32_t type) {
  return type < format::kRecordUserTypeStart || type == kRecordFinishedRound ||
         type == kRecordFinishedInit;
}

}  // namespace

PerfPipeReader::PerfPipeReader(int fd, bool owned, std::string path)
    : in_(fd, owned), record_((kMaxRecordSize + 7) / 8) {
  path_ = std::move(path);
  info_.pipe_mode = true;
}

absl::StatusOr<std::unique_ptr<PerfReader>> PerfPipeReader::OpenStdin() {
  std::unique_ptr<PerfPipeReader> reader(new PerfPipeReader(STDIN_FILENO, false, "<stdin>"));
  RETURN_IF_ERROR(reader->Start());
  return std::unique_ptr<PerfReader>(std::move(reader));
}

absl::StatusOr<std::unique_ptr<PerfReader>> PerfPipeReader::OpenPath(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    std::string msg = absl::StrCat(path, ": cannot open: ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(msg) : absl::UnavailableError(msg);
  }
  std::unique_ptr<PerfPipeReader> reader(new PerfPipeReader(fd, true, path));
  RETURN_IF_ERROR(reader->Start());
  return std::unique_ptr<PerfReader>(std::move(reader));
}

absl::Status PerfPipeReader::Start() {
  uint64_t header[2];
  ASSIGN_OR_RETURN(size_t got, in_.Read(header, sizeof(header)));
  RETURN_IF_ERROR(CheckStart(path_, "stream", got));
  RETURN_IF_ERROR(CheckMagic(path_, header[0]));
  if (header[1] != format::kPipeHeaderSize) {
    // A file-mode perf.data is the likely cause, rather than a damaged
    // stream: say what to do.
    return absl::FailedPreconditionError(absl::StrCat(
        path_, ": header size ", header[1], " at offset 8 is not a pipe-mode stream's (",
        format::kPipeHeaderSize,
        "); a file-mode perf.data must be opened by path (-i FILE), not piped"));
  }
  ASSIGN_OR_RETURN(has_pending_, Advance(&pending_));
  return absl::OkStatus();
}

absl::StatusOr<bool> PerfPipeReader::ReadRecord(RawRecord* out) {
  uint8_t* buf = reinterpret_cast<uint8_t*>(record_.data());
  const uint64_t offset = in_.offset();
  ASSIGN_OR_RETURN(size_t got, in_.Read(buf, format::kEventHeaderSize));
  if (got == 0) return false;
  if (got < format::kEventHeaderSize) {
    return RecordError(offset, absl::StrCat("the stream ends inside a record header (", got,
                                            " of 8 bytes)"));
  }
  const EventHeader h = ReadEventHeader(buf);
  const uint32_t type = h.type;
  const uint16_t size = h.size;
  if (!h.SizeIsSane()) {
    return RecordError(offset, absl::StrCat("size ", size, " < 8: corrupt record"));
  }
  const size_t body = size - format::kEventHeaderSize;
  ASSIGN_OR_RETURN(got, in_.Read(buf + format::kEventHeaderSize, body));
  if (got < body) {
    return RecordError(offset, absl::StrFormat(
        "type %u, size %u is truncated: the stream ends after %u of its bytes", type, size,
        got + format::kEventHeaderSize));
  }
  out->type = type;
  out->misc = h.misc;
  out->bytes = absl::Span<const uint8_t>(buf, size);
  out->offset = offset;
  out->decompressed_offset = RawRecord::kNotCompressed;
  return true;
}

absl::StatusOr<bool> PerfPipeReader::Next(RawRecord* out) {
  if (has_pending_) {
    has_pending_ = false;
    *out = pending_;
    return true;
  }
  return Advance(out);
}

absl::StatusOr<bool> PerfPipeReader::Advance(RawRecord* out) {
  while (true) {
    if (decompressing_) {
      ASSIGN_OR_RETURN(bool got, NextDecompressed(out));
      if (got) return true;
    }
    // The decompressed records are used up: record_ may be reused.
    ASSIGN_OR_RETURN(bool more, ReadRecord(out));
    if (!more) {
      FinishDecompressing();
      return false;
    }
    if (IsReturned(out->type)) return true;
    if (out->type == format::kRecordCompressed || out->type == format::kRecordCompressed2) {
      RETURN_IF_ERROR(Decompress(*out));  // its records come next, from record_
      continue;
    }
    RETURN_IF_ERROR(ApplyUserRecord(*out));
  }
}

absl::Status PerfPipeReader::ReadTracingData(const RawRecord& rec) {
  // perf_record_header_tracing_data: header, u32 size[, u32 pad]. The
  // tracing data itself (`size` bytes, perf pads it to 8) follows the record
  // outside its header.size (session.c: perf_event__process_tracing_data
  // reads it from the fd and returns it as `skip`).
  ByteReader r(rec.bytes);
  uint32_t size;
  if (!r.Skip(format::kEventHeaderSize) || !r.Read(&size)) {
    return RecordError(rec.offset, "HEADER_TRACING_DATA record too short");
  }
  if (size > format::kMaxTracingDataSize) {
    return RecordError(rec.offset, absl::StrCat("implausible tracing data size ", size));
  }
  // Grow as the bytes arrive rather than trusting `size` up front.
  std::string& data = info_.tracing_data;
  data.clear();
  constexpr size_t kChunk = 1 << 20;
  while (data.size() < size) {
    const size_t want = std::min<size_t>(kChunk, size - data.size());
    const size_t old = data.size();
    data.resize(old + want);
    ASSIGN_OR_RETURN(size_t got, in_.Read(data.data() + old, want));
    if (got < want) {
      return RecordError(rec.offset, absl::StrCat("the stream ends inside the ", size,
                                                  "-byte tracing data"));
    }
  }
  return absl::OkStatus();
}

absl::Status PerfPipeReader::ApplyUserRecord(const RawRecord& rec) {
  absl::Status st;
  switch (rec.type) {
    case kRecordHeaderAttr:
      st = ApplyHeaderAttr(rec.bytes, &info_);
      if (st.ok()) IndexAttrs();
      break;
    case kRecordHeaderEventType:
      st = ApplyEventType(rec.bytes, &info_);
      break;
    case kRecordHeaderTracingData:
      return ReadTracingData(rec);
    case kRecordHeaderBuildId:
      st = ParseBuildIds(rec.bytes, &info_.build_ids);
      break;
    case kRecordEventUpdate:
      st = ApplyEventUpdate(rec.bytes, &info_);
      break;
    case kRecordHeaderFeature:
      st = ApplyHeaderFeature(rec.bytes, &info_);
      break;
    case format::kRecordAuxtrace: {
      // perf_record_auxtrace: header, u64 size, ...; `size` bytes of AUX
      // data follow the record.
      ByteReader r(rec.bytes);
      uint64_t size = 0;
      if (!r.Skip(format::kEventHeaderSize) || !r.Read(&size)) {
        return RecordError(rec.offset, "AUXTRACE record too short");
      }
      ASSIGN_OR_RETURN(uint64_t skipped, in_.Skip(size));
      if (skipped < size) return RecordError(rec.offset, "the stream ends inside AUX data");
      break;
    }
    default:
      break;  // ID_INDEX, THREAD_MAP, CPU_MAP, TIME_CONV, ...: not needed
  }
  if (!st.ok()) return RecordError(rec.offset, st.message());
  return absl::OkStatus();
}

}  // namespace pageblame::perf
