// Reads a perf.data file (file mode "PERFILE2", or pipe mode as written by
// `perf record -o -`) record by record.
//
//   ASSIGN_OR_RETURN(auto reader, PerfReader::Open("trace.data"));
//   for (const EventAttr& a : reader->info().attrs) ...
//   RawRecord rec;
//   while (true) {
//     ASSIGN_OR_RETURN(bool more, reader->Next(&rec));
//     if (!more) break;
//     if (rec.type == kRecordSample) {
//       Sample s;
//       RETURN_IF_ERROR(reader->ParseSample(rec, &s));
//     }
//   }
//
// File mode reads the header from an mmap of the file and the data section
// through a FileWindow (records are spans into it, not copies). Pipe mode (path "-" for
// stdin, or a file whose magic says pipe) reads record by record into a reused
// buffer, so memory does not grow with the trace. In pipe mode, the header
// records (ATTR, TRACING_DATA, EVENT_UPDATE, FEATURE, BUILD_ID) are consumed
// by Open() up to the first data record, so info() is complete after Open();
// such records seen later are still applied. Next() never returns user-space
// header records (type 64..., except FINISHED_ROUND / FINISHED_INIT, which
// replay uses for ordering); unknown kernel records are returned as they are
// for the caller to count and skip. Every read is bounds-checked; a record
// whose size is smaller than its header or runs past the data section is an
// error naming the offset.
//
// Details a consumer may trip over:
// - RawRecord::offset is the byte offset in the file, or in the stream
//   including its 16-byte header (`perf report -D` prints pipe offsets 16
//   lower).
// - A pipe-mode HEADER_ATTR arriving after Open() (perf does not write those,
//   perf inject might) appends to info().attrs, which may move the EventAttr
//   objects; attrs never change in file mode.
// - Pipe-mode tracing data keeps perf's zero padding to 8 bytes.
// - Compressed traces (perf record -z, PERF_RECORD_COMPRESSED and
//   COMPRESSED2) are read directly, in file and pipe mode: Next() returns
//   the records decompressed from each COMPRESSED record in its place, as
//   spans into a 256 KiB decompression buffer (record_decompressor.h); their
//   RawRecord::offset is the COMPRESSED record's, decompressed_offset the
//   place in the decompressed stream. Memory stays bounded (no whole-trace
//   decompression). Other-endian files are refused with a one-line error.
// - Cost: in file mode Next() and the Parse* methods do no allocation and no
//   copying (~70 ns per record, >2 GB/s warm); pipe mode copies each record
//   once into a 64 KiB buffer; compressed data costs its decompression
//   (each byte decompressed once into the buffer, no further copy). The
//   Parse* methods share a scratch buffer, so one reader must not be parsed
//   from two threads at once.
#ifndef PAGEBLAME_PERF_PERF_READER_H_
#define PAGEBLAME_PERF_PERF_READER_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "processor/base/byte_reader.h"
#include "processor/perf/perf_format.h"
#include "processor/perf/perf_records.h"
#include "processor/perf/record_decompressor.h"

namespace pageblame::perf {

class PerfReader {
 public:
  virtual ~PerfReader() = default;

  // Opens `path` ("-" = stdin; a FIFO or a saved pipe-mode stream also
  // work). Errors: missing file, not a perf file (magic), other-endian file,
  // truncated header, attrs or feature sections, unfinalized header (data
  // size 0), a file-mode perf.data on stdin; all one line naming the path
  // (and the offset, where the bytes are at fault).
  //
  // Error codes, here and from Next() and the Parse* methods; every one of
  // them means bad input (the CLI's exit status 1), none is InvalidArgument,
  // which is kept for bad usage (exit status 2):
  //   NotFound            the file does not exist.
  //   PermissionDenied,   the file exists but cannot be read (mode, I/O
  //   Unavailable         error).
  //   FailedPrecondition  the path names no trace (a directory), or a
  //                       file-mode perf.data arrives as a stream.
  //   DataLoss            the bytes are not a readable trace: empty, too
  //                       short for a header, bad magic, truncated, a corrupt
  //                       header, section or record (with its offset).
  //   Unimplemented       a perf.data we do not read: the other byte order,
  //                       PERFFILE v1, a compression other than zstd.
  // (The Parse* methods return InvalidArgument for a record of a type they do
  // not parse: the caller's mistake, not the trace's.)
  static absl::StatusOr<std::unique_ptr<PerfReader>> Open(const std::string& path);

