// IndexCodec: a TraceIndex as bytes and back — what the recording's index
// file (replay/recording_file.h) keeps so that a second command loads the
// replayed address timeline instead of replaying the trace again.
//
//   std::string bytes;
//   IndexCodec::Encode(idx, &bytes);
//   TraceIndex copy;
//   RETURN_IF_ERROR(IndexCodec::Decode(bytes, &copy));   // copy answers as idx did
//
// Either way a piece at a time if need be: Encode into a ByteSink (a zstd
// frame going to a file) holds about a PieceWriter::kPiece of the bytes,
// Decode from a StreamReader (a zstd frame read from a file) about a
// StreamReader::kPiece, so a large index is never whole in memory as bytes.
//
// Everything replay made is kept as it was (ids included: a decoded index
// numbers its calls, versions, stacks and strings as the original did, but
// for EncodeThinned's), so
// every answer from the copy is byte for byte the original's. Decode checks
// what it reads as every reader of a file does: each table's count against
// the bytes left, every id against the table it names, every range and
// time against its neighbours; a damaged or hostile file is an error naming
// what was wrong, never a crash or an index that answers wrongly.
#ifndef PAGEBLAME_INDEX_INDEX_CODEC_H_
#define PAGEBLAME_INDEX_INDEX_CODEC_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "processor/base/byte_sink.h"
#include "processor/base/stream_reader.h"
#include "processor/index/trace_index.h"

namespace pageblame::index {

class IndexCodec {
 public:
  static void Encode(const TraceIndex& idx, std::string* out);
  static void Encode(const TraceIndex& idx, ByteSink* out);
  // The same index thinned at `cutoff` (record --max-size, when the index
  // would pass its share of the disk): the versions that ended at or before
  // it (regions unmapped, replaced or changed by then) and the calls that
  // only they name are left out, ids renumbered in order; every version
  // alive after `cutoff` is kept whole, with its creating and committing
  // calls and stacks. A kept version whose `prev` was left out loses it
  // (index_thinning.h: the same rule TraceIndex::ThinBefore applies in memory).
  // Of the stack and string tables only what the kept calls, versions and
  // processes name is written (the stacks with their frames, the comms and
  // paths), renumbered in their old order: a stack keeps its ips, so every
  // answer from `cutoff` on is the same; the layout is the same, its tables
  // only shorter. stats().thinned_* say what calls and versions went (added
  // to an earlier thinning's). Decode() reads it back.
  static void EncodeThinned(const TraceIndex& idx, uint64_t cutoff, std::string* out);
  static void EncodeThinned(const TraceIndex& idx, uint64_t cutoff, ByteSink* out);
  // How many calls and versions EncodeThinned at `cutoff` keeps, counted
  // without encoding (a fraction of its time): for a caller that looks for
  // a cut that fits a size.
  static size_t KeptByThinning(const TraceIndex& idx, uint64_t cutoff);
  // Into a fresh TraceIndex (nothing added yet), finalized.
  static absl::Status Decode(std::string_view bytes, TraceIndex* idx);
  // The same from `r` to its end (or Limit()); a stream that fails or ends
  // before its declared size is DataLoss saying so, and where.
  static absl::Status Decode(StreamReader* r, TraceIndex* idx);
};

}  // namespace pageblame::index

#endif  // PAGEBLAME_INDEX_INDEX_CODEC_H_
