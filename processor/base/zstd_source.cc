#include "processor/base/zstd_source.h"

#include <zstd.h>

#include "absl/strings/str_cat.h"

namespace pageblame {

ZstdSource::ZstdSource(StreamReader* in) : in_(in), dctx_(ZSTD_createDCtx()) {}

ZstdSource::~ZstdSource() { ZSTD_freeDCtx(dctx_); }

absl::StatusOr<size_t> ZstdSource::Read(char* dst, size_t n) {
  if (dctx_ == nullptr) return absl::ResourceExhaustedError("zstd could not make a decompressor");
  while (!ended_) {
    if (piece_pos_ == piece_size_) {
      std::string_view piece;
      if (!in_->ReadSome(StreamReader::kPiece, &piece)) {
        if (!in_->status().ok()) return in_->status();
        return absl::DataLossError(absl::StrCat("the zstd frame is cut (", in_->pos(), " bytes in)"));
      }
      piece_ = piece.data();
      piece_size_ = piece.size();
      piece_pos_ = 0;
    }
    ZSTD_inBuffer in{piece_, piece_size_, piece_pos_};
    ZSTD_outBuffer out{dst, n, 0};
    const size_t left = ZSTD_decompressStream(dctx_, &out, &in);
    if (ZSTD_isError(left)) {
      return absl::DataLossError(absl::StrCat("the zstd frame does not decompress: ", ZSTD_getErrorName(left)));
    }
    piece_pos_ = in.pos;
    ended_ = left == 0;  // the frame is whole, its checksum checked
    if (out.pos > 0) return out.pos;
  }
  return 0;
}

absl::Status ZstdSource::Finish() {
  char more = 0;
  absl::StatusOr<size_t> got = ended_ ? size_t{0} : Read(&more, 1);
  if (!got.ok()) return got.status();
  if (*got != 0) return absl::DataLossError("the zstd frame holds more than its size says");
  if (piece_pos_ != piece_size_ || !in_->empty()) return absl::DataLossError("bytes follow the zstd frame");
  return absl::OkStatus();
}

}  // namespace pageblame
