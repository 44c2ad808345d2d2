// Test-only: turns a perf.data file or pipe stream into its compressed
// (`perf record -z`) or decompressed form without PerfReader, with libzstd
// alone and whole strings, as an oracle for the reader's incremental
// decompression (record_decompressor.h):
//
//   std::string plain = DecompressedCopy(ReadBytes("rules-zstd.data"));
//   std::string packed = CompressedCopy(ReadBytes("rules-record.data"),
//                                       format::kRecordCompressed, 1000);
//
// DecompressedCopy puts the records of each COMPRESSED record in its place,
// a record cut by a COMPRESSED record's end where it is completed (as perf's
// session.c does), and drops the COMPRESSED feature. CompressedCopy
// compresses each run of kernel records (as perf compresses what it reads
// from the ring buffers; its own records stay as they are) as one zstd
// stream, flushed every `piece` input bytes, cutting records anywhere, into
// COMPRESSED or COMPRESSED2 records of at most ~64 KiB, and adds the
// COMPRESSED feature (file mode) or a HEADER_FEATURE record for it (pipe).
// Both expect a well-formed native-endian trace (EXPECT failures otherwise).
#ifndef PAGEBLAME_PERF_COMPRESSED_TEST_UTIL_H_
#define PAGEBLAME_PERF_COMPRESSED_TEST_UTIL_H_

#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "processor/perf/perf_format.h"
#include "processor/perf/perf_records.h"

