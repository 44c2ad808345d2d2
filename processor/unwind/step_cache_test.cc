#include "processor/unwind/step_cache.h"

#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace pageblame::unwind {
namespace {

StepCache::Entry WithVaddr(uint64_t vaddr) {
  StepCache::Entry e;
  e.code.kind = ModuleMap::kElf;
  e.code.vaddr = vaddr;
  e.code.vaddr_ok = true;
  return e;
}

TEST(StepCacheTest, KeepsAnEntryOnlyFromTheHistorysLatestTimeOn) {
  symbols::MappingHistory maps;
  maps.AddMapping(10, 100, 0x10000, 0x4000, 0, "/a", "");
  maps.AddMapping(10, 300, 0x20000, 0x1000, 0, "/b", "");
  StepCache steps(&maps);
  // Before 300 another answer may hold (a later mapping can cover the pc):
  // not kept, the lookups are made each time.
  EXPECT_EQ(steps.Put(10, 200, 0x10010, WithVaddr(1))->code.vaddr, 1u);
  EXPECT_EQ(steps.Find(10, 200, 0x10010), nullptr);
  EXPECT_EQ(steps.Find(10, 400, 0x10010), nullptr);
  steps.Put(10, 300, 0x10010, WithVaddr(2));
  ASSERT_NE(steps.Find(10, 500, 0x10010), nullptr);
  EXPECT_EQ(steps.Find(10, 500, 0x10010)->code.vaddr, 2u);
  EXPECT_EQ(steps.Find(10, 299, 0x10010), nullptr);
  EXPECT_EQ(steps.Find(11, 500, 0x10010), nullptr);  // another process
  EXPECT_EQ(steps.Find(10, 500, 0x10011), nullptr);  // another pc
  EXPECT_EQ(steps.hits(), 2u);
}

TEST(StepCacheTest, DropsEverythingWhenTheHistoryChanges) {
  symbols::MappingHistory maps;
  maps.AddMapping(10, 100, 0x10000, 0x4000, 0, "/a", "");
  StepCache steps(&maps);
  steps.Put(10, 200, 0x10010, WithVaddr(1));
  ASSERT_NE(steps.Find(10, 200, 0x10010), nullptr);
  // An older mapping read late (file order is not time order) over the pc.
  maps.AddMapping(10, 50, 0x10000, 0x1000, 0, "/c", "");
  EXPECT_EQ(steps.Find(10, 200, 0x10010), nullptr);
  steps.Put(10, 200, 0x10010, WithVaddr(3));
  maps.OnFork(11, 10, 150);
  EXPECT_EQ(steps.Find(10, 200, 0x10010), nullptr);
  steps.Put(10, 200, 0x10010, WithVaddr(4));
  maps.OnExec(10, 180);
  EXPECT_EQ(steps.Find(10, 200, 0x10010), nullptr);
}

TEST(StepCacheTest, NoHistoryIsAnEmptyOne) {
  StepCache steps(nullptr);
  steps.Put(1, 0, 0x1000, WithVaddr(5));
  ASSERT_NE(steps.Find(1, 7, 0x1000), nullptr);
  EXPECT_EQ(steps.Find(1, 7, 0x1000)->code.vaddr, 5u);
}

// More pcs than slots: a slot keeps the last put there; every answer is
// that pc's own or none.
TEST(StepCacheTest, ASlotAnswersOnlyForItsOwnPc) {
  symbols::MappingHistory maps;
  StepCache steps(&maps);
  const size_t n = 4 * StepCache::kSlots;
  for (uint64_t i = 0; i < n; ++i) steps.Put(static_cast<uint32_t>(i % 3), 1, 0x400000 + 5 * i, WithVaddr(i));
  size_t kept = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const StepCache::Entry* e = steps.Find(static_cast<uint32_t>(i % 3), 1, 0x400000 + 5 * i);
    if (e == nullptr) continue;
    EXPECT_EQ(e->code.vaddr, i);
    ++kept;
  }
  EXPECT_GT(kept, StepCache::kSlots / 2);
  EXPECT_LE(kept, StepCache::kSlots);
}

// What the cache rests on: with the history unchanged, Find answers the
// same at every time from latest_time() on, through forks, execs, mappings
// replaced and mappings added out of time order.
TEST(StepCacheTest, TheHistoryAnswersTheSameFromItsLatestTimeOn) {
  std::mt19937_64 rng(42);
  for (int round = 0; round < 200; ++round) {
    symbols::MappingHistory maps;
    const std::vector<std::string> paths = {"/a", "/b", "/c", "/d"};
    for (int op = 0; op < 12; ++op) {
      const uint32_t pid = 10 + static_cast<uint32_t>(rng() % 3);
      const uint64_t time = 100 + rng() % 1000;
      switch (rng() % 6) {
        case 0: maps.OnFork(pid, 10 + static_cast<uint32_t>(rng() % 3), time); break;
        case 1: maps.OnExec(pid, time); break;
        default:
          maps.AddMapping(pid, time, 0x10000 + (rng() % 8) * 0x1000, (1 + rng() % 4) * 0x1000, 0,
                          paths[rng() % paths.size()], "");
      }
    }
    const uint64_t latest = maps.latest_time();
    for (uint32_t pid = 10; pid < 13; ++pid) {
      for (uint64_t ip = 0xf800; ip < 0x19000; ip += 0x800) {
        const symbols::MappingHistory::Mapping* at_latest = maps.Find(pid, latest, ip);
        for (uint64_t later : {latest + 1, latest + 1000, uint64_t{1} << 62}) {
          EXPECT_EQ(maps.Find(pid, later, ip), at_latest) << "round " << round << " pid " << pid << " ip " << ip;
        }
      }
    }
  }
}

}  // namespace
}  // namespace pageblame::unwind
