#include "processor/perf/record_decompressor.h"

// The buffer-less streaming API (zstd.h: "Buffer-less streaming decompression").
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <algorithm>
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
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  ~Context() { ZSTD_freeDCtx(dctx); }
};

namespace {

// zstd's skippable frames: magic 0x184D2A50..0x184D2A5F, then a 4-byte
// length of data to skip (zstd_compression_format.md).
constexpr uint32_t kSkippableMagicMask = 0xFFFFFFF0;
constexpr uint32_t kSkippableMagic = 0x184D2A50;

static_assert(RecordDecompressor::kMaxFrameHeader == ZSTD_FRAMEHEADERSIZE_MAX);
static_assert(RecordDecompressor::kMaxPiece >= ZSTD_BLOCKSIZE_MAX + 64);

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
  if (in_pos_ < in_size_) {
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
    if (zstd_->dctx == nullptr) return absl::ResourceExhaustedError("ZSTD_createDCtx failed");
    MakeRing(kMinRingSize);
  }
  // What is left is one record cut short by the previous COMPRESSED record
  // (Next() hands out every whole one): it goes on in this one.
  if (produced_ > head_stream_) {
    if (head_stream_ >= carried_end_) {  // not already carried from an earlier one
      carried_offset_ = current_offset_;
      ++stats_.straddling_records;
    }
    carried_end_ = produced_;
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
  ZSTD_DCtx* z = zstd_->dctx;
  while (true) {
    if (!in_frame_) {
      if (staged_size_ == 0 && in_pos_ == in_size_) return false;
      if (staged_size_ == 0) RETURN_IF_ERROR(RefuseSkippableFrame());
      if (ZSTD_isError(ZSTD_decompressBegin(z))) return absl::ResourceExhaustedError("ZSTD_decompressBegin failed");
      in_frame_ = true;
      header_size_ = 0;
    }
    const size_t need = ZSTD_nextSrcSizeToDecompress(z);
    if (need == 0) {  // the frame ended; the next byte starts one (or the stream's end)
      in_frame_ = false;
      continue;
    }
    const ZSTD_nextInputType_e type = ZSTD_nextInputType(z);
    // A skippable frame whose magic was cut by a record's end: it wants
    // the skipped bytes.
    if (type == ZSTDnit_skippableFrame || need > kMaxPiece) {
      return Error(current_offset_, produced_,
                   absl::StrFormat("zstd wants %u more bytes without output (a skippable frame?): "
                                   "perf writes none",
                                   need));
    }
    const uint8_t* src = Gather(need);
    if (src == nullptr) return false;  // the rest is in the next COMPRESSED record
    uint8_t* dst = nullptr;
    size_t capacity = 0;
    if (type == ZSTDnit_block || type == ZSTDnit_lastBlock) {
      dst = BlockDestination();
      capacity = ring_size_ - static_cast<size_t>(dst - ring());
    } else if (type == ZSTDnit_frameHeader && header_size_ + need <= kMaxFrameHeader) {
      std::memcpy(header_ + header_size_, src, need);
      header_size_ += need;
    }
    const size_t got = ZSTD_decompressContinue(z, dst, capacity, src, need);
    staged_size_ = 0;
    if (ZSTD_isError(got)) {
      return Error(current_offset_, produced_,
                   absl::StrFormat("corrupt zstd data (%s) in the COMPRESSED record's %u bytes",
                                   ZSTD_getErrorName(got), in_size_));
    }
    if (type == ZSTDnit_frameHeader && ZSTD_nextInputType(z) == ZSTDnit_blockHeader) {
      RETURN_IF_ERROR(StartFrame());
    }
    if (got > 0) {
      tail_ += got;
      produced_ += got;
      stats_.decompressed_bytes += got;
      return true;
    }
  }
}

const uint8_t* RecordDecompressor::Gather(size_t need) {
  const size_t left = in_size_ - in_pos_;
  if (staged_size_ == 0 && left >= need) {
    const uint8_t* p = in_ + in_pos_;
    in_pos_ += need;
    return p;
  }
  const size_t take = std::min(need - staged_size_, left);  // (need <= kMaxPiece)
  std::memcpy(staged() + staged_size_, in_ + in_pos_, take);
  staged_size_ += take;
  in_pos_ += take;
  return staged_size_ == need ? staged() : nullptr;
}

absl::Status RecordDecompressor::StartFrame() {
  ZSTD_frameHeader fh;
  if (ZSTD_getFrameHeader(&fh, header_, header_size_) != 0) {
    return Error(current_offset_, produced_, "corrupt zstd data (a frame header zstd read and cannot read again)");
  }
  // zstd's streaming API refused such a frame before allocating its window;
  // the ring is ours to refuse.
  if (fh.windowSize > (uint64_t{1} << kMaxWindowLog)) {
    return Error(current_offset_, produced_,
                 absl::StrFormat("corrupt zstd data (Frame requires too much memory for decoding: a "
                                 "window of %u bytes) in the COMPRESSED record's %u bytes",
                                 fh.windowSize, in_size_));
  }
  block_max_ = fh.blockSizeMax;
  // The round buffer zstd asks for (whatever the frame's stated size: its
  // blocks start where the last frame's ended), a record's alignment, and
  // room for a record cut by the wrap at the ring's end while the next
  // blocks are written from its start.
  const size_t need = ZSTD_decodingBufferSize_min(fh.windowSize, ZSTD_CONTENTSIZE_UNKNOWN);
  if (ZSTD_isError(need)) return Error(current_offset_, produced_, "corrupt zstd data (window too large)");
  const size_t size = (std::max(need + 8, kMinRingSize) + 7) / 8 * 8;
  if (size > ring_size_) MakeRing(size);  // a frame with a larger window
  return absl::OkStatus();
}

void RecordDecompressor::MakeRing(size_t ring_size) {
  // (Nothing is staged here: at the first Feed, or after a frame header.)
  std::unique_ptr<uint64_t[]> buffer(new uint64_t[(ring_size + kMaxRecordSize + 1 + kMaxPiece + 7) / 8]);
  const size_t unread = Unread();
  const size_t at = head_stream_ % 8;
  if (unread > 0) CopyUnread(unread, reinterpret_cast<uint8_t*>(buffer.get()) + at);
  buffer_ = std::move(buffer);
  ring_size_ = ring_size;
  wrapped_ = false;
  head_ = at;
  tail_ = at + unread;
}

uint8_t* RecordDecompressor::BlockDestination() {
  uint8_t* ring = this->ring();
  if (ring_size_ - tail_ >= block_max_) return ring + tail_;
  // At the ring's start, at the stream offset mod 8 (records stay 8-byte
  // aligned). What was not handed out (less than a record: Next() takes
  // every whole one before a block is decoded) waits at the end, joined
  // with the rest when that is there; the next wrap is a ring's worth of
  // records later.
  if (head_ < tail_) {
    wrapped_ = true;
    wrapped_head_ = head_;
    wrapped_end_ = tail_;
  }
  head_ = tail_ = static_cast<size_t>(produced_ % 8);
  return ring + head_;
}

size_t RecordDecompressor::Unread() const {
  return (wrapped_ ? wrapped_end_ - wrapped_head_ : 0) + (tail_ - head_);
}

void RecordDecompressor::CopyUnread(size_t n, uint8_t* out) const {
  const uint8_t* ring = this->ring();
  if (wrapped_) {
    const size_t first = std::min(n, wrapped_end_ - wrapped_head_);
    std::memcpy(out, ring + wrapped_head_, first);
    out += first;
    n -= first;
  }
  if (n > 0) std::memcpy(out, ring + head_, n);
}

absl::Status RecordDecompressor::RefuseSkippableFrame() const {
  if (in_size_ - in_pos_ < 8) return absl::OkStatus();
  ByteReader r(in_ + in_pos_, 8);
  uint32_t magic = 0, length = 0;
  r.Read(&magic);  // zstd's fields are little-endian, as the hosts we run on
  r.Read(&length);
  if ((magic & kSkippableMagicMask) != kSkippableMagic) return absl::OkStatus();
  return Error(current_offset_, produced_,
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
    // The next record's bytes: in place, or (cut by the ring's wrap) joined.
    const uint8_t* p = nullptr;
    size_t avail = tail_ - head_;
    uint8_t first[format::kEventHeaderSize];
    if (ABSL_PREDICT_TRUE(!wrapped_)) {
      p = ring() + head_;
    } else {
      avail = Unread();
      if (avail >= format::kEventHeaderSize) CopyUnread(format::kEventHeaderSize, first);
    }
    if (ABSL_PREDICT_TRUE(avail >= format::kEventHeaderSize)) {
      const EventHeader h = ReadEventHeader(p != nullptr ? p : first);
      const uint32_t type = h.type;
      const uint16_t size = h.size;
      const uint64_t origin = head_stream_ < carried_end_ ? carried_offset_ : current_offset_;
      if (ABSL_PREDICT_FALSE(!h.SizeIsSane())) {
        return Error(origin, head_stream_, absl::StrCat("size ", size, " < 8: corrupt record"));
      }
      if (ABSL_PREDICT_TRUE(size <= avail)) {
        if (p != nullptr) {
          head_ += size;
        } else {
          p = joined();
          CopyUnread(size, joined());
          Consume(size);
        }
        out->type = type;
        out->misc = h.misc;
        out->bytes = absl::Span<const uint8_t>(p, size);
        out->offset = origin;
        out->decompressed_offset = head_stream_;
        head_stream_ += size;
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

void RecordDecompressor::Consume(size_t n) {
  const size_t wrapped = wrapped_end_ - wrapped_head_;
  if (n < wrapped) {
    wrapped_head_ += n;
    return;
  }
  wrapped_ = false;
  head_ += n - wrapped;
}

absl::Status RecordDecompressor::Finish() const {
  const size_t left = Unread();
  if (left == 0) return absl::OkStatus();
  const uint64_t origin = head_stream_ < carried_end_ ? carried_offset_ : current_offset_;
  if (left < format::kEventHeaderSize) {
    return Error(origin, head_stream_,
                 absl::StrCat("the compressed data ends inside a record header (", left,
                              " of 8 bytes)", PerfLostTheRest()));
  }
  uint8_t first[format::kEventHeaderSize];
  CopyUnread(format::kEventHeaderSize, first);
  const EventHeader h = ReadEventHeader(first);
  return Error(origin, head_stream_,
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
