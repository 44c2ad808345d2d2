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
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
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

// The file at `path`, whole ("" if there is none).
std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::StatusOr<std::unique_ptr<replay::LoadedTrace>> DecodeIndex(const std::string& trace) {
  replay::LoadOptions o;
  o.path = trace;
  o.folded = true;
  absl::StatusOr<replay::RecordingFile::Identity> id = replay::RecordingFile::Identity::Of(o);
  if (!id.ok()) return id.status();
  return replay::RecordingFile::Decode(Slurp(trace + ".index"), trace + ".index", *id, symbols::SymbolizerOptions{});
}

struct Folded {
  ChunkFolder::Stats stats;
  std::unique_ptr<replay::LoadedTrace> trace;  // TRACE.index read back
  std::vector<std::string> left;               // the files left in the directory
  // TRACE.index as it was once the second chunk had been placed (the
  // checkpoint written after the first was folded), decoded.
  std::unique_ptr<replay::LoadedTrace> checkpoint;
};

// Cuts `name` into `parts` chunks made in `dir` (named t.data.<stamp>) one
// after another while a folder runs, as perf closes them; then folds the rest.
Folded FoldWhileClosing(const std::string& name, const TempDir& dir, uint64_t max_index_bytes,
                        double checkpoint_every = 0, uint64_t max_memory_bytes = 0, int parts = 3) {
  TempDir staging("pb_fold_staging");
  const std::vector<std::string> cut = perf::testing::Split(Trace(name), staging.path(), parts);
  EXPECT_EQ(cut.size(), static_cast<size_t>(parts));
  const int dir_fd = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const std::string trace = dir.path() + "/t.data";
  Folded out;
  {
    ChunkFolder folder(ChunkStore(dir_fd, "t.data", trace), trace, max_index_bytes, checkpoint_every,
                       max_memory_bytes);
    folder.Start();
    for (size_t i = 0; i < cut.size(); ++i) {
      // A chunk appears whole under its name, as perf's rename makes it.
      const std::string& c = cut[i];
      const std::string name_only = "t.data" + c.substr(c.rfind('.'));
      std::filesystem::rename(c, dir.path() + "/" + name_only);
      std::this_thread::sleep_for(std::chrono::milliseconds(120));
      // The checkpoint at the first round's end in the second chunk.
      for (int wait = 0; i == 1 && checkpoint_every > 0 && wait < 100 && out.checkpoint == nullptr; ++wait) {
        if (absl::StatusOr<std::unique_ptr<replay::LoadedTrace>> t = DecodeIndex(trace); t.ok()) {
          out.checkpoint = *std::move(t);
        } else {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
      }
    }
    folder.PerfEnded();
    const absl::Status s = folder.Finish();
    EXPECT_TRUE(s.ok()) << s;
    out.stats = folder.stats();
  }
  ::close(dir_fd);
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) out.left.push_back(e.path().filename());
  absl::StatusOr<std::unique_ptr<replay::LoadedTrace>> t = DecodeIndex(trace);
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

// rules-lost.data replayed whole in the folder's order.
std::unique_ptr<replay::LoadedTrace> LoadInRounds(const std::string& name) {
  replay::LoadOptions o;
  o.path = Trace(name);
  o.preload_symbols = false;
  o.perf_rounds_only = true;  // the folder's order
  absl::StatusOr<std::unique_ptr<replay::LoadedTrace>> t = replay::LoadTrace(o);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : nullptr;
}

// A memory bound below what the index takes (calls, versions, stacks,
// strings, processes: TraceIndex::BoundedBytes): the folder pauses the
// replay while it reads a chunk (no checkpoint asked for), thins the state
// in memory, which stays within the bound and a step (1/16 of it), and the
// index at the stop is the whole recording thinned at the last cut —
// nothing else lost, nothing made up. In 3 chunks, and in one (the bound
// is looked at within a chunk, not at its end only).
TEST(ChunkFolderTest, AMemoryBoundThinsTheFoldedStateWhileItFolds) {
  std::unique_ptr<replay::LoadedTrace> whole = LoadInRounds("rules-lost.data");  // many rounds: many pauses
  ASSERT_NE(whole, nullptr);
  const index::TraceIndex& w = whole->index();
  const uint64_t all = w.BoundedBytes();
  // More than what no thinning makes smaller, and than the stacks.
  ASSERT_GT(all, w.UnthinnedBytes() + w.stacks().CountedBytes());
  const uint64_t bound = w.UnthinnedBytes() + (all - w.UnthinnedBytes()) / 3;
  for (int parts : {3, 1}) {
    SCOPED_TRACE(parts);
    TempDir dir("pb_fold");
    Folded f = FoldWhileClosing("rules-lost.data", dir, 0, 0, bound, parts);
    ASSERT_NE(f.trace, nullptr);
    EXPECT_EQ(f.stats.checkpoints, 0u);
    EXPECT_GT(f.stats.memory_thinnings, 0u);
    EXPECT_GT(f.stats.memory_looks, f.stats.memory_thinnings);
    ASSERT_GT(f.stats.memory_cut, 0u);
    EXPECT_LE(f.stats.peak_memory, bound + bound / 16);
    EXPECT_GE(f.stats.peak_memory, bound * 3 / 4);
    // The whole index holds the blocks made ahead for the replay too.
    EXPECT_GE(f.stats.peak_index_memory, f.stats.peak_memory);
    EXPECT_EQ(f.trace->index().stats().thinned_before, f.stats.memory_cut);
    std::string expected;
    index::IndexCodec::EncodeThinned(w, f.stats.memory_cut, &expected);
    EXPECT_EQ(Tables(f.trace->index()), expected);
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
  // Written a piece at a time after counted tries (never whole in memory),
  // the index is the whole recording thinned at that cut.
  replay::LoadOptions o;
  o.path = Trace("rules-trace.data");
  o.preload_symbols = false;
  o.perf_rounds_only = true;  // the folder's order
  absl::StatusOr<std::unique_ptr<replay::LoadedTrace>> all = replay::LoadTrace(o);
  ASSERT_TRUE(all.ok()) << all.status();
  std::string expected;
  index::IndexCodec::EncodeThinned((*all)->index(), thin.stats.thinned_before, &expected);
  EXPECT_EQ(Tables(thin.trace->index()), expected);
  EXPECT_EQ(thin.left, std::vector<std::string>{"t.data.index"});  // no try left behind
}

// A checkpoint is on disk beside the index it replaces while it is renamed
// over it: each fits half the index's share.
TEST(ChunkFolderTest, ACheckpointFitsHalfTheIndexShare) {
  TempDir whole_dir("pb_fold");
  Folded whole = FoldWhileClosing("rules-lost.data", whole_dir, 0);
  ASSERT_NE(whole.trace, nullptr);
  // A third of the recording's index is more than half of this share.
  const uint64_t share = whole.stats.index_bytes / 2;
  TempDir dir("pb_fold");
  Folded thin = FoldWhileClosing("rules-lost.data", dir, share, /*checkpoint_every=*/0.001);
  ASSERT_NE(thin.trace, nullptr);
  ASSERT_NE(thin.checkpoint, nullptr);
  EXPECT_GE(thin.stats.checkpoints, 1u);
  EXPECT_LE(thin.stats.checkpoint_bytes, share / 2);
  EXPECT_GT(thin.checkpoint->index().stats().thinned_before, 0u);  // it had to be thinned to fit
  EXPECT_LE(thin.stats.index_bytes, share);
}

// While perf records, TRACE.index is written as a checkpoint once a chunk
// is folded: a folded recording up to then, whose header says so (how many
// chunks, the last, up to when); the index at the stop replaces it and is
// no checkpoint; the answers at the end are the same with checkpoints.
TEST(ChunkFolderTest, ACheckpointIsTheRecordingSoFarAndTheStopReplacesIt) {
  // rules-lost.data has hundreds of rounds (perf's round order lets events
  // go at each): its checkpoint holds calls. jvm-dwarf.data has two, the
  // first in the last chunk: its checkpoint holds none yet, and says so.
  for (const char* name : {"rules-lost.data", "jvm-dwarf.data"}) {
    SCOPED_TRACE(name);
    TempDir plain_dir("pb_fold");
    Folded plain = FoldWhileClosing(name, plain_dir, 0);
    TempDir dir("pb_fold");
    Folded f = FoldWhileClosing(name, dir, 0, /*checkpoint_every=*/0.001);
    ASSERT_NE(f.trace, nullptr);
    ASSERT_NE(plain.trace, nullptr);
    ASSERT_NE(f.checkpoint, nullptr) << "no checkpoint while the second chunk was read";
    ASSERT_TRUE(f.checkpoint->checkpoint().has_value());
    const replay::FoldCheckpoint& c = *f.checkpoint->checkpoint();
    EXPECT_EQ(c.chunks, 1u);
    EXPECT_TRUE(absl::StartsWith(c.last_chunk, "t.data.")) << c.last_chunk;
    EXPECT_GT(c.wall_ns, 0u);
    EXPECT_EQ(c.until, f.checkpoint->index().stats().last_time);
    if (std::string(name) == "rules-lost.data") {
      EXPECT_GT(c.until, f.trace->index().stats().first_time);
      EXPECT_GT(f.checkpoint->index().stats().calls, 0u);
    }
    EXPECT_LE(c.until, f.trace->index().stats().last_time);
    EXPECT_LE(f.checkpoint->index().num_events(), f.trace->index().num_events());
    EXPECT_GE(f.stats.checkpoints, 1u);
    EXPECT_GT(f.stats.checkpoint_bytes, 0u);
    EXPECT_FALSE(f.trace->checkpoint().has_value());
    EXPECT_EQ(f.left, std::vector<std::string>{"t.data.index"});
    EXPECT_EQ(Tables(f.trace->index()), Tables(plain.trace->index()));
  }
}

}  // namespace
}  // namespace pageblame::recorder
