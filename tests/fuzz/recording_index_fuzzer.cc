// libFuzzer target: the body of a recording's index (TRACE.index, after its
// header and zstd frame: replay/recording_file.h) through
// RecordingFile::DecodeBody, then every region the decoded index holds
// checked as a replay's are (trace_invariants.h). The same body is read
// again as a load streams it (a StreamReader refilled a few bytes at a
// time, so that every value and string is cut across pieces somewhere):
// the same verdict, the same message. Seeds: bodies of bundled traces'
// indexes (corpus/recording_index, written by tests/fuzz/make_index_seeds.sh).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "processor/base/stream_reader.h"
#include "processor/replay/recording_file.h"
#include "tests/fuzz/trace_invariants.h"

namespace {

// The input handed out a few bytes at a time (1 to 16, as its length says).
class PieceSource : public pageblame::StreamReader::Source {
 public:
  explicit PieceSource(std::string_view bytes) : bytes_(bytes), piece_(1 + bytes.size() % 16) {}
  absl::StatusOr<size_t> Read(char* dst, size_t n) override {
    const size_t k = std::min({n, piece_, bytes_.size() - at_});
    std::memcpy(dst, bytes_.data() + at_, k);
    at_ += k;
    return k;
  }

 private:
  std::string_view bytes_;
  size_t piece_;
  size_t at_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pageblame::symbols::SymbolizerOptions symbols;
  // No file lookups may find a real binary: each names one only by a path
  // under this (missing) tree.
  symbols.symfs = "/nonexistent-fuzz-symfs";
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto trace = pageblame::replay::RecordingFile::DecodeBody(body, "fuzz", symbols);
  if (trace.ok()) pageblame::fuzz::CheckRegions((*trace)->index());
  PieceSource pieces(body);
  pageblame::StreamReader r(&pieces, size, 16);
  auto streamed = pageblame::replay::RecordingFile::DecodeBody(&r, "fuzz", symbols);
  // Read whole or in pieces, the same bytes are the same verdict.
  if (streamed.ok() != trace.ok() || streamed.status().message() != trace.status().message()) std::abort();
  return 0;
}
