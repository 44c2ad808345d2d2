// StreamReader: ByteReader's bounds-checked reads (byte_reader.h) over bytes
// that arrive in pieces from a Source (a file, a zstd frame: zstd_source.h)
// instead of lying whole in memory, so that a reader of a large file (the
// recording's index) holds a piece of it at a time. It can also read a
// buffer that is there whole (the same code for both).
//
//   ZstdSource frame(&file_reader);                      // any Source
//   StreamReader r(&frame, declared_size);
//   uint64_t n = 0;
//   if (!r.Read(&n) || n > r.remaining() / kMinEntry) return Damaged("count");
//   std::string_view name;
//   if (!r.ReadString(&name)) return Damaged("name");   // valid until the next read
//
// remaining() is what the stream declares is left (its size as the file's
// header says), not what has arrived: a count is checked against it before
// anything is allocated for it, as with ByteReader. A read fails (false)
// when it would pass the declared end, or when the source ends before it
// (then status() says at which byte) or fails (status() is its error).
// Memory: one piece (kPiece), more only while one read needs more bytes
// than a piece (a long string), and never more than twice what the source
// has actually given: a declared size alone allocates nothing.
//
// A view a read returns lasts until the next read (a refill moves the bytes).
// Limit() narrows the stream to a part of it (a table of known length).
// Values are read in host byte order, as ByteReader reads them.
#ifndef PAGEBLAME_BASE_STREAM_READER_H_
#define PAGEBLAME_BASE_STREAM_READER_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace pageblame {

class StreamReader {
 public:
  static constexpr size_t kPiece = size_t{1} << 20;

  // Where the bytes come from, in order.
  class Source {
   public:
    virtual ~Source() = default;
    // Up to `n` (> 0) bytes into `dst`: how many (0: the source ended), or
    // an error (a read that failed, a frame that does not decompress).
    virtual absl::StatusOr<size_t> Read(char* dst, size_t n) = 0;
  };

  // All of `bytes` (which outlive the reader), read in place.
  explicit StreamReader(std::string_view bytes);
  // `size` bytes from `source` (which outlives the reader), pulled `piece`
  // bytes at a time; never more than `size` are asked of it.
  StreamReader(Source* source, uint64_t size, size_t piece = kPiece);
  StreamReader(const StreamReader&) = delete;
  StreamReader& operator=(const StreamReader&) = delete;

  // Bytes read so far from the start of the stream.
  uint64_t pos() const { return base_ + head_; }
  // Bytes left before the end (or the Limit()).
  uint64_t remaining() const { return end_ - pos(); }
  bool empty() const { return pos() == end_; }
  // Why the last read that failed did, when the source failed or ended
  // early (OK when a read would only pass the declared end).
  const absl::Status& status() const { return status_; }

  // A trivially copyable value (unaligned-safe). False if it does not fit.
  template <typename T>
  bool Read(T* out) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (!Have(sizeof(T))) return false;
    std::memcpy(out, data_ + head_, sizeof(T));
    head_ += sizeof(T);
    return true;
  }
  // The next `n` bytes, advancing past them (the view lasts until the next read).
  bool ReadView(size_t n, std::string_view* out);
  // Up to `max` (> 0) of the next bytes, at least one unless empty (false
  // then): for a reader that passes the stream on (a zstd frame's bytes).
  bool ReadSome(size_t max, std::string_view* out);
  // The next `n` bytes without advancing (as ReadView).
  bool Peek(size_t n, std::string_view* out);
  // An unsigned LEB128 varint of at most 10 bytes (ByteReader::ReadVarint).
  bool ReadVarint(uint64_t* out);
  // A varint length, then that many bytes (PutString in byte_writer.h).
  bool ReadString(std::string_view* out);
  bool ReadString(std::string* out);

  // Reads stop `n` (<= remaining()) bytes from here until Unlimit(the
  // value returned) restores the end there was.
  uint64_t Limit(uint64_t n);
  void Unlimit(uint64_t end) { end_ = end; }

 private:
  // At least `n` bytes before the end are in the window (pulled if need be).
  bool Have(size_t n) {
    if (n > remaining()) return false;
    return tail_ - head_ >= n || Pull(n);
  }
  bool Pull(size_t n);
  bool Grow();

  Source* source_ = nullptr;
  uint64_t size_ = 0;             // the declared size of the whole stream
  uint64_t end_ = 0;              // where reads stop (size_, or a Limit)
  uint64_t base_ = 0;             // the stream position of data_[0]
  const char* data_ = nullptr;    // the window [head_, tail_) of the stream
  size_t head_ = 0, tail_ = 0;
  std::unique_ptr<char[]> buf_;   // data_ when reading a source
  size_t capacity_ = 0;
  absl::Status status_;
};

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_STREAM_READER_H_
