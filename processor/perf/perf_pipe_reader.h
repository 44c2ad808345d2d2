// PerfReader over a pipe-mode perf.data stream (`perf record -o -`): a
// 16-byte perf_pipe_file_header, then records only. The attrs, tracing data,
// features and build ids arrive as user-space records (HEADER_ATTR,
// HEADER_TRACING_DATA, HEADER_FEATURE, EVENT_UPDATE, HEADER_BUILD_ID), which
// this reader applies to info() instead of returning them.
// Each record is read into one reused, 8-byte-aligned 64 KiB buffer (a
// record's size is a u16), so memory does not grow with the stream; spans in
// a returned RawRecord are valid until the next Next(). A COMPRESSED record
// (perf record -z -o -) stays in that buffer while its records are handed
// out from the decompression buffer (record_decompressor.h).
// Internal to perf/; use PerfReader::Open("-") or Open(path).
#ifndef PAGEBLAME_PERF_PERF_PIPE_READER_H_
#define PAGEBLAME_PERF_PERF_PIPE_READER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "processor/perf/fd_input.h"
#include "processor/perf/perf_reader.h"

namespace pageblame::perf {

class PerfPipeReader : public PerfReader {
 public:
  // Reads the stream from stdin (not closed afterwards).
  static absl::StatusOr<std::unique_ptr<PerfReader>> OpenStdin();
  // Reads the stream from a file or FIFO at `path`.
  static absl::StatusOr<std::unique_ptr<PerfReader>> OpenPath(const std::string& path);

  absl::StatusOr<bool> Next(RawRecord* out) override;
  // Bytes of the stream consumed so far, header included.
  uint64_t bytes_read() const override { return in_.offset(); }

 private:
  PerfPipeReader(int fd, bool owned, std::string path);

  // Reads the pipe header and the header records up to the first record
  // Next() returns, which is kept as pending.
  absl::Status Start();
  // The next record Next() returns (after the pending one): reads records,
  // applying header records and decompressing COMPRESSED ones, whose
  // records are spans into the decompression buffer rather than record_.
  absl::StatusOr<bool> Advance(RawRecord* out);
  // Reads the next record into record_; false at a clean end of stream.
  absl::StatusOr<bool> ReadRecord(RawRecord* out);
  // Applies (or skips) a user-space record Next() does not return, reading
  // any payload that follows it in the stream.
  absl::Status ApplyUserRecord(const RawRecord& rec);
  absl::Status ReadTracingData(const RawRecord& rec);

  FdInput in_;
  std::vector<uint64_t> record_;  // the reused record buffer
  RawRecord pending_;
  bool has_pending_ = false;
};

}  // namespace pageblame::perf

#endif  // PAGEBLAME_PERF_PERF_PIPE_READER_H_
