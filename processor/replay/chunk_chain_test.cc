// A recording in chunks (perf record --switch-output) read as one trace:
// each bundled trace cut into chunk files at record boundaries, as perf cuts
// its output (a later chunk starting with a preamble up to FINISHED_INIT;
// for -z traces its COMPRESSED records continuing the earlier chunk's zstd
// stream), loads to the same index, byte for byte, as the whole file.
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "processor/base/temp_dir_for_test.h"
#include "processor/index/index_codec.h"
#include "processor/perf/chunk_files.h"
#include "processor/replay/trace_loader.h"

namespace pageblame::replay {
namespace {

std::string Trace(const std::string& name) { return std::string(PAGEBLAME_SOURCE_DIR) + "/traces/" + name; }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

uint64_t U64(const std::string& b, size_t at) {
  uint64_t v = 0;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}
void PutU64(std::string* b, size_t at, uint64_t v) { std::memcpy(&(*b)[at], &v, 8); }

// perf_file_header: data section at 40 (offset, size); the feature bitmap at
// 72 (32 bytes); the feature table (16 bytes per feature) right after the data.
struct Layout {
  uint64_t data_begin, data_end, table_bytes;
};

Layout LayoutOf(const std::string& f) {
  uint64_t features = 0;
  for (size_t i = 0; i < 4; ++i) features += __builtin_popcountll(U64(f, 72 + 8 * i));
  return {U64(f, 40), U64(f, 40) + U64(f, 48), 16 * features};
}

// The offsets of the top-level records' starts that split [begin, end) into
// about `parts` equal parts.
std::vector<uint64_t> Cuts(const std::string& f, const Layout& l, int parts) {
  std::vector<uint64_t> starts;
  for (uint64_t at = l.data_begin; at + 8 <= l.data_end;) {
    uint16_t size = 0;
    std::memcpy(&size, f.data() + at + 6, 2);
    if (size < 8) break;
    starts.push_back(at);
    at += size;
  }
  std::vector<uint64_t> cuts;
  for (int k = 1; k < parts; ++k) {
    const uint64_t want = l.data_begin + (l.data_end - l.data_begin) * k / parts;
    for (uint64_t s : starts) {
      // Room for this part's feature table behind it, and for the next
      // part's FINISHED_INIT before it.
      if (s >= want && s + l.table_bytes <= l.data_end && s - 8 > (cuts.empty() ? l.data_begin : cuts.back())) {
        cuts.push_back(s);
        break;
      }
    }
  }
  return cuts;
}

// Writes `trace` as chunk files DIR/T.<stamp>: each a copy of the file whose
// data section is one part (a later part led by a FINISHED_INIT record, the
// end of perf's preamble), the feature table moved behind it.
std::vector<std::string> Split(const std::string& trace, const std::string& dir, int parts) {
  const std::string f = ReadAll(trace);
  const Layout l = LayoutOf(f);
  std::vector<uint64_t> bounds = Cuts(f, l, parts);
  bounds.insert(bounds.begin(), l.data_begin);
  bounds.push_back(l.data_end);
  const std::string table = f.substr(l.data_end, l.table_bytes);
  std::vector<std::string> out;
  for (size_t i = 0; i + 1 < bounds.size(); ++i) {
    std::string c = f;
    uint64_t begin = bounds[i];
    if (i > 0) {
      begin -= 8;
      const uint32_t type = 82;  // PERF_RECORD_FINISHED_INIT
      const uint16_t misc = 0, size = 8;
      std::memcpy(&c[begin], &type, 4);
      std::memcpy(&c[begin + 4], &misc, 2);
      std::memcpy(&c[begin + 6], &size, 2);
    }
    PutU64(&c, 40, begin);
    PutU64(&c, 48, bounds[i + 1] - begin);
    c.replace(bounds[i + 1], table.size(), table);
    out.push_back(dir + "/T." + std::to_string(2026112901450200 + i));
    std::ofstream(out.back(), std::ios::binary) << c;
  }
  return out;
}

std::string IndexBytes(const LoadOptions& o) {
  absl::StatusOr<std::unique_ptr<LoadedTrace>> t = LoadTrace(o);
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return "";
  std::string bytes;
  index::IndexCodec::Encode((*t)->index(), &bytes);
  return bytes + "\n" + (*t)->sources();
}

TEST(ChunkChainTest, ChunksLoadAsTheWholeFile) {
  for (const char* name : {"rules-record.data", "rules-zstd.data", "jvm-dwarf.data", "alloc-dwarf.data"}) {
    SCOPED_TRACE(name);
    TempDir dir("pb_chunks");
    const std::vector<std::string> chunks = Split(Trace(name), dir.path(), 3);
    ASSERT_EQ(chunks.size(), 3u);
    EXPECT_EQ(perf::ChunkFiles::Of(dir.path() + "/T"), chunks);
    LoadOptions whole, chained;
    whole.path = Trace(name);
    chained.path = dir.path() + "/T";
    chained.chunks = chunks;
    whole.preload_symbols = chained.preload_symbols = false;
    for (bool rounds : {false, true}) {
      whole.perf_rounds_only = chained.perf_rounds_only = rounds;
      const std::string expected = IndexBytes(whole);
      EXPECT_FALSE(expected.empty());
      EXPECT_EQ(IndexBytes(chained), expected);
    }
  }
}

TEST(ChunkChainTest, ALaterChunkMustContinueTheCompressedStream) {
  // Without the chunk before it, a -z chunk's zstd data starts mid-frame.
  TempDir dir("pb_chunks");
  const std::vector<std::string> chunks = Split(Trace("jvm-dwarf.data"), dir.path(), 3);
  ASSERT_EQ(chunks.size(), 3u);
  LoadOptions o;
  o.path = dir.path() + "/T";
  o.chunks = {chunks[1], chunks[2]};
  o.preload_symbols = false;
  absl::StatusOr<std::unique_ptr<LoadedTrace>> t = LoadTrace(o);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find(chunks[1]), std::string::npos) << t.status();
}

TEST(ChunkChainTest, AChunkOfAnotherRecordingIsRefused) {
  TempDir dir("pb_chunks");
  const std::vector<std::string> a = Split(Trace("rules-record.data"), dir.path(), 2);
  ASSERT_EQ(a.size(), 2u);
  LoadOptions o;
  o.path = dir.path() + "/T";
  o.chunks = {a[0], Trace("alloc-dwarf.data")};
  o.preload_symbols = false;
  absl::StatusOr<std::unique_ptr<LoadedTrace>> t = LoadTrace(o);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("not a chunk of the recording begun by " + a[0]), std::string::npos)
      << t.status();
}

TEST(ChunkFilesTest, OnlyTheTracesStampedFilesAreItsChunks) {
  EXPECT_TRUE(perf::ChunkFiles::IsChunkOf("app.data.2026112901450234", "app.data"));
  EXPECT_FALSE(perf::ChunkFiles::IsChunkOf("app.data.index", "app.data"));
  EXPECT_FALSE(perf::ChunkFiles::IsChunkOf("app.data.202611290145023", "app.data"));   // 15 digits
  EXPECT_FALSE(perf::ChunkFiles::IsChunkOf("app.data.20261129014502x4", "app.data"));
  EXPECT_FALSE(perf::ChunkFiles::IsChunkOf("app.dat.2026112901450234", "app.data"));
  EXPECT_FALSE(perf::ChunkFiles::IsChunkOf("xapp.data.2026112901450234", "app.data"));
}

}  // namespace
}  // namespace pageblame::replay