namespace pageblame::perf::testing {

inline std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

template <typename T>
T Get(const std::string& b, size_t offset) {
  T v{};
  if (offset + sizeof(T) <= b.size()) std::memcpy(&v, b.data() + offset, sizeof(T));
  return v;
}

template <typename T>
void Put(std::string* b, size_t offset, T v) {
  std::memcpy(b->data() + offset, &v, sizeof(T));
}

template <typename T>
void Append(std::string* b, T v) {
  b->append(reinterpret_cast<const char*>(&v), sizeof(T));
}

// A trace cut into its parts: everything before the records, the records
// (file mode: the data section; pipe mode: the whole stream after its
// 16-byte header) and, in file mode, the feature sections by feature bit.
struct TraceParts {
  bool pipe = false;
  std::string head;
  std::string data;
  std::map<int, std::string> features;
};

inline TraceParts SplitTrace(const std::string& t) {
  TraceParts p;
  p.pipe = Get<uint64_t>(t, 8) == format::kPipeHeaderSize;
  if (p.pipe) {
    p.head = t.substr(0, format::kPipeHeaderSize);
    p.data = t.substr(format::kPipeHeaderSize);
    return p;
  }
  const uint64_t begin = Get<uint64_t>(t, format::kDataSectionOffset);
  const uint64_t size = Get<uint64_t>(t, format::kDataSectionOffset + 8);
  EXPECT_LE(begin + size, t.size());
  p.head = t.substr(0, begin);
  p.data = t.substr(begin, size);
  size_t table = begin + size;
  for (int bit = 0; bit < 256; ++bit) {
    if (!(Get<uint64_t>(t, format::kFeatureBitmapOffset + 8 * (bit / 64)) >> (bit % 64) & 1)) {
      continue;
    }
    const uint64_t off = Get<uint64_t>(t, table), len = Get<uint64_t>(t, table + 8);
    EXPECT_LE(off + len, t.size());
    p.features[bit] = t.substr(off, len);
    table += format::kFileSectionSize;
  }
  return p;
}

// The inverse of SplitTrace: the data section's size, the feature bitmap,
// table and sections follow `data` and `features`.
inline std::string JoinTrace(const TraceParts& p) {
  std::string out = p.head + p.data;
  if (p.pipe) return out;
  Put<uint64_t>(&out, format::kDataSectionOffset + 8, p.data.size());
  for (size_t w = 0; w < format::kFeatureBitmapWords; ++w) {
    Put<uint64_t>(&out, format::kFeatureBitmapOffset + 8 * w, 0);
  }
  uint64_t section = out.size() + p.features.size() * format::kFileSectionSize;
  std::string contents;
  for (const auto& [bit, bytes] : p.features) {
    const size_t word = format::kFeatureBitmapOffset + 8 * (bit / 64);
    Put<uint64_t>(&out, word, Get<uint64_t>(out, word) | uint64_t{1} << (bit % 64));
    Append<uint64_t>(&out, section);
    Append<uint64_t>(&out, bytes.size());
    section += bytes.size();
    contents += bytes;
  }
  return out + contents;
}

// One record of a trace's data: [offset, offset + size) with what follows
// it outside its header.size (pipe-mode tracing data, AUX data).
struct Piece {
  size_t offset = 0;
  size_t size = 0;
  uint32_t type = 0;
};

inline std::vector<Piece> Pieces(const std::string& data, bool pipe) {
  std::vector<Piece> out;
  size_t pos = 0;
  while (pos + format::kEventHeaderSize <= data.size()) {
    Piece p{pos, Get<uint16_t>(data, pos + 6), Get<uint32_t>(data, pos)};
    if (p.size < format::kEventHeaderSize) {
      ADD_FAILURE() << "record size " << p.size << " at +" << pos;
      break;
    }
    if (p.type == kRecordHeaderTracingData && pipe) p.size += Get<uint32_t>(data, pos + 8);
    if (p.type == format::kRecordAuxtrace) p.size += Get<uint64_t>(data, pos + 8);
    out.push_back(p);
    pos += p.size;
  }
  EXPECT_EQ(pos, data.size());
  return out;
}

// The zstd bytes of a COMPRESSED or COMPRESSED2 record.
inline std::string CompressedPayload(const std::string& rec) {
  if (Get<uint32_t>(rec, 0) == format::kRecordCompressed) return rec.substr(8);
  return rec.substr(format::kCompressed2HeaderSize, Get<uint64_t>(rec, 8));
}

inline std::string CompressedRecord(uint32_t type, const std::string& zstd_bytes) {
  std::string r;
  Append<uint32_t>(&r, type);
  Append<uint16_t>(&r, 0);
  if (type == format::kRecordCompressed) {
    Append<uint16_t>(&r, static_cast<uint16_t>(8 + zstd_bytes.size()));
    return r + zstd_bytes;
  }
  const size_t size = (format::kCompressed2HeaderSize + zstd_bytes.size() + 7) & ~size_t{7};
  Append<uint16_t>(&r, static_cast<uint16_t>(size));
  Append<uint64_t>(&r, zstd_bytes.size());
  r += zstd_bytes;
  r.resize(size, '\0');
  return r;
}

// Compresses `bytes` as the next part of `ctx`'s stream, flushed at the end
// (perf: zstd_compress_stream_to_records), into records holding at most
// 65000 zstd bytes each.
inline std::vector<std::string> CompressPiece(ZSTD_CCtx* ctx, const std::string& bytes,
                                              uint32_t type) {
  std::string z;
  ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
  std::string chunk(ZSTD_CStreamOutSize(), '\0');
  size_t left;
  do {
    ZSTD_outBuffer out{chunk.data(), chunk.size(), 0};
    left = ZSTD_compressStream2(ctx, &out, &in, ZSTD_e_flush);
    EXPECT_FALSE(ZSTD_isError(left)) << ZSTD_getErrorName(left);
    if (ZSTD_isError(left)) break;
    z.append(chunk.data(), out.pos);
  } while (left != 0 || in.pos < in.size);
  std::vector<std::string> records;
  for (size_t i = 0; i < z.size(); i += 65000) {
    records.push_back(CompressedRecord(type, z.substr(i, 65000)));
  }
  return records;
}

// header.c write_compressed: u32 version, type, level, ratio, mmap_len.
inline std::string CompressedFeature() {
  std::string f;
  for (uint32_t v : {1u, format::kCompressionZstd, 1u, 8u, 528384u}) Append<uint32_t>(&f, v);
  return f;
}

inline std::string CompressedCopy(const std::string& trace, uint32_t type, size_t piece) {
  TraceParts p = SplitTrace(trace);
  ZSTD_CCtx* ctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(ctx, ZSTD_c_compressionLevel, 1);
  std::string data, run;
  auto flush_run = [&] {
    for (size_t i = 0; i < run.size(); i += piece) {
      for (const std::string& r : CompressPiece(ctx, run.substr(i, piece), type)) data += r;
    }
    run.clear();
  };
  for (const Piece& r : Pieces(p.data, p.pipe)) {
    if (r.type < format::kRecordUserTypeStart) {
      run += p.data.substr(r.offset, r.size);
      continue;
    }
    flush_run();
    data += p.data.substr(r.offset, r.size);
  }
  flush_run();
  ZSTD_freeCCtx(ctx);
  if (p.pipe) {
    std::string feature;
    Append<uint32_t>(&feature, kRecordHeaderFeature);
    Append<uint16_t>(&feature, 0);
    Append<uint16_t>(&feature, 16 + CompressedFeature().size() + 4);  // padded to 8
    Append<uint64_t>(&feature, format::kFeatCompressed);
    feature += CompressedFeature() + std::string(4, '\0');
    p.data = feature + data;
  } else {
    p.data = data;
    p.features[format::kFeatCompressed] = CompressedFeature();
  }
  return JoinTrace(p);
}

inline std::string DecompressedCopy(const std::string& trace) {
  TraceParts p = SplitTrace(trace);
  ZSTD_DStream* ds = ZSTD_createDStream();
  std::string data, carry;
  std::string chunk(ZSTD_DStreamOutSize(), '\0');
  for (const Piece& r : Pieces(p.data, p.pipe)) {
    const std::string rec = p.data.substr(r.offset, r.size);
    if (r.type != format::kRecordCompressed && r.type != format::kRecordCompressed2) {
      data += rec;
      continue;
    }
    const std::string z = CompressedPayload(rec);
    ZSTD_inBuffer in{z.data(), z.size(), 0};
    bool full = false;
    while (in.pos < in.size || full) {
      ZSTD_outBuffer out{chunk.data(), chunk.size(), 0};
      const size_t ret = ZSTD_decompressStream(ds, &out, &in);
      EXPECT_FALSE(ZSTD_isError(ret)) << ZSTD_getErrorName(ret);
      if (ZSTD_isError(ret)) break;
      carry.append(chunk.data(), out.pos);
      full = out.pos == out.size;
    }
    size_t pos = 0;
    while (carry.size() - pos >= 8 && Get<uint16_t>(carry, pos + 6) <= carry.size() - pos) {
      const size_t size = Get<uint16_t>(carry, pos + 6);
      EXPECT_GE(size, 8u);
      if (size < 8) break;
      data += carry.substr(pos, size);
      pos += size;
    }
    carry.erase(0, pos);
  }
  EXPECT_TRUE(carry.empty()) << carry.size() << " bytes of a record left over";
  ZSTD_freeDStream(ds);
  p.data = data;
  p.features.erase(format::kFeatCompressed);
  return JoinTrace(p);
}

}  // namespace pageblame::perf::testing

#endif  // PAGEBLAME_PERF_COMPRESSED_TEST_UTIL_H_
