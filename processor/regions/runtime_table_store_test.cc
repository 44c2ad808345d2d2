#include "processor/regions/runtime_table_store.h"

#include <sys/stat.h>

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/base/temp_dir_for_test.h"

namespace pageblame::regions {
namespace {

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(RuntimeTableStoreTest, NamesAndTheLatestAtOrBefore) {
  TempDir dir("pb_runtime_tables");
  const std::string trace = dir.path() + "/app.data";
  EXPECT_TRUE(RuntimeTableStore::List(trace).empty());  // no directory
  ASSERT_EQ(::mkdir(RuntimeTableStore::DirFor(trace).c_str(), 0700), 0);
  EXPECT_EQ(RuntimeTableStore::PathFor(trace, 42, 1000), dir.path() + "/app.data.runtime/42-1000.txt");
  Write(RuntimeTableStore::PathFor(trace, 42, 3000), "t");
  Write(RuntimeTableStore::PathFor(trace, 42, 1000), "t");
  Write(RuntimeTableStore::PathFor(trace, 7, 2000), "t");
  Write(RuntimeTableStore::DirFor(trace) + "/notes.txt", "the user's");
  Write(RuntimeTableStore::DirFor(trace) + "/0-5.txt", "pid 0 is no process");
  const std::vector<RuntimeTableStore::Entry> all = RuntimeTableStore::List(trace);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].pid, 7u);
  EXPECT_EQ(all[1].time, 1000u);
  EXPECT_EQ(all[2].time, 3000u);
  EXPECT_EQ(RuntimeTableStore::Latest(all, 42, 2999)->time, 1000u);
  EXPECT_EQ(RuntimeTableStore::Latest(all, 42, 3000)->time, 3000u);
  EXPECT_EQ(RuntimeTableStore::Latest(all, 42, 99999)->path, dir.path() + "/app.data.runtime/42-3000.txt");
  EXPECT_FALSE(RuntimeTableStore::Latest(all, 42, 999).has_value());
  EXPECT_FALSE(RuntimeTableStore::Latest(all, 8, 99999).has_value());
  EXPECT_FALSE(RuntimeTableStore::ParseName("42-1000.txt.swp").has_value());
  EXPECT_FALSE(RuntimeTableStore::ParseName("x-1000.txt").has_value());
}

}  // namespace
}  // namespace pageblame::regions
