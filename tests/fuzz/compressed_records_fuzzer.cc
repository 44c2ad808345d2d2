// libFuzzer target: PERF_RECORD_COMPRESSED / COMPRESSED2 records (perf
// record -z) through PerfReader on a pipe-mode stream: the zstd stream
// across records and the records cut by their ends (record_decompressor.h).
// Mutating whole traces (perf_file, perf_pipe) rarely gives valid zstd;
// here the harness writes the stream header and the COMPRESSED records, and
// the input is either the zstd data or what it decompresses to:
//
//   byte 0    flags: kRawZstd   the payload is zstd data, cut into records
//                               at the cuts; otherwise it is the records'
//                               decompressed content, compressed here with
//                               a flush at each cut (as perf flushes at the
//                               end of each COMPRESSED record)
//                    kCompressed2  COMPRESSED2 records, else COMPRESSED
//                    kFeature   a HEADER_FEATURE(COMPRESSED) record first
//                    kEndFrame  (content) the zstd frame is ended at the end
//   byte 1    N, the number of cuts (at most 16)
//   2N bytes  the cuts, u16 little-endian: bytes per piece, used in turn
//   the rest  the payload
//
// With decompressed content the answer is known: exactly the records a
// plain walk over the content finds (kernel records, FINISHED_ROUND and
// FINISHED_INIT; other user records skipped; those with a payload and
// nested COMPRESSED records errors), each at its decompressed offset, then
// an error at a corrupt record or a warning (cut_at_end) at a cut one. With
// zstd data: no crash, and every record whole: 8 bytes or more, the size its
// header says, inside what was decompressed.
#include <zstd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "processor/perf/perf_format.h"
#include "processor/perf/perf_reader.h"
#include "processor/perf/perf_records.h"
#include "tests/fuzz/mem_file.h"

namespace {

namespace format = pageblame::perf::format;
using pageblame::perf::PerfReader;
using pageblame::perf::RawRecord;

constexpr uint8_t kRawZstd = 1, kCompressed2 = 2, kFeature = 4, kEndFrame = 8;
constexpr size_t kMaxCuts = 16;
// zstd bytes per record: what perf's 64 KiB records hold, under the u16 size.
constexpr size_t kMaxChunk = 65000;

[[noreturn]] void Fail(const char* what, uint64_t a = 0, uint64_t b = 0) {
  std::fprintf(stderr, "compressed_records: %s (%llu, %llu)\n", what,
               static_cast<unsigned long long>(a), static_cast<unsigned long long>(b));
  std::abort();
}

template <typename T>
void Append(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(v));
}

