// ByteSink: where a writer of a binary file (the recording's index) puts its
// bytes in order, a piece at a time, so that no writer needs the whole file
// in memory: a string (StringSink), a counter (CountingSink: how long the
// bytes would be, nothing kept), a zstd frame (zstd_sink.h), a file
// (atomic_file.h). PieceWriter gathers small puts (byte_writer.h) into
// pieces of about kPiece bytes for a sink.
//
//   CountingSink count;
//   PieceWriter w(&count);
//   for (const Row& row : rows) {
//     PutFixed(w.buf(), row.value);
//     w.Next();                 // hands the piece on once it is big enough
//   }
//   w.Flush();                  // count.written(): the bytes' length
//
// Appending never fails at once: a sink that can fail (a full disk) keeps
// its first error in status() and drops what follows; its owner checks it
// once at the end.
#ifndef PAGEBLAME_BASE_BYTE_SINK_H_
#define PAGEBLAME_BASE_BYTE_SINK_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace pageblame {

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  void Append(std::string_view bytes) {
    written_ += bytes.size();
    Take(bytes);
  }
  // Bytes appended so far.
  uint64_t written() const { return written_; }
  // The first error taking them met (OK for a sink that cannot fail).
  virtual absl::Status status() const { return absl::OkStatus(); }

 protected:
  virtual void Take(std::string_view bytes) = 0;

 private:
  uint64_t written_ = 0;
};

// A sink whose bytes stay addressable, so that a field written before its
// value was known (a length) is written again in place.
class PatchableSink : public ByteSink {
 public:
  // `bytes` over what was appended at [at, at + bytes.size()) (inside what
  // was appended).
  virtual void Overwrite(uint64_t at, std::string_view bytes) = 0;
};

// Into a string.
class StringSink : public PatchableSink {
 public:
  explicit StringSink(std::string* out) : out_(out) {}
  void Overwrite(uint64_t at, std::string_view bytes) override {
    if (at <= out_->size() && bytes.size() <= out_->size() - at) out_->replace(at, bytes.size(), bytes);
  }

 protected:
  void Take(std::string_view bytes) override { out_->append(bytes.data(), bytes.size()); }

 private:
  std::string* out_;
};

// Keeps nothing: written() is the length the bytes would take.
class CountingSink : public ByteSink {
 protected:
  void Take(std::string_view) override {}
};

// Puts (byte_writer.h) into buf(), handed to a sink in pieces.
class PieceWriter {
 public:
  static constexpr size_t kPiece = size_t{1} << 20;
  explicit PieceWriter(ByteSink* sink) : sink_(sink) {}
  PieceWriter(const PieceWriter&) = delete;
  PieceWriter& operator=(const PieceWriter&) = delete;
  // What the pieces still held are given to the sink.
  ~PieceWriter() { Flush(); }

  std::string* buf() { return &buf_; }
  // After each entry: the piece goes once it passes kPiece.
  void Next() {
    if (buf_.size() >= kPiece) Flush();
  }
  void Flush() {
    if (buf_.empty()) return;
    sink_->Append(buf_);
    buf_.clear();
  }

 private:
  ByteSink* sink_;
  std::string buf_;
};

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_BYTE_SINK_H_
