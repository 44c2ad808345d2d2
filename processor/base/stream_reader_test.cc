// StreamReader over sources that hand out bytes in pieces of every size,
// ZstdSink and ZstdSource through it, and AtomicFile written in pieces.
#include "processor/base/stream_reader.h"
#include "processor/base/piece_source_for_test.h"

#include <sys/stat.h>
#include <zstd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/atomic_file.h"
#include "processor/base/byte_sink.h"
#include "processor/base/byte_writer.h"
#include "processor/base/temp_dir_for_test.h"
#include "processor/base/zstd_sink.h"
#include "processor/base/zstd_source.h"

namespace pageblame {
namespace {

using ::testing::HasSubstr;


// A table as the index writes one: a count, then rows of a u64, a u32 and a string.
std::string Table(int rows) {
  std::string out;
  PutFixed<uint64_t>(&out, rows);
  for (int i = 0; i < rows; ++i) {
    PutFixed<uint64_t>(&out, 0x0102030405060708ull * i);
    PutFixed<uint32_t>(&out, i);
    PutString(&out, std::string(i % 40, static_cast<char>('a' + i % 26)));
  }
  return out;
}

// The table read back from `r`; "" or what went wrong.
std::string ReadTable(StreamReader* r, int rows) {
  uint64_t n = 0;
  if (!r->Read(&n) || n != static_cast<uint64_t>(rows)) return "count";
  for (int i = 0; i < rows; ++i) {
    uint64_t a = 0;
    uint32_t b = 0;
    std::string_view s;
    if (!r->Read(&a) || !r->Read(&b) || !r->ReadString(&s)) return "row " + std::to_string(i) + " is cut";
    if (a != 0x0102030405060708ull * i || b != static_cast<uint32_t>(i) ||
        s != std::string(i % 40, static_cast<char>('a' + i % 26))) {
      return "row " + std::to_string(i) + " differs";
    }
  }
  return r->empty() ? "" : "bytes follow";
}

TEST(StreamReaderTest, EntriesCutAcrossPiecesOfEverySizeReadWhole) {
  const std::string bytes = Table(300);
  {
    StreamReader whole(bytes);
    EXPECT_EQ(ReadTable(&whole, 300), "");
  }
  // Pieces of 1..29 bytes from the source and a reader piece of 16: every
  // u64, u32 and string is cut at every offset somewhere.
  for (size_t source_piece = 1; source_piece < 30; ++source_piece) {
    PieceSource src(bytes, source_piece);
    StreamReader r(&src, bytes.size(), 16);
    EXPECT_EQ(ReadTable(&r, 300), "") << "pieces of " << source_piece;
    EXPECT_TRUE(r.status().ok());
    EXPECT_EQ(src.furthest(), bytes.size()) << "asked for more than the stream declares";
  }
}

TEST(StreamReaderTest, AStreamCutAtEveryPieceBoundarySaysWhereItEnds) {
  const std::string bytes = Table(50);
  for (size_t cut = 0; cut < bytes.size(); cut += 16) {
    PieceSource src(bytes.substr(0, cut), 16);
    StreamReader r(&src, bytes.size(), 16);  // declares the whole size
    EXPECT_NE(ReadTable(&r, 50), "") << "cut at " << cut;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << "cut at " << cut;
    EXPECT_THAT(std::string(r.status().message()),
                HasSubstr("stream ends at byte " + std::to_string(cut) + " of the " + std::to_string(bytes.size())));
  }
}

TEST(StreamReaderTest, ALengthPastTheDeclaredEndIsRefusedBeforeAnythingIsPulled) {
  std::string bytes;
  PutVarint(&bytes, uint64_t{1} << 40);  // a string of a TiB
  bytes += "tiny";
  PieceSource src(bytes, 4);
  StreamReader r(&src, bytes.size(), 16);
  std::string_view s;
  EXPECT_FALSE(r.ReadString(&s));
  EXPECT_TRUE(r.status().ok()) << "refused by the declared size, not by the source";
  EXPECT_LE(src.furthest(), 16u);
  // A count checked against remaining() the same way: the declared bytes.
  EXPECT_EQ(r.remaining(), bytes.size() - r.pos());
}

TEST(StreamReaderTest, ALongStringGrowsTheBufferOnlyAsItsBytesArrive) {
  std::string bytes;
  PutString(&bytes, std::string(100000, 'x'));
  PieceSource src(bytes, 333);
  StreamReader r(&src, bytes.size(), 64);
  std::string s;
  ASSERT_TRUE(r.ReadString(&s));
  EXPECT_EQ(s, std::string(100000, 'x'));
  EXPECT_TRUE(r.empty());
}

TEST(StreamReaderTest, LimitNarrowsReadsToAPart) {
  std::string bytes;
  PutFixed<uint64_t>(&bytes, 1);
  PutFixed<uint64_t>(&bytes, 2);
  PieceSource src(bytes, 3);
  StreamReader r(&src, bytes.size(), 16);
  const uint64_t end = r.Limit(8);
  uint64_t v = 0;
  ASSERT_TRUE(r.Read(&v));
  EXPECT_EQ(v, 1u);
  EXPECT_TRUE(r.empty());
  EXPECT_FALSE(r.Read(&v));
  r.Unlimit(end);
  ASSERT_TRUE(r.Read(&v));
  EXPECT_EQ(v, 2u);
}

std::string Compressed(const std::string& content) {
  std::string frame;
  StringSink out(&frame);
  ZstdSink z(&out, 3, content.size());
  // In uneven pieces, as an encoder appends them.
  for (size_t at = 0; at < content.size(); at += 777) z.Append(std::string_view(content).substr(at, 777));
  EXPECT_TRUE(z.Finish().ok());
  return frame;
}

// The content of `frame` read through a ZstdSource from a file reader of
// `piece`-byte pieces, then Finish(); the first error.
absl::Status Decompress(const std::string& frame, uint64_t size, size_t piece, std::string* content) {
  PieceSource file(frame, piece);
  StreamReader in(&file, frame.size(), piece);
  ZstdSource z(&in);
  StreamReader body(&z, size, piece);
  std::string_view v;
  while (!body.empty()) {
    if (!body.ReadSome(1000, &v)) return body.status();
    content->append(v);
  }
  return z.Finish();
}

TEST(ZstdStreamTest, AFrameWrittenAndReadInPiecesIsTheContent) {
  const std::string content = Table(20000);
  const std::string frame = Compressed(content);
  EXPECT_LT(frame.size(), content.size() / 2);
  // One frame that says its size, as a reader of the whole frame checks it.
  EXPECT_EQ(ZSTD_getFrameContentSize(frame.data(), frame.size()), content.size());
  for (size_t piece : {size_t{7}, size_t{4096}, StreamReader::kPiece}) {
    std::string got;
    ASSERT_TRUE(Decompress(frame, content.size(), piece, &got).ok()) << piece;
    EXPECT_EQ(got, content);
  }
}

TEST(ZstdStreamTest, ACutDamagedOrLongerFrameIsAnError) {
  const std::string content = Table(5000);
  const std::string frame = Compressed(content);
  for (size_t cut = 0; cut < frame.size(); cut += std::max<size_t>(frame.size() / 50, 1)) {
    std::string got;
    const absl::Status s = Decompress(frame.substr(0, cut), content.size(), 256, &got);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << "cut at " << cut;
  }
  std::string flipped = frame;
  flipped[flipped.size() / 2] ^= 0x20;
  std::string got;
  EXPECT_EQ(Decompress(flipped, content.size(), 256, &got).code(), absl::StatusCode::kDataLoss);
  got.clear();
  EXPECT_THAT(std::string(Decompress(frame + "x", content.size(), 256, &got).message()), HasSubstr("follow"));
  got.clear();
  // Read as shorter than it is: the frame holds more.
  EXPECT_EQ(Decompress(frame, content.size() - 1, 256, &got).code(), absl::StatusCode::kDataLoss);
}

TEST(ZstdStreamTest, BytesThatDoNotComeToTheSizeTheFrameSaysFailFinish) {
  std::string frame;
  StringSink out(&frame);
  ZstdSink z(&out, 3, 100);
  z.Append(std::string(99, 'a'));
  EXPECT_FALSE(z.Finish().ok());
}

TEST(AtomicFileTest, PiecesAndAnOverwriteLandWholeOnlyAtCommit) {
  TempDir dir("pb_atomic");
  const std::string path = dir.path() + "/f.index";
  {
    auto f = AtomicFile::Create(path, 0600);
    ASSERT_TRUE(f.ok()) << f.status();
    (*f)->Append("head");
    (*f)->Append("XXXX");
    (*f)->Append("tail");
    (*f)->Overwrite(4, "body");
    EXPECT_FALSE(std::filesystem::exists(path));
    ASSERT_TRUE((*f)->Commit().ok());
  }
  std::ifstream in(path);
  std::stringstream got;
  got << in.rdbuf();
  EXPECT_EQ(got.str(), "headbodytail");
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  {
    auto f = AtomicFile::Create(path, 0600);
    ASSERT_TRUE(f.ok());
    (*f)->Append("half");  // dropped without Commit
  }
  std::ifstream again(path);
  std::stringstream kept;
  kept << again.rdbuf();
  EXPECT_EQ(kept.str(), "headbodytail");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1) << "a temporary file was left";
  EXPECT_EQ(AtomicFile::Create(dir.path() + "/missing/f", 0600).status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace pageblame
