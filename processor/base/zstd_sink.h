// ZstdSink: bytes appended to it leave as one zstd frame, compressed as they
// come (ZSTD_compressStream2), into another sink: a writer of a large
// compressed file (the recording's index) holds a piece of it, not the
// whole and a buffer of its compressed bound.
//
//   StringSink file(&bytes);
//   ZstdSink z(&file, /*level=*/3, body_size);   // the frame says body_size
//   z.Append(part1); z.Append(part2);            // body_size bytes in all
//   RETURN_IF_ERROR(z.Finish());                 // the frame's end
//
// The frame carries its content size (the `size` given: the bytes appended
// must come to exactly that, else Finish fails) and zstd's checksum of the
// content: a byte changed inside the frame otherwise decompresses,
// unnoticed, to other numbers that no check of what it holds can tell from
// true ones. An error (zstd's, or the sink's below) is kept in status();
// what is appended after it is dropped.
#ifndef PAGEBLAME_BASE_ZSTD_SINK_H_
#define PAGEBLAME_BASE_ZSTD_SINK_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "processor/base/byte_sink.h"

struct ZSTD_CCtx_s;

namespace pageblame {

class ZstdSink : public ByteSink {
 public:
  ZstdSink(ByteSink* out, int level, uint64_t size);
  ~ZstdSink() override;
  ZstdSink(const ZstdSink&) = delete;
  ZstdSink& operator=(const ZstdSink&) = delete;

  // Ends the frame: its last block and checksum go to the sink.
  absl::Status Finish();
  absl::Status status() const override;

 protected:
  void Take(std::string_view bytes) override;

 private:
  // `bytes` through the compressor with zstd's `end` directive.
  void Compress(std::string_view bytes, int end);

  ByteSink* out_;
  ZSTD_CCtx_s* cctx_;
  std::string buf_;  // ZSTD_CStreamOutSize(): one block's output
  absl::Status status_;
};

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_ZSTD_SINK_H_