template <typename T>
T Get(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

void AppendCompressed(std::string* out, bool compressed2, const std::string& zstd_bytes) {
  for (size_t i = 0; i < zstd_bytes.size(); i += kMaxChunk) {
    const std::string z = zstd_bytes.substr(i, kMaxChunk);
    if (!compressed2) {
      Append<uint32_t>(out, format::kRecordCompressed);
      Append<uint16_t>(out, 0);
      Append<uint16_t>(out, static_cast<uint16_t>(format::kEventHeaderSize + z.size()));
      *out += z;
      continue;
    }
    // perf_record_compressed2: header, u64 data_size, data padded to 8.
    const size_t size = (format::kCompressed2HeaderSize + z.size() + 7) / 8 * 8;
    Append<uint32_t>(out, format::kRecordCompressed2);
    Append<uint16_t>(out, 0);
    Append<uint16_t>(out, static_cast<uint16_t>(size));
    Append<uint64_t>(out, z.size());
    *out += z;
    out->resize(out->size() + size - format::kCompressed2HeaderSize - z.size(), '\0');
  }
}

// One zstd context for every input (making one costs more than most runs).
ZSTD_CCtx* Compressor() {
  static ZSTD_CCtx* ctx = ZSTD_createCCtx();
  ZSTD_CCtx_reset(ctx, ZSTD_reset_session_and_parameters);
  ZSTD_CCtx_setParameter(ctx, ZSTD_c_compressionLevel, 1);  // perf's default
  return ctx;
}

// `bytes` as the next part of the stream, flushed (or the frame ended).
std::string Compress(ZSTD_CCtx* ctx, const uint8_t* bytes, size_t n, bool end) {
  std::string z;
  ZSTD_inBuffer in{bytes, n, 0};
  char chunk[1 << 14];
  size_t left;
  do {
    ZSTD_outBuffer out{chunk, sizeof(chunk), 0};
    left = ZSTD_compressStream2(ctx, &out, &in, end ? ZSTD_e_end : ZSTD_e_flush);
    if (ZSTD_isError(left)) Fail("ZSTD_compressStream2 failed");  // a harness bug
    z.append(chunk, out.pos);
  } while (left != 0 || in.pos < in.size);
  return z;
}

// What the reader must give for decompressed content `c`: the records, and
// how the data ends.
struct Expected {
  struct Rec {
    uint64_t offset;
    size_t size;
  };
  std::vector<Rec> records;
  enum { kEnd, kCut, kError } end = kEnd;
};

Expected Walk(const uint8_t* c, size_t n) {
  Expected e;
  size_t pos = 0;
  while (pos < n) {
    if (n - pos < format::kEventHeaderSize) {
      e.end = Expected::kCut;
      return e;
    }
    const uint32_t type = Get<uint32_t>(c + pos);
    const uint16_t size = Get<uint16_t>(c + pos + 6);
    if (size < format::kEventHeaderSize) {
      e.end = Expected::kError;
      return e;
    }
    if (size > n - pos) {
      e.end = Expected::kCut;
      return e;
    }
    bool keep = true;
    if (type >= format::kRecordUserTypeStart) {
      switch (type) {
        case pageblame::perf::kRecordFinishedRound:
        case pageblame::perf::kRecordFinishedInit:
          break;
        case format::kRecordCompressed:
        case format::kRecordCompressed2:
        case format::kRecordAuxtrace:
        case pageblame::perf::kRecordHeaderTracingData:
          e.end = Expected::kError;
          return e;
        default:
          keep = false;
      }
    }
    if (keep) e.records.push_back({pos, size});
    pos += size;
  }
  return e;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint8_t flags = data[0];
  const size_t ncuts = std::min<size_t>(data[1], kMaxCuts);
  if (size < 2 + 2 * ncuts) return 0;
  std::vector<size_t> cuts;
  for (size_t i = 0; i < ncuts; ++i) cuts.push_back(std::max<uint16_t>(1, Get<uint16_t>(data + 2 + 2 * i)));
  if (cuts.empty()) cuts.push_back(kMaxChunk);
  const uint8_t* payload = data + 2 + 2 * ncuts;
  const size_t payload_size = size - 2 - 2 * ncuts;
  const bool raw = flags & kRawZstd, compressed2 = flags & kCompressed2;

  // perf_pipe_file_header: "PERFILE2", its size (16).
  std::string stream = "PERFILE2";
  Append<uint64_t>(&stream, format::kPipeHeaderSize);
  if (flags & kFeature) {
    // HEADER_FEATURE: header, u64 feature, then header.c write_compressed's
    // u32 version, type (zstd), level, ratio, mmap_len; padded to 8.
    Append<uint32_t>(&stream, pageblame::perf::kRecordHeaderFeature);
    Append<uint16_t>(&stream, 0);
    Append<uint16_t>(&stream, 8 + 8 + 20 + 4);
    Append<uint64_t>(&stream, format::kFeatCompressed);
    for (uint32_t v : {1u, format::kCompressionZstd, 1u, 8u, 528384u}) Append<uint32_t>(&stream, v);
    Append<uint32_t>(&stream, 0);
  }
  ZSTD_CCtx* ctx = raw ? nullptr : Compressor();
  size_t pos = 0;
  for (size_t i = 0; pos < payload_size || (pos == 0 && !raw); ++i) {
    const size_t n = std::min({cuts[i % cuts.size()], payload_size - pos, kMaxChunk});
    const bool last = pos + n == payload_size;
    const std::string piece =
        raw ? std::string(reinterpret_cast<const char*>(payload + pos), n)
            : Compress(ctx, payload + pos, n, last && (flags & kEndFrame));
    AppendCompressed(&stream, compressed2, piece);
    pos += n;
    if (last) break;
  }

  pageblame::fuzz::MemFile f(reinterpret_cast<const uint8_t*>(stream.data()), stream.size());
  absl::StatusOr<std::unique_ptr<PerfReader>> reader = PerfReader::Open(f.path());
  std::vector<Expected::Rec> got;
  bool error = !reader.ok();
  if (reader.ok()) {
    RawRecord rec;
    while (true) {
      absl::StatusOr<bool> more = (*reader)->Next(&rec);
      if (!more.ok()) {
        error = true;
        break;
      }
      if (!*more) break;
      const size_t header_size = Get<uint16_t>(rec.bytes.data() + 6);
      if (rec.bytes.size() < format::kEventHeaderSize || rec.bytes.size() != header_size)
        Fail("a record whose bytes are not its size", rec.bytes.size(), header_size);
      if (rec.decompressed_offset == RawRecord::kNotCompressed)
        Fail("a record not from the compressed data", rec.offset);
      const auto* stats = (*reader)->compression_stats();
      if (stats == nullptr || rec.decompressed_offset > stats->decompressed_bytes ||
          stats->decompressed_bytes - rec.decompressed_offset < rec.bytes.size())
        Fail("a record past what was decompressed", rec.decompressed_offset, rec.bytes.size());
      if (!raw && stats->decompressed_bytes > payload_size)
        Fail("more decompressed than was compressed", stats->decompressed_bytes, payload_size);
      if (!raw && std::memcmp(rec.bytes.data(), payload + rec.decompressed_offset,
                              rec.bytes.size()) != 0)
        Fail("a record's bytes are not the content's", rec.decompressed_offset);
      got.push_back({rec.decompressed_offset, rec.bytes.size()});
    }
  }
  if (raw) return 0;

  const Expected want = Walk(payload, payload_size);
  const bool cut = !error && reader.ok() && !(*reader)->cut_at_end().ok();
  const auto end = error ? Expected::kError : cut ? Expected::kCut : Expected::kEnd;
  if (end != want.end) Fail("the data ends otherwise than its content", end, want.end);
  if (got.size() != want.records.size()) Fail("record count", got.size(), want.records.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i].offset != want.records[i].offset || got[i].size != want.records[i].size)
      Fail("a record at another place", got[i].offset, want.records[i].offset);
  }
  return 0;
}
