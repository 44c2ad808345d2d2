#include "processor/base/stream_reader.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "processor/base/varint.h"

namespace pageblame {

StreamReader::StreamReader(std::string_view bytes)
    : size_(bytes.size()), end_(bytes.size()), data_(bytes.data()), tail_(bytes.size()) {}

StreamReader::StreamReader(Source* source, uint64_t size, size_t piece)
    : source_(source), size_(size), end_(size), capacity_(std::max<size_t>(piece, 16)) {}

bool StreamReader::ReadView(size_t n, std::string_view* out) {
  if (!Have(n)) return false;
  *out = std::string_view(data_ + head_, n);
  head_ += n;
  return true;
}

bool StreamReader::ReadSome(size_t max, std::string_view* out) {
  if (max == 0 || !Have(1)) return false;
  const size_t n = static_cast<size_t>(std::min<uint64_t>({max, tail_ - head_, remaining()}));
  *out = std::string_view(data_ + head_, n);
  head_ += n;
  return true;
}

bool StreamReader::Peek(size_t n, std::string_view* out) {
  if (!Have(n)) return false;
  *out = std::string_view(data_ + head_, n);
  return true;
}

bool StreamReader::ReadVarint(uint64_t* out) {
  return ReadVarintWith([this](uint8_t* b) { return Read(b); }, out);
}

bool StreamReader::ReadString(std::string_view* out) {
  uint64_t n = 0;
  return ReadVarint(&n) && n <= remaining() && ReadView(static_cast<size_t>(n), out);
}

bool StreamReader::ReadString(std::string* out) {
  std::string_view v;
  if (!ReadString(&v)) return false;
  out->assign(v.data(), v.size());
  return true;
}

uint64_t StreamReader::Limit(uint64_t n) {
  const uint64_t old = end_;
  end_ = pos() + std::min(n, remaining());
  return old;
}

// The unread bytes moved to the front, then pieces pulled after them until
// `n` are there. The buffer grows only when it is full of bytes that came.
bool StreamReader::Pull(size_t n) {
  if (source_ == nullptr || !status_.ok()) return false;
  if (buf_ == nullptr) {
    buf_ = std::make_unique<char[]>(capacity_);
    data_ = buf_.get();
  }
  if (head_ > 0) {
    std::memmove(buf_.get(), buf_.get() + head_, tail_ - head_);
    base_ += head_;
    tail_ -= head_;
    head_ = 0;
  }
  while (tail_ < n) {
    if (tail_ == capacity_ && !Grow()) return false;
    const uint64_t pulled = base_ + tail_;
    const size_t want = static_cast<size_t>(std::min<uint64_t>(capacity_ - tail_, size_ - pulled));
    absl::StatusOr<size_t> got = want > 0 ? source_->Read(buf_.get() + tail_, want) : size_t{0};
    if (!got.ok()) {
      status_ = got.status();
      return false;
    }
    if (*got == 0) {
      status_ =
          absl::DataLossError(absl::StrCat("the stream ends at byte ", pulled, " of the ", size_, " it declares"));
      return false;
    }
    if (*got > want) {
      status_ = absl::InternalError(absl::StrCat("the stream's source gave ", *got, " bytes for ", want));
      return false;
    }
    tail_ += *got;
  }
  return true;
}

bool StreamReader::Grow() {
  if (capacity_ > SIZE_MAX / 2) return false;
  auto bigger = std::make_unique<char[]>(capacity_ * 2);
  std::memcpy(bigger.get(), buf_.get(), tail_);
  buf_ = std::move(bigger);
  data_ = buf_.get();
  capacity_ *= 2;
  return true;
}

}  // namespace pageblame
