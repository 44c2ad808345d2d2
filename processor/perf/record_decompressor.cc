#include "processor/perf/record_decompressor.h"

#include <zstd.h>

#include <cstring>
#include <utility>

#include "absl/base/optimization.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "processor/base/byte_reader.h"
#include "processor/base/status_macros.h"
#include "processor/perf/event_header.h"
#include "processor/perf/perf_format.h"

namespace pageblame::perf {

struct RecordDecompressor::Context {
  ZSTD_DStream* stream = ZSTD_createDStream();
  ~Context() { ZSTD_freeDStream(stream); }
};

namespace {

// zstd's skippable frames: magic 0x184D2A50..0x184D2A5F, then a 4-byte
// length of data to skip (zstd_compression_format.md).
constexpr uint32_t kSkippableMagicMask = 0xFFFFFFF0;
constexpr uint32_t kSkippableMagic = 0x184D2A50;

// Larger than any hint zstd gives inside a compressed frame (a block and the
// next block's header): only skipping a skippable frame's data asks for more.
constexpr size_t kMaxInFrameHint = ZSTD_BLOCKSIZE_MAX + 64;

}  // namespace

RecordDecompressor::RecordDecompressor(std::string path) : path_(std::move(path)) {}

RecordDecompressor::~RecordDecompressor() = default;

std::string RecordDecompressor::Where(uint64_t offset, uint64_t decompressed_offset) {
  if (decompressed_offset == RawRecord::kNotCompressed) {
    return absl::StrFormat("record at offset 0x%x", offset);
  }
  return absl::StrFormat(
      "record at offset 0x%x of the decompressed data (COMPRESSED record at offset 0x%x)",
      decompressed_offset, offset);
}

absl::Status RecordDecompressor::Error(uint64_t compressed_offset, uint64_t stream_offset,
                                       absl::string_view what) const {
  return absl::DataLossError(
      absl::StrCat(path_, ": ", Where(compressed_offset, stream_offset), ": ", what));
}

absl::Status RecordDecompressor::Feed(const RawRecord& rec) {
  if (in_pos_ < in_size_ || output_pending_) {
    return absl::InternalError(absl::StrFormat(
        "%s: COMPRESSED record at offset 0x%x fed before the previous one was used up", path_,
        rec.offset));
  }
  absl::Span<const uint8_t> data;
  ByteReader r(rec.bytes);
  if (rec.type == format::kRecordCompressed) {
    r.Skip(format::kEventHeaderSize);
    data = r.rest();
  } else if (rec.type == format::kRecordCompressed2) {
    uint64_t data_size = 0;
    if (!r.Skip(format::kEventHeaderSize) || !r.Read(&data_size)) {
      return absl::DataLossError(absl::StrFormat(
          "%s: record at offset 0x%x: COMPRESSED2 record of %u bytes is too short for its "
          "data_size",
          path_, rec.offset, rec.bytes.size()));
    }
    if (!r.ReadSpan(data_size, &data)) {  // also rejects data_size > SIZE_MAX
      return absl::DataLossError(absl::StrFormat(
          "%s: record at offset 0x%x: COMPRESSED2 data_size %u runs past the record's %u bytes",
          path_, rec.offset, data_size, rec.bytes.size()));
    }
  } else {
    return absl::InternalError(absl::StrFormat("%s: record at offset 0x%x: type %u is not "
                                               "COMPRESSED", path_, rec.offset, rec.type));
  }
  if (zstd_ == nullptr) {
    zstd_ = std::make_unique<Context>();
    if (zstd_->stream == nullptr) return absl::ResourceExhaustedError("ZSTD_createDStream failed");
    // zstd checks a frame's window against this before allocating it.
    ZSTD_DCtx_setParameter(zstd_->stream, ZSTD_d_windowLogMax, kMaxWindowLog);
    buffer_.reset(new uint64_t[kBufferSize / sizeof(uint64_t)]);
  }
  // What is left is one record cut short by the previous COMPRESSED record
  // (Next() hands out every whole one): it goes on in this one.
  if (tail_ > head_) {
    if (head_ >= carried_end_) {  // not already carried from an earlier one
      carried_offset_ = current_offset_;
      ++stats_.straddling_records;
    }
    carried_end_ = tail_;
  } else {
    carried_end_ = 0;
  }
  current_offset_ = rec.offset;
  current_full_ = data.size() == (rec.type == format::kRecordCompressed ? kPerfFullCompressed
                                                                          : kPerfFullCompressed2);
  in_ = data.data();
  in_size_ = data.size();
  in_pos_ = 0;
  ++stats_.compressed_records;
  stats_.compressed_bytes += data.size();
  return absl::OkStatus();
}

absl::StatusOr<bool> RecordDecompressor::Refill() {
  if (in_pos_ == in_size_ && !output_pending_) return false;
  uint8_t* bytes = reinterpret_cast<uint8_t*>(buffer_.get());
  if (head_ > 0) {
    // At most one record's worth (< 64 KiB): the one cut by the buffer's end.
    const size_t left = tail_ - head_;
    std::memmove(bytes, bytes + head_, left);
    buffer_stream_offset_ += head_;
    carried_end_ = carried_end_ > head_ ? carried_end_ - head_ : 0;
    head_ = 0;
    tail_ = left;
  }
  RETURN_IF_ERROR(RefuseSkippableFrame());
  ZSTD_inBuffer in{in_, in_size_, in_pos_};
  ZSTD_outBuffer out{bytes + tail_, kBufferSize - tail_, 0};
  const size_t ret = ZSTD_decompressStream(zstd_->stream, &out, &in);
  if (ZSTD_isError(ret)) {
    return Error(current_offset_, buffer_stream_offset_ + tail_,
                 absl::StrFormat("corrupt zstd data (%s) in the COMPRESSED record's %u bytes",
                                 ZSTD_getErrorName(ret), in_size_));
  }
  // 0: a frame ended; the next byte starts one (or the stream's end).
  at_frame_start_ = ret == 0;
  // A skippable frame whose magic was cut by a record's end, seen by zstd's
  // hint: it wants the skipped bytes.
  if (ret > kMaxInFrameHint) {
    return Error(current_offset_, buffer_stream_offset_ + tail_,
                 absl::StrFormat("zstd wants %u more bytes without output (a skippable frame?): "
                                 "perf writes none",
                                 ret));
  }
  const bool progress = out.pos > 0 || in.pos > in_pos_;
  in_pos_ = in.pos;
  tail_ += out.pos;
  stats_.decompressed_bytes += out.pos;
  // A full buffer may leave decompressed bytes inside zstd.
  output_pending_ = out.pos == out.size;
  if (!progress && in_pos_ < in_size_) {
    return Error(current_offset_, buffer_stream_offset_ + tail_,
                 "zstd made no progress on the COMPRESSED record's data");
  }
  return true;
}

absl::Status RecordDecompressor::RefuseSkippableFrame() const {
  if (!at_frame_start_ || in_size_ - in_pos_ < 8) return absl::OkStatus();
  ByteReader r(in_ + in_pos_, 8);
  uint32_t magic = 0, length = 0;
  r.Read(&magic);  // zstd's fields are little-endian, as the hosts we run on
  r.Read(&length);
  if ((magic & kSkippableMagicMask) != kSkippableMagic) return absl::OkStatus();
  return Error(current_offset_, buffer_stream_offset_ + tail_,
               absl::StrFormat("a zstd skippable frame (magic 0x%x, %u bytes) at byte %u of "
                               "the COMPRESSED record's %u bytes of zstd data: perf writes none, "
                               "and it would hide what follows",
                               magic, length, in_pos_, in_size_));
}

absl::StatusOr<bool> RecordDecompressor::KeepUserRecord(const RawRecord& rec) const {
  switch (rec.type) {
    case kRecordFinishedRound:
    case kRecordFinishedInit:
      return true;
    case format::kRecordCompressed:
    case format::kRecordCompressed2:
      return Error(rec.offset, rec.decompressed_offset,
                   "a COMPRESSED record inside compressed data");
    case format::kRecordAuxtrace:
    case kRecordHeaderTracingData:
      return Error(rec.offset, rec.decompressed_offset,
                   absl::StrCat("type ", rec.type,
                                " is followed by a payload, which perf does not write inside "
                                "compressed data: not supported"));
    default:
      return false;  // perf's header records carry nothing replay needs here
  }
}

absl::StatusOr<bool> RecordDecompressor::Next(RawRecord* out) {
  while (true) {
    const size_t avail = tail_ - head_;
    if (ABSL_PREDICT_TRUE(avail >= format::kEventHeaderSize)) {
      const uint8_t* p = reinterpret_cast<const uint8_t*>(buffer_.get()) + head_;
      const EventHeader h = ReadEventHeader(p);
      const uint32_t type = h.type;
      const uint16_t size = h.size;
      const uint64_t origin = head_ < carried_end_ ? carried_offset_ : current_offset_;
      if (ABSL_PREDICT_FALSE(!h.SizeIsSane())) {
        return Error(origin, buffer_stream_offset_ + head_,
                     absl::StrCat("size ", size, " < 8: corrupt record"));
      }
      if (ABSL_PREDICT_TRUE(size <= avail)) {
        out->type = type;
        out->misc = h.misc;
        out->bytes = absl::Span<const uint8_t>(p, size);
        out->offset = origin;
        out->decompressed_offset = buffer_stream_offset_ + head_;
        head_ += size;
        if (ABSL_PREDICT_FALSE(type >= format::kRecordUserTypeStart &&
                               type != kRecordFinishedRound && type != kRecordFinishedInit)) {
          absl::StatusOr<bool> keep = KeepUserRecord(*out);
          if (!keep.ok()) return keep.status();
          if (!*keep) continue;
        }
        return true;
      }
    }
    absl::StatusOr<bool> more = Refill();
    if (!more.ok()) return more.status();
    if (!*more) return false;
  }
}

absl::Status RecordDecompressor::Finish() const {
  const size_t left = tail_ - head_;
  if (left == 0) return absl::OkStatus();
  const uint64_t origin = head_ < carried_end_ ? carried_offset_ : current_offset_;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(buffer_.get()) + head_;
  if (left < format::kEventHeaderSize) {
    return Error(origin, buffer_stream_offset_ + head_,
                 absl::StrCat("the compressed data ends inside a record header (", left,
                              " of 8 bytes)", PerfLostTheRest()));
  }
  const EventHeader h = ReadEventHeader(p);
  return Error(origin, buffer_stream_offset_ + head_,
               absl::StrFormat("type %u, size %u runs past the end of the compressed data "
                               "(%u of its bytes are there)%s",
                               h.type, h.size, left, PerfLostTheRest()));
}

std::string RecordDecompressor::PerfLostTheRest() const {
  if (!current_full_) return "";
  return absl::StrFormat(
      "; the last COMPRESSED record is full (%u zstd bytes, perf's most): perf record -z never "
      "wrote the rest of its compressor's output (its util/zstd.c keeps what a full record cannot "
      "take for the next batch, and there was none), so the records after this one are missing "
      "too; 'pageblame record' drains perf as it records so that this does not happen",
      in_size_);
}

}  // namespace pageblame::perf