  // For a recording made of chunks (chunk_chain_reader.h): `perf record -z
  // --switch-output` goes on compressing into the next file with the same
  // zstd stream, so a later chunk's COMPRESSED records continue the
  // earlier chunk's and cannot be decompressed alone. Takes over the stream
  // `earlier` read to its end (nothing if it had no compressed data).
  void ContinueStreamOf(PerfReader* earlier);

  const FileInfo& info() const { return info_; }

  // The next record in file order. Returns false at the end of the data.
  virtual absl::StatusOr<bool> Next(RawRecord* out) = 0;

  // Bytes consumed so far, for progress reporting: of the data section in
  // file mode (reaches info().data_size at the end), of the stream in pipe
  // mode.
  virtual uint64_t bytes_read() const = 0;

  // Whether ReadAgain can read `rec` again: not from a pipe, not a record
  // decompressed from PERF_RECORD_COMPRESSED data.
  virtual bool CanReadAgain(const RawRecord& rec) const { return false; }
  // Reads again a record Next() returned earlier (one CanReadAgain accepts)
  // into `buffer` (out's bytes point there): lets a caller that must hold a
  // record for later keep its place instead of its bytes. False if it cannot
  // be read again; an error if the bytes there are no longer that record.
  virtual absl::StatusOr<bool> ReadAgain(const RawRecord& seen, std::vector<uint8_t>* buffer,
                                         RawRecord* out) const {
    return false;
  }

  // Parsers for the records replay uses. They fail (never crash) on records
  // too short for what their attr's sample_type says they contain, on a
  // sample id no attr has, and on a record of the wrong type
  // (InvalidArgument). A sample is mapped to its attr as perf's
  // evlist__event2evsel() does: the only attr, else by PERF_SAMPLE_IDENTIFIER
  // or PERF_SAMPLE_ID (id 0, which perf's synthesized records carry, means
  // the first attr). The sample_id trailer of the other records is parsed
  // with the layout of the attr its id names.
  absl::Status ParseSample(const RawRecord& rec, Sample* out) const;
  // The same in two steps, so a caller can skip samples of events it does
  // not want before parsing them: SampleAttr() reads only the sample's id.
  absl::StatusOr<const EventAttr*> SampleAttr(const RawRecord& rec) const;
  // SampleAttr's common case, inline (a loader asks for every sample, and
  // most are skipped on the answer): a sample whose id is where every event
  // puts it, an id seen before. nullptr where that does not apply, and then
  // SampleAttr has the answer or the error.
  const EventAttr* KnownSampleAttr(const RawRecord& rec) const {
    if (rec.type != kRecordSample || sample_id_pos_ < 0) return nullptr;
    ByteReader r(rec.bytes);
    uint64_t id;
    if (!r.Seek(format::kEventHeaderSize + 8 * static_cast<size_t>(sample_id_pos_)) ||
        !r.Read(&id)) {
      return nullptr;
    }
    const IdCacheEntry& c = id_cache_[id % kIdCacheSize];
    return c.attr != nullptr && c.id == id ? c.attr : nullptr;
  }
  absl::Status ParseSample(const RawRecord& rec, const EventAttr& attr, Sample* out) const;
  absl::Status ParseComm(const RawRecord& rec, CommRecord* out) const;
  absl::Status ParseTask(const RawRecord& rec, TaskRecord* out) const;  // FORK/EXIT
  absl::Status ParseMmap(const RawRecord& rec, MmapRecord* out) const;  // MMAP/MMAP2
  absl::Status ParseLost(const RawRecord& rec, LostRecord* out) const;  // LOST/LOST_SAMPLES

