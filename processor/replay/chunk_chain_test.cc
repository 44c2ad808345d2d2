// A recording in chunks (perf record --switch-output) read as one trace:
// each bundled trace cut into chunk files at record boundaries, as perf cuts
// its output (a later chunk starting with a preamble up to FINISHED_INIT;
// for -z traces its COMPRESSED records continuing the earlier chunk's zstd
// stream), loads to the same index, byte for byte, as the whole file.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "processor/base/temp_dir_for_test.h"
#include "processor/index/index_codec.h"
#include "processor/perf/chunk_split_for_test.h"
#include "processor/perf/chunk_files.h"
#include "processor/replay/trace_loader.h"

namespace pageblame::replay {
namespace {

using perf::testing::Split;

std::string Trace(const std::string& name) { return std::string(PAGEBLAME_SOURCE_DIR) + "/traces/" + name; }

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
