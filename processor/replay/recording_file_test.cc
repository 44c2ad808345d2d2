// The recording's index written and read a piece at a time (issue 42: the
// body never whole in memory), on replayed bundled traces: the same bytes
// as a whole encoding, the same index read back through pieces of every
// size (entries cut across pieces), and a file cut at every piece boundary,
// damaged or claiming more than it holds refused with an error that says
// what, never a crash.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/atomic_file.h"
#include "processor/base/piece_source_for_test.h"
#include "processor/base/byte_sink.h"
#include "processor/base/byte_writer.h"
#include "processor/base/status_macros.h"
#include "processor/base/stream_reader.h"
#include "processor/base/temp_dir_for_test.h"
#include "processor/index/index_codec.h"
#include "processor/replay/recording_file.h"
#include "processor/replay/trace_loader.h"

namespace pageblame::replay {
namespace {

using ::testing::HasSubstr;

LoadOptions Options(const std::string& name) {
  LoadOptions o;
  o.path = std::string(PAGEBLAME_SOURCE_DIR) + "/traces/" + name;
  o.preload_symbols = false;
  return o;
}

std::unique_ptr<LoadedTrace> Load(const std::string& name) {
  absl::StatusOr<std::unique_ptr<LoadedTrace>> t = LoadTrace(Options(name));
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : nullptr;
}

std::string Encoded(const index::TraceIndex& idx) {
  std::string bytes;
  index::IndexCodec::Encode(idx, &bytes);
  return bytes;
}

// `bytes` (declared `declared` long) decoded from pieces of `piece` bytes.
absl::Status DecodeInPieces(std::string_view bytes, uint64_t declared, size_t piece, index::TraceIndex* idx) {
  PieceSource src(std::string(bytes), piece);
  StreamReader r(&src, declared, piece);
  return index::IndexCodec::Decode(&r, idx);
}

TEST(IndexStreamTest, AnIndexReadInPiecesOfEverySizeIsTheIndex) {
  for (const char* name : {"alloc-dwarf.data", "rules-record.data", "phases-fp.data"}) {
    SCOPED_TRACE(name);
    std::unique_ptr<LoadedTrace> t = Load(name);
    ASSERT_NE(t, nullptr);
    const std::string bytes = Encoded(t->index());
    // Into a sink a piece at a time: the same bytes.
    CountingSink counted;
    index::IndexCodec::Encode(t->index(), &counted);
    EXPECT_EQ(counted.written(), bytes.size());
    // Pieces of 1..13 bytes (every u64, id and string cut at every offset
    // somewhere), of 4 KiB and of one piece for the whole.
    for (size_t piece : {size_t{1}, size_t{2}, size_t{3}, size_t{5}, size_t{7}, size_t{13}, size_t{4096},
                         StreamReader::kPiece}) {
      index::TraceIndex copy;
      ASSERT_TRUE(DecodeInPieces(bytes, bytes.size(), piece, &copy).ok()) << "pieces of " << piece;
      EXPECT_EQ(Encoded(copy), bytes) << "pieces of " << piece;
    }
  }
}

TEST(IndexStreamTest, AnIndexCutAtEveryPieceBoundarySaysWhereItEnds) {
  std::unique_ptr<LoadedTrace> t = Load("rules-record.data");
  ASSERT_NE(t, nullptr);
  const std::string bytes = Encoded(t->index());
  constexpr size_t kPiece = 64;
  for (size_t cut = 0; cut < bytes.size(); cut += kPiece) {
    index::TraceIndex copy;
    const absl::Status s = DecodeInPieces(std::string_view(bytes).substr(0, cut), bytes.size(), kPiece, &copy);
    ASSERT_EQ(s.code(), absl::StatusCode::kDataLoss) << "cut at " << cut << ": " << s;
    // What was cut (a count, a call, a version...), then where the stream ended.
    EXPECT_THAT(std::string(s.message()),
                testing::MatchesRegex("the index is damaged: .+ \\(the stream ends at byte " + std::to_string(cut) +
                                      " of the " + std::to_string(bytes.size()) + " it declares\\)"));
  }
}

TEST(IndexStreamTest, ACountTheRestCannotHoldIsRefusedBeforeItIsRead) {
  std::unique_ptr<LoadedTrace> t = Load("alloc-fp.data");
  ASSERT_NE(t, nullptr);
  std::string bytes = Encoded(t->index());
  // The strings' count is the first u64: claim 2^40 strings, in a stream
  // that has given only its first piece when the count is read.
  const uint64_t huge = uint64_t{1} << 40;
  std::memcpy(bytes.data(), &huge, sizeof(huge));
  index::TraceIndex copy;
  const absl::Status s = DecodeInPieces(bytes, bytes.size(), 16, &copy);
  EXPECT_THAT(std::string(s.message()), HasSubstr("1099511627776 strings cannot fit in what is left"));
  EXPECT_EQ(copy.strings().size(), 0u);
}

// An index big enough for many of the encoder's pieces (PieceWriter::kPiece):
// 100 000 stacks, each a frame more under the last 29.
TEST(IndexStreamTest, AnIndexOfManyPiecesWrittenAndReadInPiecesIsTheSame) {
  index::TraceIndex idx;
  std::vector<uint64_t> ips;
  for (uint64_t i = 0; i < 100000; ++i) {
    ips.insert(ips.begin(), 0x400000 + i * 16);
    if (ips.size() > 30) ips.pop_back();
    idx.stacks().Intern(ips);
  }
  const std::string bytes = Encoded(idx);
  ASSERT_GT(bytes.size(), 3 * PieceWriter::kPiece);
  index::TraceIndex copy;
  ASSERT_TRUE(DecodeInPieces(bytes, bytes.size(), 4093, &copy).ok());
  EXPECT_EQ(Encoded(copy), bytes);
}

// ---------------------------------------------------------------- the file

absl::StatusOr<std::unique_ptr<LoadedTrace>> DecodeFile(const std::string& path, const RecordingFile::Identity& id) {
  ASSIGN_OR_RETURN(std::unique_ptr<InputFile> f, InputFile::Open(path, "index", InputFile::Accept::kRegular));
  return RecordingFile::Decode(*f, path, id, symbols::SymbolizerOptions{});
}

void Spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(RecordingFileTest, AFileWrittenInPiecesIsTheEncodingAndReadsBackFromTheFile) {
  TempDir dir("pb_recording_file");
  for (const char* name : {"alloc-dwarf.data", "rules-record.data"}) {
    SCOPED_TRACE(name);
    std::unique_ptr<LoadedTrace> t = Load(name);
    ASSERT_NE(t, nullptr);
    absl::StatusOr<RecordingFile::Identity> id = RecordingFile::Identity::Of(Options(name));
    ASSERT_TRUE(id.ok()) << id.status();
    const std::string bytes = RecordingFile::Encode(*t, *id);
    const std::string path = dir.path() + "/" + name + ".index";
    {
      auto f = AtomicFile::Create(path, 0600);
      ASSERT_TRUE(f.ok()) << f.status();
      ASSERT_TRUE(RecordingFile::Write(LoadedView::Of(*t), *id, 0, nullptr, f->get()).ok());
      ASSERT_TRUE((*f)->Commit().ok());
    }
    std::ifstream in(path, std::ios::binary);
    const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(written, bytes);
    auto back = DecodeFile(path, *id);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(RecordingFile::Encode(**back, *id), bytes);
  }
}

TEST(RecordingFileTest, AFileCutAnywhereOrDamagedIsRefusedSayingSo) {
  TempDir dir("pb_recording_file");
  std::unique_ptr<LoadedTrace> t = Load("rules-record.data");
  ASSERT_NE(t, nullptr);
  absl::StatusOr<RecordingFile::Identity> id = RecordingFile::Identity::Of(Options("rules-record.data"));
  ASSERT_TRUE(id.ok());
  const std::string bytes = RecordingFile::Encode(*t, *id);
  const std::string path = dir.path() + "/t.index";
  for (size_t cut = 0; cut < bytes.size(); cut += 97) {
    Spit(path, bytes.substr(0, cut));
    auto back = DecodeFile(path, *id);
    EXPECT_EQ(back.status().code(), absl::StatusCode::kDataLoss) << "cut at " << cut << ": " << back.status();
  }
  // A byte changed inside the frame: zstd's checksum (or the tables' checks) say so.
  for (size_t at = bytes.size() - 2000; at < bytes.size(); at += 211) {
    std::string damaged = bytes;
    damaged[at] ^= 0x10;
    Spit(path, damaged);
    auto back = DecodeFile(path, *id);
    EXPECT_EQ(back.status().code(), absl::StatusCode::kDataLoss) << "changed at " << at;
    EXPECT_THAT(std::string(back.status().message()), HasSubstr("the index is damaged"));
  }
  Spit(path, bytes + "x");
  EXPECT_THAT(std::string(DecodeFile(path, *id).status().message()), HasSubstr("sizes do not match the file"));
}

// A body whose index's length says more than the body holds: refused
// before anything is read or allocated for it.
TEST(RecordingFileTest, ABodyWhoseIndexClaimsMoreThanFollowsIsRefused) {
  std::string body;
  PutVarint(&body, uint64_t{1} << 50);
  body += "short";
  auto back = RecordingFile::DecodeBody(body, "t.index", symbols::SymbolizerOptions{});
  EXPECT_THAT(std::string(back.status().message()),
              HasSubstr("t.index: the index is damaged: its index runs past the end"));
}

}  // namespace
}  // namespace pageblame::replay