  // The attr a sample id belongs to (nullptr if unknown).
  const EventAttr* AttrForId(uint64_t id) const;

  // What the trace's COMPRESSED records held so far; nullptr if it had none
  // (yet).
  const CompressionStats* compression_stats() const {
    return decompressor_ ? &decompressor_->stats() : nullptr;
  }

  // After Next() returned false: why the compressed data ended inside a
  // record (the file, offsets, the record's type and size), or OK. perf's
  // compressor can keep the last bytes of a recording (it ignores what
  // ZSTD_flushStream leaves when a COMPRESSED record is full), so a
  // recording perf script reads whole can end this way: the records before
  // are good, the cut one is lost, and the load warns instead of failing.
  const absl::Status& cut_at_end() const { return cut_at_end_; }

 protected:
  PerfReader() = default;

  // Rebuilds the id -> attr index and the id positions after info_.attrs
  // changed (Open, or a late pipe-mode HEADER_ATTR).
  void IndexAttrs();
  // "PATH: record at offset 0x..: WHAT" as a DataLossError; for a record
  // from compressed data, its offset in the decompressed data and the
  // COMPRESSED record's.
  absl::Status RecordError(uint64_t offset, absl::string_view what) const;
  absl::Status RecordError(const RawRecord& rec, absl::string_view what) const;

  // Compressed data, shared by both modes. Decompress() takes a COMPRESSED
  // or COMPRESSED2 record (its bytes valid until NextDecompressed() returns
  // false) and sets decompressing_; NextDecompressed() hands out its records
  // and clears decompressing_ when they are used up; FinishDecompressing()
  // at the end of the data notes a record cut short there (cut_at_end).
  absl::Status Decompress(const RawRecord& rec);
  absl::StatusOr<bool> NextDecompressed(RawRecord* out);
  void FinishDecompressing();
  bool decompressing_ = false;
  // A reader of other readers (ChunkChainReader) says what its last one cut.
  void set_cut_at_end(absl::Status s) { cut_at_end_ = std::move(s); }

  FileInfo info_;
  std::string path_;  // for error messages

 private:
  // The attr a sideband record belongs to, mirroring perf's
  // evlist__event2evsel() like SampleAttr(); nullptr for a record without a
  // sample_id trailer.
  absl::StatusOr<const EventAttr*> AttrForSideband(const RawRecord& rec) const;
  // Parses the sample_id trailer of a sideband record whose own fields take
  // `fixed_size` bytes; sets *trailer_size to the trailer's length.
  absl::Status ParseSampleId(const RawRecord& rec, size_t fixed_size, SampleId* out,
                             size_t* trailer_size) const;
  absl::Status CheckType(const RawRecord& rec, uint32_t a, uint32_t b, const char* what) const;

  absl::flat_hash_map<uint64_t, uint32_t> attr_by_id_;  // id -> index in info_.attrs
  struct IdCacheEntry {
    uint64_t id = 0;
    const EventAttr* attr = nullptr;
  };
  static constexpr size_t kIdCacheSize = 64;
  mutable std::array<IdCacheEntry, kIdCacheSize> id_cache_{};  // see AttrForId
  int sample_id_pos_ = -1;   // u64 index of the id in a sample body, -1: unknown
  int trailer_id_pos_ = -1;  // u64 index of the id from a record's end, -1: unknown
  bool sample_id_all_ = false;
  // Holds a misaligned callchain copied by ParseSample (rare; see
  // sample_parser.h). Makes the Parse* methods non-thread-safe.
  mutable std::vector<uint64_t> callchain_scratch_;
  std::unique_ptr<RecordDecompressor> decompressor_;  // made at the first COMPRESSED record
  absl::Status cut_at_end_;
};

}  // namespace pageblame::perf

#endif  // PAGEBLAME_PERF_PERF_READER_H_
