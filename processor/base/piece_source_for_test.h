// Test-only: bytes handed to a StreamReader at most `piece` bytes a read,
// as a file or a decompressor may give them, so that every value a reader
// takes can be cut across two reads.
//
//   PieceSource src(bytes, 3);
//   StreamReader r(&src, bytes.size());
#ifndef PAGEBLAME_BASE_PIECE_SOURCE_FOR_TEST_H_
#define PAGEBLAME_BASE_PIECE_SOURCE_FOR_TEST_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "processor/base/stream_reader.h"

namespace pageblame {

class PieceSource : public StreamReader::Source {
 public:
  PieceSource(std::string bytes, size_t piece) : bytes_(std::move(bytes)), piece_(piece) {}
  absl::StatusOr<size_t> Read(char* dst, size_t n) override {
    furthest_ = std::max<uint64_t>(furthest_, at_ + n);
    const size_t k = std::min({n, piece_, bytes_.size() - at_});
    std::memcpy(dst, bytes_.data() + at_, k);
    at_ += k;
    return k;
  }
  // How far it was asked to go (a reader must not ask past what it needs).
  uint64_t furthest() const { return furthest_; }

 private:
  std::string bytes_;
  size_t piece_;
  size_t at_ = 0;
  uint64_t furthest_ = 0;
};

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_PIECE_SOURCE_FOR_TEST_H_
