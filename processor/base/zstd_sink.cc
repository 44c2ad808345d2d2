#include "processor/base/zstd_sink.h"

#include <zstd.h>

#include "absl/strings/str_cat.h"

namespace pageblame {
namespace {

absl::Status ZstdError(size_t code) {
  return absl::InternalError(absl::StrCat("zstd could not compress: ", ZSTD_getErrorName(code)));
}

}  // namespace

ZstdSink::ZstdSink(ByteSink* out, int level, uint64_t size)
    : out_(out), cctx_(ZSTD_createCCtx()), buf_(ZSTD_CStreamOutSize(), '\0') {
  if (cctx_ == nullptr) {
    status_ = absl::ResourceExhaustedError("zstd could not make a compressor");
    return;
  }
  for (const auto& [param, value] : {std::pair{ZSTD_c_compressionLevel, level}, {ZSTD_c_checksumFlag, 1}}) {
    const size_t r = ZSTD_CCtx_setParameter(cctx_, param, value);
    if (ZSTD_isError(r) && status_.ok()) status_ = ZstdError(r);
  }
  const size_t r = ZSTD_CCtx_setPledgedSrcSize(cctx_, size);
  if (ZSTD_isError(r) && status_.ok()) status_ = ZstdError(r);
}

ZstdSink::~ZstdSink() { ZSTD_freeCCtx(cctx_); }

absl::Status ZstdSink::status() const { return status_.ok() ? out_->status() : status_; }

void ZstdSink::Take(std::string_view bytes) { Compress(bytes, ZSTD_e_continue); }

absl::Status ZstdSink::Finish() {
  Compress({}, ZSTD_e_end);
  return status();
}

void ZstdSink::Compress(std::string_view bytes, int end) {
  if (!status_.ok()) return;
  const auto directive = static_cast<ZSTD_EndDirective>(end);
  ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
  while (true) {
    ZSTD_outBuffer out{buf_.data(), buf_.size(), 0};
    const size_t left = ZSTD_compressStream2(cctx_, &out, &in, directive);
    if (ZSTD_isError(left)) {
      status_ = ZstdError(left);
      return;
    }
    if (out.pos > 0) out_->Append(std::string_view(buf_.data(), out.pos));
    // ZSTD_e_end: done when zstd has nothing left to flush; else once it took all the input.
    if (directive == ZSTD_e_end ? left == 0 : in.pos == in.size) return;
  }
}

}  // namespace pageblame
