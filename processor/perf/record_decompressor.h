// The records inside a trace's PERF_RECORD_COMPRESSED / COMPRESSED2 records
// (`perf record -z`). perf compresses what it reads from the ring buffers as
// one zstd stream for the whole trace, flushed at the end of each
// COMPRESSED record (tools/perf/util/zstd.c), so the stream must be
// decompressed with one context, in file order, and a record may start in
// one COMPRESSED record and end in a later one (perf cuts the ring buffer
// where it wraps: session.c carries the tail of its `decomp` buffer over to
// the next one). The records come out exactly as if they had been in the
// data section at the place of the COMPRESSED record.
//
//   RecordDecompressor d(path);
//   RETURN_IF_ERROR(d.Feed(compressed_rec));     // a whole COMPRESSED record
//   while (true) {
//     ASSIGN_OR_RETURN(bool got, d.Next(&rec));  // its records, one by one
//     if (!got) break;                           // used up: Feed the next one
//     ...
//   }
//   RETURN_IF_ERROR(d.Finish());  // at the end of the data: nothing left over
//
// zstd decodes straight into a ring of our own (its buffer-less API), where
// the records are read in place: zstd's streaming API decodes into a
// window of its own and copies every byte out, and a DWARF recording's
// samples are 16 KiB stack copies each (that copy was a tenth of
// `record --max-size`'s folding). Each block goes where the one before
// ended, or, when a whole block might not fit before the ring's end, at its
// start (at the same offset mod 8, so that records stay 8-byte aligned);
// the window's bytes stay where they were decoded, as zstd needs. A record
// cut by that wrap is made whole in a 64 KiB buffer (perf's records are
// smaller), the one copy left.
//
// Memory: the ring (ZSTD_decodingBufferSize_min of the frame's window, at
// least kMinRingSize: 1 MiB at perf's default level 1, whose window is 512
// KiB; 128 MiB and a bit at most: kMaxWindowLog, checked against the
// frame's header before the ring is made), beside it in one allocation the
// 64 KiB buffer and a 128 KiB one for the start of a block cut by a
// COMPRESSED record's end, and zstd's context; none grows with the trace.
//
// zstd skippable frames are refused: perf writes none, and zstd skips their
// stated length (up to 4 GiB) on into the following COMPRESSED records, so a
// corrupt one made the rest of a trace vanish without an error. Records are
// handed out as spans into the ring (8-byte aligned: perf's records are
// multiples of 8), valid until the next call.
//
// Of the user-space records inside the stream (perf writes none there
// itself), FINISHED_ROUND and FINISHED_INIT are returned, others without a
// payload are skipped, and those with one (AUXTRACE, TRACING_DATA) or a
// nested COMPRESSED record are errors. Every error is a DataLossError
// naming the file, the COMPRESSED record's offset and the offset in the
// decompressed stream. Internal to perf/.
#ifndef PAGEBLAME_PERF_RECORD_DECOMPRESSOR_H_
#define PAGEBLAME_PERF_RECORD_DECOMPRESSOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "processor/perf/perf_records.h"

namespace pageblame::perf {

// What a trace's compressed records held, for progress and benchmarks.
struct CompressionStats {
  uint64_t compressed_records = 0;
  uint64_t compressed_bytes = 0;    // zstd bytes fed (record headers excluded)
  uint64_t decompressed_bytes = 0;  // bytes the zstd stream gave
  uint64_t straddling_records = 0;  // records begun in one COMPRESSED record, ended in another
};

class RecordDecompressor {
 public:
  static constexpr size_t kMinRingSize = 1 << 20;
  // 2^27 = 128 MiB, zstd's own default cap, which perf's highest level
  // (22) reaches; a frame asking for more is an error.
  static constexpr int kMaxWindowLog = 27;
  // The largest record: its header's size is 16 bits.
  static constexpr size_t kMaxRecordSize = 65535;
  // The most a zstd frame header takes (ZSTD_FRAMEHEADERSIZE_MAX).
  static constexpr size_t kMaxFrameHeader = 18;
  // More than any piece of a compressed frame (a block of at most 128 KiB
  // and the next block's header): only a skippable frame's data asks for
  // more.
  static constexpr size_t kMaxPiece = (128 << 10) + 64;
  // The zstd bytes of a full COMPRESSED / COMPRESSED2 record as perf
  // writes it (record.c: PERF_SAMPLE_MAX_SIZE less the record's header, less 1).
  static constexpr size_t kPerfFullCompressed = 65536 - 8 - 1;
  static constexpr size_t kPerfFullCompressed2 = 65536 - 16 - 1;

  explicit RecordDecompressor(std::string path);
  ~RecordDecompressor();
  RecordDecompressor(const RecordDecompressor&) = delete;
  RecordDecompressor& operator=(const RecordDecompressor&) = delete;

  // Takes the next COMPRESSED or COMPRESSED2 record, `rec.bytes` being the
  // whole record, at `rec.offset` of the file. Its bytes must stay valid
  // until Next() has returned false. Fails on a COMPRESSED2 record whose
  // data_size does not fit it, or if the previous record's data was not
  // used up (a caller's bug).
  absl::Status Feed(const RawRecord& rec);

