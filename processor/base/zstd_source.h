// ZstdSource: one zstd frame, decompressed a piece at a time
// (ZSTD_decompressStream) as a StreamReader's source: the frame's bytes come
// from another StreamReader (the file's), so a reader of a large compressed
// file (the recording's index) holds a piece of the file and a piece of
// what it decompresses to, never either whole.
//
//   StreamReader file(&fd_source, file_size);    // at the frame, Limit()ed to it
//   ZstdSource frame(&file);
//   StreamReader body(&frame, content_size);     // the frame's header says it
//   ... reads from body ...
//   RETURN_IF_ERROR(frame.Finish());              // checksum, nothing after it
//
// A frame that does not decompress, or whose bytes end before it does, is
// an error from Read (DataLoss saying which); zstd checks the content's
// checksum and size when it reaches the frame's end, which Finish() makes
// sure it did, with nothing after the frame.
#ifndef PAGEBLAME_BASE_ZSTD_SOURCE_H_
#define PAGEBLAME_BASE_ZSTD_SOURCE_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "processor/base/stream_reader.h"

struct ZSTD_DCtx_s;

namespace pageblame {

class ZstdSource : public StreamReader::Source {
 public:
  // `in` (at the frame's first byte; its end the frame's end) outlives this.
  explicit ZstdSource(StreamReader* in);
  ~ZstdSource() override;
  ZstdSource(const ZstdSource&) = delete;
  ZstdSource& operator=(const ZstdSource&) = delete;

  absl::StatusOr<size_t> Read(char* dst, size_t n) override;
  // Once what the frame holds was read: the frame ended there (its checksum
  // checked) and no byte of `in` follows it.
  absl::Status Finish();

 private:
  StreamReader* in_;
  ZSTD_DCtx_s* dctx_;
  const char* piece_ = nullptr;  // the compressed bytes taken from in_, not yet decompressed
  size_t piece_size_ = 0, piece_pos_ = 0;
  bool ended_ = false;  // zstd said the frame is whole
};

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_ZSTD_SOURCE_H_
