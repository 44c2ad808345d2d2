// ChunkFolder without perf: a bundled trace cut into chunks that "perf"
// (this test) closes one by one while the folder runs; each is folded and
// removed, and the index written at the end is the folded recording, which
// answers as the whole trace does (and, over a bound, thinned).
#include "processor/recorder/chunk_folder.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "processor/base/temp_dir_for_test.h"
#include "processor/index/index_codec.h"
#include "processor/perf/chunk_split_for_test.h"
#include "processor/replay/recording_file.h"
#include "processor/replay/trace_loader.h"

namespace pageblame::recorder {
namespace {

std::string Trace(const std::string& name) { return std::string(PAGEBLAME_SOURCE_DIR) + "/traces/" + name; }

// The index tables of a loaded recording, as bytes.
std::string Tables(const index::TraceIndex& idx) {
  std::string bytes;
  index::IndexCodec::Encode(idx, &bytes);
  return bytes;
}

struct Folded {
  ChunkFolder::Stats stats;
  std::unique_ptr<replay::LoadedTrace> trace;  // TRACE.index read back
  std::vector<std::string> left;               // the files left in the directory
};

// Cuts `name` into 3 chunks made in `dir` (named t.data.<stamp>) one after
// another while a folder runs, as perf closes them; then folds the rest.
Folded FoldWhileClosing(const std::string& name, const TempDir& dir, uint64_t max_index_bytes) {
  TempDir staging("pb_fold_staging");
  const std::vector<std::string> cut = perf::testing::Split(Trace(name), staging.path(), 3);
  EXPECT_EQ(cut.size(), 3u);
  const int dir_fd = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const std::string trace = dir.path() + "/t.data";
  Folded out;
  {
    ChunkFolder folder(ChunkStore(dir_fd, "t.data", trace), trace, max_index_bytes);
    folder.Start();
    for (const std::string& c : cut) {
      // A chunk appears whole under its name, as perf's rename makes it.
      const std::string name_only = "t.data" + c.substr(c.rfind('.'));
      std::filesystem::rename(c, dir.path() + "/" + name_only);
      std::this_thread::sleep_for(std::chrono::milliseconds(120));
    }
    folder.PerfEnded();
    const absl::Status s = folder.Finish();
    EXPECT_TRUE(s.ok()) << s;
    out.stats = folder.stats();
  }
  ::close(dir_fd);
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) out.left.push_back(e.path().filename());
  replay::LoadOptions o;
  o.path = trace;
  o.folded = true;
  absl::StatusOr<replay::RecordingFile::Identity> id = replay::RecordingFile::Identity::Of(o);
  EXPECT_TRUE(id.ok());
  std::string bytes;
  {
    std::ifstream in(trace + ".index", std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    bytes = ss.str();
  }
  absl::StatusOr<std::unique_ptr<replay::LoadedTrace>> t =
      replay::RecordingFile::Decode(bytes, trace + ".index", *id, symbols::SymbolizerOptions{});
  EXPECT_TRUE(t.ok()) << t.status();
  if (t.ok()) out.trace = *std::move(t);
  return out;
}

TEST(ChunkFolderTest, EachChunkIsFoldedAndRemovedAndTheIndexIsTheWholeRecording) {
  for (const char* name : {"rules-record.data", "jvm-dwarf.data"}) {
    SCOPED_TRACE(name);
    TempDir dir("pb_fold");
    Folded f = FoldWhileClosing(name, dir, 0);
    ASSERT_NE(f.trace, nullptr);
    EXPECT_EQ(f.stats.chunks, 3u);
    EXPECT_GT(f.stats.chunk_bytes, 0u);
    EXPECT_EQ(f.stats.thinned_before, 0u);
    EXPECT_EQ(f.left, std::vector<std::string>{"t.data.index"});
    replay::LoadOptions whole;
    whole.path = Trace(name);
    whole.preload_symbols = false;
    whole.perf_rounds_only = true;  // the folder's order
    absl::StatusOr<std::unique_ptr<replay::LoadedTrace>> expected = replay::LoadTrace(whole);
    ASSERT_TRUE(expected.ok()) << expected.status();
    EXPECT_EQ(Tables(f.trace->index()), Tables((*expected)->index()));
  }
}

TEST(ChunkFolderTest, AnIndexOverItsShareIsThinnedToFit) {
  TempDir whole_dir("pb_fold");
  Folded whole = FoldWhileClosing("rules-trace.data", whole_dir, 0);
  ASSERT_NE(whole.trace, nullptr);
  const uint64_t share = whole.stats.index_bytes * 9 / 10;
  TempDir dir("pb_fold");
  Folded thin = FoldWhileClosing("rules-trace.data", dir, share);
  ASSERT_NE(thin.trace, nullptr);
  EXPECT_LE(thin.stats.index_bytes, share);
  EXPECT_GT(thin.stats.thinned_before, 0u);
  EXPECT_EQ(thin.trace->index().stats().thinned_before, thin.stats.thinned_before);
  EXPECT_GT(thin.trace->index().stats().thinned_calls, 0u);
}

}  // namespace
}  // namespace pageblame::recorder