  // The next whole record; false once the data fed so far is used up (a
  // record cut short by it is kept for the next Feed()). Errors: a corrupt
  // zstd stream, a record size below the header size.
  absl::StatusOr<bool> Next(RawRecord* out);

  // At the end of the trace's data: an error if the last record fed ended
  // inside a record. When that COMPRESSED record is as full as perf makes
  // one, the error says perf lost the rest (recorder/perf_control.h).
  absl::Status Finish() const;

  const CompressionStats& stats() const { return stats_; }
  // The file named in errors from now on (a recording's next chunk, whose
  // compressed data continues this stream: PerfReader::ContinueStreamOf).
  void set_path(std::string path) { path_ = std::move(path); }

  // "record at offset 0x..", or for a record from compressed data "record
  // at offset 0x.. of the decompressed data (COMPRESSED record at 0x..)":
  // where error messages say a record is.
  static std::string Where(uint64_t offset, uint64_t decompressed_offset);

 private:
  // Decodes zstd's next piece of input (a frame or block header, a block,
  // a checksum) from the input fed; false once that is used up (the start
  // of a piece cut by a COMPRESSED record's end is staged for the next).
  absl::StatusOr<bool> Refill();
  // The next piece's `need` bytes: in place in the input or gathered in
  // staged_; null if the input fed so far holds too few (then staged).
  const uint8_t* Gather(size_t need);
  // The ring made `ring_size` bytes (with the joined and staged buffers
  // after it, in one allocation), what was not handed out moved to its
  // front at its stream offset mod 8.
  void MakeRing(size_t ring_size);
  // Where the next block is decoded: after the last one, or at the ring's
  // start if a whole block might not fit before its end (what is left
  // unread then waits there).
  uint8_t* BlockDestination();
  // The frame header just decoded (header_) checked and the ring made for
  // its window.
  absl::Status StartFrame();
  // The bytes not handed out yet (the wrapped part first); the first `n`
  // of them copied to `out`.
  size_t Unread() const;
  void CopyUnread(size_t n, uint8_t* out) const;
  // `n` bytes handed out from the wrapped part on.
  void Consume(size_t n);
  uint8_t* ring() const { return reinterpret_cast<uint8_t*>(buffer_.get()); }
  uint8_t* joined() const { return ring() + ring_size_; }
  uint8_t* staged() const { return joined() + kMaxRecordSize + 1; }
  // Next()'s handling of a user-space record type found in the stream:
  // true to return it, false to skip it, or an error.
  absl::StatusOr<bool> KeepUserRecord(const RawRecord& rec) const;
  // An error if a zstd frame starts at the input's position and is a
  // skippable frame.
  absl::Status RefuseSkippableFrame() const;
  // "" or, when the last COMPRESSED record fed is full, what perf lost.
  std::string PerfLostTheRest() const;
  absl::Status Error(uint64_t compressed_offset, uint64_t stream_offset,
                     absl::string_view what) const;

  std::string path_;
  struct Context;  // the zstd context, made at the first Feed()
  std::unique_ptr<Context> zstd_;
  // The ring (ring_size_ bytes, 8-byte aligned), then a record cut by the
  // wrap made whole (kMaxRecordSize + 1 bytes), then the start of the
  // next piece cut by a COMPRESSED record's end (kMaxPiece bytes).
  std::unique_ptr<uint64_t[]> buffer_;
  size_t ring_size_ = 0;
  size_t block_max_ = 0;  // the frame's largest block
  // Not handed out yet: [wrapped_head_, wrapped_end_) at the ring's end if
  // wrapped_ (a record cut by the wrap), then [head_, tail_).
  size_t head_ = 0;
  size_t tail_ = 0;
  bool wrapped_ = false;
  size_t wrapped_head_ = 0;
  size_t wrapped_end_ = 0;
  uint64_t head_stream_ = 0;  // stream offset of the first byte not handed out
  uint64_t produced_ = 0;     // stream bytes decoded so far
  bool in_frame_ = false;     // a frame begun (ZSTD_decompressBegin) and not ended
  uint8_t header_[kMaxFrameHeader];  // the frame header's bytes while it is decoded
  size_t header_size_ = 0;
  // The input: the current COMPRESSED record's zstd bytes, [in_pos_, in_size_) left.
  const uint8_t* in_ = nullptr;
  size_t in_size_ = 0;
  size_t in_pos_ = 0;
  size_t staged_size_ = 0;  // bytes of the next piece in staged(), from earlier COMPRESSED records
  uint64_t current_offset_ = 0;  // file offset of the COMPRESSED record being read
  bool current_full_ = false;    // it holds as many zstd bytes as perf puts in one
  // The stream's bytes before carried_end_ came from earlier COMPRESSED
  // records, the first of which was at carried_offset_.
  uint64_t carried_end_ = 0;
  uint64_t carried_offset_ = 0;
  CompressionStats stats_;
};

}  // namespace pageblame::perf

#endif  // PAGEBLAME_PERF_RECORD_DECOMPRESSOR_H_
