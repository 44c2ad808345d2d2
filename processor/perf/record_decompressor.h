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
// Memory: one fixed 256 KiB buffer and the zstd context (whose window is
// what perf's compression level asked for: 512 KiB at perf's default level
// 1, 128 MiB at most: kMaxWindowLog, checked by zstd when it reads a frame's
// header, before allocating); neither grows with the trace.
//
// zstd skippable frames are refused: perf writes none, and zstd skips their
// stated length (up to 4 GiB) on into the following COMPRESSED records, so a
// corrupt one made the rest of a trace vanish without an error. Records are
// handed out as spans into the buffer (8-byte aligned: perf's records are
// multiples of 8), valid until the next call; each byte is decompressed
// once and copied at most once more (the tail of a record cut by the end of
// the buffer moves to its front).
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
  static constexpr size_t kBufferSize = 256 << 10;
  // 2^27 = 128 MiB, zstd's own default cap, which perf's highest level
  // (22) reaches; a frame asking for more is an error.
  static constexpr int kMaxWindowLog = 27;
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
  // Decompresses more of the current input behind the bytes left in the
  // buffer, first moving those to its front. False if there is nothing more
  // to decompress from what was fed.
  absl::StatusOr<bool> Refill();
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
  struct Context;  // the zstd stream, made at the first Feed()
  std::unique_ptr<Context> zstd_;
  std::unique_ptr<uint64_t[]> buffer_;  // kBufferSize bytes, 8-byte aligned
  size_t head_ = 0;                     // [head_, tail_): decompressed, not handed out
  size_t tail_ = 0;
  uint64_t buffer_stream_offset_ = 0;  // stream offset of buffer_[0]
  // The input: the current COMPRESSED record's zstd bytes, [in_pos_, in_size_) left.
  const uint8_t* in_ = nullptr;
  size_t in_size_ = 0;
  size_t in_pos_ = 0;
  bool output_pending_ = false;  // the last call filled the buffer: zstd may hold more
  bool at_frame_start_ = true;   // the next zstd byte starts a frame
  uint64_t current_offset_ = 0;  // file offset of the COMPRESSED record being read
  bool current_full_ = false;    // it holds as many zstd bytes as perf puts in one
  // buffer_[0, carried_end_) came from earlier COMPRESSED records, the first
  // of which was at carried_offset_.
  size_t carried_end_ = 0;
  uint64_t carried_offset_ = 0;
  CompressionStats stats_;
};

}  // namespace pageblame::perf

#endif  // PAGEBLAME_PERF_RECORD_DECOMPRESSOR_H_
