// Next() and the Parse* methods must not allocate per record: traces have
// millions of them. This binary replaces the global operator new to count
// allocations while a whole fixture is read (its own binary, so the other
// tests keep the ordinary allocator).
#include <cstdlib>
#include <new>
#include <string>

#include "gtest/gtest.h"
#include "processor/base/temp_file_for_test.h"
#include "processor/perf/compressed_test_util.h"
#include "processor/perf/perf_reader.h"

namespace {
bool g_counting = false;
size_t g_allocations = 0;
}  // namespace

// GCC cannot see that this malloc/free pair is the replaced new/delete.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

void* operator new(size_t n) {
  if (g_counting) ++g_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace pageblame::perf {
namespace {

std::string Fixture(const std::string& name) {
  return std::string(PAGEBLAME_SOURCE_DIR) + "/processor/perf/testdata/" + name;
}

// Reads every record, parsing each kind replay uses; returns the number of
// allocations made after Open().
size_t AllocationsWhileReading(const std::string& path, int* records) {
  auto reader = PerfReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return ~size_t{0};
  PerfReader& r = **reader;
  RawRecord rec;
  Sample s;
  CommRecord c;
  TaskRecord t;
  MmapRecord m;
  *records = 0;
  g_allocations = 0;
  g_counting = true;
  while (true) {
    absl::StatusOr<bool> more = r.Next(&rec);
    if (!more.ok() || !*more) break;
    ++*records;
    absl::Status st;
    if (rec.type == kRecordSample) st = r.ParseSample(rec, &s);
    if (rec.type == kRecordComm) st = r.ParseComm(rec, &c);
    if (rec.type == kRecordFork || rec.type == kRecordExit) st = r.ParseTask(rec, &t);
    if (rec.type == kRecordMmap || rec.type == kRecordMmap2) st = r.ParseMmap(rec, &m);
    if (!st.ok()) break;
  }
  g_counting = false;
  return g_allocations;
}

TEST(PerfAllocTest, FileModeReadsWithoutAllocating) {
  int records = 0;
  EXPECT_EQ(AllocationsWhileReading(Fixture("trace_record.data"), &records), 0u);
  EXPECT_EQ(records, 130);
}

TEST(PerfAllocTest, PipeModeReadsWithoutAllocating) {
  int records = 0;
  EXPECT_EQ(AllocationsWhileReading(Fixture("pipe.data"), &records), 0u);
  EXPECT_EQ(records, 40);
}

TEST(PerfAllocTest, CompressedReadsAllocateOnlyOnceForTheWholeTrace) {
  // The decompressor, its buffer and its zstd context (which allocates
  // with malloc, not counted) are made at the first COMPRESSED record;
  // nothing after that, however many records follow.
  for (const char* name : {"node-trace.data", "rules-pipe.data"}) {
    SCOPED_TRACE(name);
    const std::string bytes =
        testing::ReadBytes(std::string(PAGEBLAME_SOURCE_DIR) + "/traces/" + name);
    TempFile f(testing::CompressedCopy(bytes, format::kRecordCompressed2, 4096));
    int records = 0;
    EXPECT_LE(AllocationsWhileReading(f.path(), &records), 4u);
    EXPECT_GT(records, 300);
  }
}

TEST(PerfAllocTest, CounterWorks) {
  g_allocations = 0;
  g_counting = true;
  auto* p = new std::string(100, 'x');
  g_counting = false;
  delete p;
  EXPECT_GE(g_allocations, 1u);
}

}  // namespace
}  // namespace pageblame::perf
