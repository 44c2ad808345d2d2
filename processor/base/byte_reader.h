// Bounds-checked reads over a byte span. Every binary read in pageblame goes
// through this class (or StreamReader, stream_reader.h, the same reads over
// bytes that arrive in pieces): a read past the end fails (returns false /
// an error) instead of touching memory outside the span, as perf's header.c
// does by checking sizes before each access.
//
//   ByteReader r(record_bytes);
//   uint32_t pid, tid;
//   if (!r.Read(&pid) || !r.Read(&tid)) return Truncated("sample");
//
// Values are read in host byte order (pageblame accepts native-endian files
// only and says so clearly for the other order).
#ifndef PAGEBLAME_BASE_BYTE_READER_H_
#define PAGEBLAME_BASE_BYTE_READER_H_

#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "absl/types/span.h"
#include "processor/base/varint.h"

namespace pageblame {

class ByteReader {
 public:
  explicit ByteReader(absl::Span<const uint8_t> data) : data_(data) {}
  ByteReader(const void* data, size_t size)
      : data_(static_cast<const uint8_t*>(data), size) {}

  size_t pos() const { return pos_; }
  size_t size() const { return data_.size(); }
  size_t remaining() const { return data_.size() - pos_; }
  bool empty() const { return pos_ == data_.size(); }

  // Reads a trivially copyable value (unaligned-safe). False if it does not fit.
  template <typename T>
  bool Read(T* out) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (remaining() < sizeof(T)) return false;
    std::memcpy(out, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }

  // A view of the next `n` bytes, advancing past them. False if fewer remain.
  bool ReadSpan(size_t n, absl::Span<const uint8_t>* out) {
    if (remaining() < n) return false;
    *out = data_.subspan(pos_, n);
    pos_ += n;
    return true;
  }

  // A NUL-terminated string inside the next `n` bytes (perf pads strings to 8
  // bytes); the view stops at the first NUL or at `n` bytes.
  bool ReadFixedString(size_t n, std::string_view* out) {
    absl::Span<const uint8_t> s;
    if (!ReadSpan(n, &s)) return false;
    const void* nul = std::memchr(s.data(), 0, s.size());
    size_t len = nul ? static_cast<const uint8_t*>(nul) - s.data() : s.size();
    *out = std::string_view(reinterpret_cast<const char*>(s.data()), len);
    return true;
  }

  // A NUL-terminated string of unknown length (tracing data). False if no NUL.
  bool ReadCString(std::string_view* out) {
    const void* nul = std::memchr(data_.data() + pos_, 0, remaining());
    if (nul == nullptr) return false;
    size_t len = static_cast<const uint8_t*>(nul) - (data_.data() + pos_);
    *out = std::string_view(reinterpret_cast<const char*>(data_.data() + pos_), len);
    pos_ += len + 1;
    return true;
  }

  // An unsigned LEB128 varint of at most 10 bytes (64 bits). False if it runs
  // past the end or past 64 bits.
  bool ReadVarint(uint64_t* out) {
    return ReadVarintWith([this](uint8_t* b) { return Read(b); }, out);
  }

  // A varint length, then that many bytes (ByteWriter's PutString). False
  // if either runs past the end.
  bool ReadString(std::string_view* out) {
    uint64_t n = 0;
    absl::Span<const uint8_t> s;
    if (!ReadVarint(&n) || n > remaining() || !ReadSpan(static_cast<size_t>(n), &s)) return false;
    *out = std::string_view(reinterpret_cast<const char*>(s.data()), s.size());
    return true;
  }

  bool Skip(size_t n) {
    if (remaining() < n) return false;
    pos_ += n;
    return true;
  }

  bool Seek(size_t pos) {
    if (pos > data_.size()) return false;
    pos_ = pos;
    return true;
  }

  absl::Span<const uint8_t> rest() const { return data_.subspan(pos_); }

 private:
  absl::Span<const uint8_t> data_;
  size_t pos_ = 0;
};

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_BYTE_READER_H_
