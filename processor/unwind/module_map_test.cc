#include "processor/unwind/module_map.h"

#include "gtest/gtest.h"
#include "processor/symbols/mapping_history.h"

namespace pageblame::unwind {
namespace {

constexpr uint32_t kPid = 10;

TEST(ModuleMapTest, ReadsTheSharedHistoryAsItGrows) {
  symbols::MappingHistory maps;
  ModuleMap modules(symbols::DsoLocator::Options{}, &maps);
  EXPECT_EQ(modules.Find(kPid, 100, 0x10010).kind, ModuleMap::kNone);
  // Added after the ModuleMap was made: the same object is read.
  maps.AddMapping(kPid, 50, 0x10000, 0x1000, 0, "//anon", "");
  EXPECT_EQ(modules.Find(kPid, 100, 0x10010).kind, ModuleMap::kJit);
}

TEST(ModuleMapTest, AFileNotFoundIsElfWithoutAModule) {
  symbols::MappingHistory maps;
  maps.AddMapping(kPid, 50, 0x20000, 0x1000, 0, "/nonexistent/libgone.so", "");
  ModuleMap modules(symbols::DsoLocator::Options{}, &maps);
  const ModuleMap::Code c = modules.Find(kPid, 100, 0x20010);
  EXPECT_EQ(c.kind, ModuleMap::kElf);
  EXPECT_EQ(c.module, nullptr);
  EXPECT_EQ(modules.stats().files_missing, 1u);
}

TEST(ModuleMapTest, NoHistoryIsNoCode) {
  ModuleMap modules(symbols::DsoLocator::Options{}, nullptr);
  EXPECT_EQ(modules.Find(kPid, 100, 0x10010).kind, ModuleMap::kNone);
}

}  // namespace
}  // namespace pageblame::unwind
