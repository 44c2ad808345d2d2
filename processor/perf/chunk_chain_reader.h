// A recording made of chunks, read as one trace: `perf record
// --switch-output=SIZE -o TRACE` closes its output every SIZE bytes and goes
// on in a new file, TRACE.<YYYYmmddHHMMSScc> (each file a whole perf.data
// with its own header). Next() hands out the records of each chunk in turn,
// so that everything above sees exactly the records one perf.data would have
// held for the same events.
//
//   ChunkChainReader::Chunks next = ...;  // the chunks in time order, "" after the last
//   ASSIGN_OR_RETURN(std::unique_ptr<PerfReader> r, ChunkChainReader::Open(next, nullptr));
//   while (true) { ASSIGN_OR_RETURN(bool more, r->Next(&rec)); if (!more) break; ... }
//
// What perf 6.1 writes into each later chunk (docs/recording-chunks.md),
// and what is done about it:
//   - its own header, attrs and features: the first chunk's are the
//     recording's (info()); a later chunk whose events differ (type, config,
//     sample_type, ids) is refused: it is not a chunk of this recording;
//   - a preamble perf synthesizes again (the kernel's MMAP, a COMM and the
//     executable MMAP2s of each recorded process, time 0) up to a
//     FINISHED_INIT: skipped, it only repeats what the earlier chunks said;
//     (perf before 5.19 writes no FINISHED_INIT: then what comes before the
//     chunk's first sample is skipped);
//   - with -z, COMPRESSED records that continue the earlier chunk's zstd
//     stream (PerfReader::ContinueStreamOf): a later chunk cannot be read
//     without every chunk before it;
//   - a syscall whose enter and exit fall in different chunks: nothing to
//     do, the records come out in one stream as they would from one file.
// The chunks come from `next`, which may block (the recorder waits for perf
// to close its next chunk); `done` (may be null) is told each chunk whose
// records have all been handed out (the recorder folds and deletes it).
// Records cannot be read again (CanReadAgain is false): a chunk may be gone.
#ifndef PAGEBLAME_PERF_CHUNK_CHAIN_READER_H_
#define PAGEBLAME_PERF_CHUNK_CHAIN_READER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "processor/perf/perf_reader.h"

namespace pageblame::perf {

class ChunkChainReader : public PerfReader {
 public:
  // The next chunk's path, "" when there are no more.
  using Chunks = std::function<absl::StatusOr<std::string>()>;
  using ChunkDone = std::function<void(const std::string& path)>;

  // Opens the first chunk (NotFound if there is none).
  static absl::StatusOr<std::unique_ptr<PerfReader>> Open(Chunks next, ChunkDone done);
  // The chunks of a list, in its order.
  static absl::StatusOr<std::unique_ptr<PerfReader>> OpenFiles(const std::vector<std::string>& paths);

  absl::StatusOr<bool> Next(RawRecord* out) override;
  uint64_t bytes_read() const override { return done_bytes_ + current_->bytes_read(); }

  // Chunks opened so far.
  uint64_t chunks() const { return chunks_; }

 private:
  ChunkChainReader(Chunks next, ChunkDone done) : next_(std::move(next)), done_(std::move(done)) {}
  // Goes on to the next chunk; false when there is none.
  absl::StatusOr<bool> OpenNext();
  // An error unless `later` records the same events as the first chunk.
  absl::Status CheckSameEvents(const PerfReader& later, const std::string& path) const;

  Chunks next_;
  ChunkDone done_;
  std::unique_ptr<PerfReader> current_;
  std::string current_path_;
  std::string first_path_;
  uint64_t done_bytes_ = 0;
  uint64_t chunks_ = 0;
  // In a later chunk, before its FINISHED_INIT (or first sample): the
  // records perf synthesized again.
  bool in_preamble_ = false;
};

}  // namespace pageblame::perf

#endif  // PAGEBLAME_PERF_CHUNK_CHAIN_READER_H_
