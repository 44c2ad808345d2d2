// RecordingInput on the chunked recordings of traces/chunks/ (make-chunks.sh:
// bin/rotate recorded with perf record --switch-output, plain and -z) and
// on a folded recording laid out as `record --max-size` leaves one while
// it records or after a kill (traces/folded/'s index, with a chunk beside it).
#include "plugin/recording_input.h"

#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/temp_dir_for_test.h"
#include "processor/perf/chunk_files.h"

namespace pageblame::plugin {
namespace {

using ::testing::HasSubstr;

const std::string kChunks = PAGEBLAME_SOURCE_DIR "/traces/chunks";

std::vector<std::string> ChunksOf(const std::string& name) { return perf::ChunkFiles::Of(kChunks + "/" + name); }

TEST(RecordingInputTest, APlainChunkIsReadAsItsWholeRecording) {
  const std::vector<std::string> chunks = ChunksOf("plain.data");
  ASSERT_GE(chunks.size(), 3u);
  for (size_t i = 0; i < chunks.size(); ++i) {
    absl::StatusOr<RecordingInput> in = RecordingInput::Of(chunks[i], "");
    ASSERT_TRUE(in.ok()) << in.status();
    EXPECT_TRUE(in->is_chunk);
    EXPECT_FALSE(in->folded);
    EXPECT_EQ(in->recording, kChunks + "/plain.data");
    EXPECT_EQ(in->chunk, i + 1);
    EXPECT_EQ(in->chunks, chunks.size());
    EXPECT_THAT(in->Describe(), HasSubstr("chunk " + std::to_string(i + 1) + " of the " +
                                          std::to_string(chunks.size()) + " chunks on disk of the recording "));
  }
}

TEST(RecordingInputTest, OnlyTheFirstChunkOfACompressedRecordingIsRead) {
  const std::vector<std::string> chunks = ChunksOf("zstd.data");
  ASSERT_GE(chunks.size(), 3u);
  absl::StatusOr<RecordingInput> first = RecordingInput::Of(chunks[0], "");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->recording, kChunks + "/zstd.data");
  for (size_t i = 1; i < chunks.size(); ++i) {
    absl::StatusOr<RecordingInput> later = RecordingInput::Of(chunks[i], "");
    ASSERT_FALSE(later.ok());
    EXPECT_EQ(later.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(later.status().message(), HasSubstr("perf cannot read it alone"));
    EXPECT_THAT(later.status().message(), HasSubstr("pageblame query -i " + kChunks + "/zstd.data ADDR"));
    EXPECT_THAT(later.status().message(), HasSubstr("perf script reads its first chunk alone (" + chunks[0]));
  }
}

TEST(RecordingInputTest, ATraceOfItsOwnIsItself) {
  const std::string trace = PAGEBLAME_SOURCE_DIR "/traces/rules-trace.data";
  absl::StatusOr<RecordingInput> in = RecordingInput::Of(trace, "");
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_FALSE(in->is_chunk);
  EXPECT_FALSE(in->folded);
  EXPECT_EQ(in->recording, trace);
  // --dlarg trace= naming another recording than the chunk's: that one, as it is.
  in = RecordingInput::Of(ChunksOf("plain.data").back(), trace);
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_FALSE(in->is_chunk);
  EXPECT_EQ(in->recording, trace);
}

TEST(RecordingInputTest, AnIndexIsNoTrace) {
  const std::string index = PAGEBLAME_SOURCE_DIR "/traces/folded/rotate.data.index";
  for (const std::string& perf_input : {index, std::string("perf.data")}) {
    absl::StatusOr<RecordingInput> in = RecordingInput::Of(perf_input, perf_input == index ? "" : index);
    ASSERT_FALSE(in.ok());
    EXPECT_THAT(in.status().message(), HasSubstr("is pageblame's index of a recording, not a perf.data"));
    EXPECT_THAT(in.status().message(), HasSubstr("pageblame query -i TRACE"));
  }
}

// A folded recording with raw chunks beside its index (a recorder still
// recording, or killed): its first chunks are gone, so a compressed chunk is
// refused even if it is the first on disk; an uncompressed one is read
// against the folded index. The one perf writes now (TRACE itself) too.
TEST(RecordingInputTest, AChunkOfAFoldedRecording) {
  TempDir dir("pb_recording_input");
  namespace fs = std::filesystem;
  fs::copy_file(PAGEBLAME_SOURCE_DIR "/traces/folded/rotate.data.index", dir.path() + "/t.data.index");
  const std::string z = dir.path() + "/t.data.2026112914111880";
  fs::copy_file(ChunksOf("zstd.data").front(), z);
  absl::StatusOr<RecordingInput> in = RecordingInput::Of(z, "");
  ASSERT_FALSE(in.ok());
  EXPECT_THAT(in.status().message(), HasSubstr("chunk 1 of the 1 chunk on disk of the recording " + dir.path() +
                                               "/t.data (the chunks before them were folded into " +
                                               dir.path() + "/t.data.index and removed)"));
  EXPECT_THAT(in.status().message(), HasSubstr("perf cannot read it alone"));
  EXPECT_THAT(in.status().message(), ::testing::Not(HasSubstr("perf script reads its first chunk")));

  fs::remove(z);
  const std::string plain = dir.path() + "/t.data.2026112914111409";
  fs::copy_file(ChunksOf("plain.data").back(), plain);
  in = RecordingInput::Of(plain, "");
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_TRUE(in->is_chunk);
  EXPECT_TRUE(in->folded);
  EXPECT_EQ(in->recording, dir.path() + "/t.data");

  fs::copy_file(ChunksOf("zstd.data").back(), dir.path() + "/t.data");
  in = RecordingInput::Of(dir.path() + "/t.data", "");
  ASSERT_FALSE(in.ok());
  EXPECT_THAT(in.status().message(), HasSubstr("is the chunk perf is writing now of the recording"));

  // perf reads a pipe, --dlarg trace= names the folded recording: its index.
  in = RecordingInput::Of("-", dir.path() + "/t.data");
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_FALSE(in->is_chunk);
  EXPECT_TRUE(in->folded);
}

TEST(RecordingInputTest, SeenSpanPlacesCalls) {
  SeenSpan seen;
  index::CallEvent ev;
  ev.first_time = 5;
  ev.time = ev.last_time = 6;
  EXPECT_EQ(seen.Of(ev), SeenSpan::Where::kInside);  // nothing seen
  seen.Add(20);
  seen.Add(10);
  EXPECT_EQ(seen.Of(ev), SeenSpan::Where::kBefore);
  ev.first_time = 9;
  ev.time = ev.last_time = 11;  // across the first sample: read in part
  EXPECT_EQ(seen.Of(ev), SeenSpan::Where::kInside);
  ev.first_time = 21;
  ev.time = ev.last_time = 22;
  EXPECT_EQ(seen.Of(ev), SeenSpan::Where::kAfter);
  ev.first_time = 0;  // no enter time: its exit
  EXPECT_EQ(seen.Of(ev), SeenSpan::Where::kAfter);
}

}  // namespace
}  // namespace pageblame::plugin
