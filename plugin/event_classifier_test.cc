#include "plugin/event_classifier.h"

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace pageblame::plugin {
namespace {

// A raw_syscalls payload: 8 bytes of common fields, then `long id`.
std::vector<uint8_t> RawPayload(int64_t id) {
  std::vector<uint8_t> raw(8 + 8 + 6 * 8, 0);
  std::memcpy(raw.data() + 8, &id, sizeof(id));
  return raw;
}

TEST(EventClassifierTest, Names) {
  using K = EventClassifier::Kind;
  EXPECT_EQ(EventClassifier::ClassifyName("syscalls:sys_enter_mmap"), K::kMemory);
  EXPECT_EQ(EventClassifier::ClassifyName("syscalls:sys_exit_mremap"), K::kMemory);
  EXPECT_EQ(EventClassifier::ClassifyName("syscalls:sys_exit_brk"), K::kMemory);
  EXPECT_EQ(EventClassifier::ClassifyName("syscalls:sys_enter_munmap"), K::kMemory);
  EXPECT_EQ(EventClassifier::ClassifyName("syscalls:sys_enter_mprotect"), K::kMemory);
  EXPECT_EQ(EventClassifier::ClassifyName("syscalls:sys_exit_pkey_mprotect"), K::kMemory);
  EXPECT_EQ(EventClassifier::ClassifyName("syscalls:sys_enter_madvise"), K::kMemory);
  EXPECT_EQ(EventClassifier::ClassifyName("syscalls:sys_enter_mlock"), K::kOther);
  EXPECT_EQ(EventClassifier::ClassifyName("syscalls:sys_enter_mmap2"), K::kOther);
  EXPECT_EQ(EventClassifier::ClassifyName("raw_syscalls:sys_enter"), K::kRawEnter);
  EXPECT_EQ(EventClassifier::ClassifyName("raw_syscalls:sys_exit"), K::kRawExit);
  EXPECT_EQ(EventClassifier::ClassifyName("sched:sched_switch"), K::kOther);
  EXPECT_EQ(EventClassifier::ClassifyName(""), K::kOther);
}

TEST(EventClassifierTest, RawEventsByNumber) {
  EventClassifier c(*EventClassifier::NumbersForArch("x86_64"));
  static const char kRaw[] = "raw_syscalls:sys_enter";
  for (int64_t nr : {9, 11, 12, 25, 10, 329, 28}) {
    EXPECT_TRUE(c.IsMemorySyscall(kRaw, RawPayload(nr))) << nr;
  }
  for (int64_t nr : {0, 21, 59, 149, 222}) EXPECT_FALSE(c.IsMemorySyscall(kRaw, RawPayload(nr))) << nr;
  // A payload too short to hold the id is not a memory syscall.
  std::vector<uint8_t> short_raw(12, 0);
  EXPECT_FALSE(c.IsMemorySyscall(kRaw, short_raw));
  EXPECT_FALSE(c.IsMemorySyscall(nullptr, RawPayload(9)));
}

TEST(EventClassifierTest, RawExitSaysWhichSyscall) {
  EventClassifier c(*EventClassifier::NumbersForArch("x86_64"));
  EXPECT_EQ(c.RawExit("raw_syscalls:sys_exit", RawPayload(25)), decode::Syscall::kMremap);
  EXPECT_EQ(c.RawExit("raw_syscalls:sys_exit", RawPayload(11)), decode::Syscall::kMunmap);
  EXPECT_FALSE(c.RawExit("raw_syscalls:sys_exit", RawPayload(21)).has_value());
  EXPECT_FALSE(c.RawExit("raw_syscalls:sys_enter", RawPayload(9)).has_value());
  EXPECT_FALSE(c.RawExit("syscalls:sys_exit_mmap", RawPayload(9)).has_value());
}

TEST(EventClassifierTest, CachedPerNamePointer) {
  EventClassifier c(*EventClassifier::NumbersForArch(""));
  std::string name = "syscalls:sys_enter_brk";
  EXPECT_TRUE(c.IsMemorySyscall(name.c_str(), {}));
  EXPECT_TRUE(c.IsMemorySyscall(name.c_str(), {}));
  std::string other = "syscalls:sys_enter_read";
  EXPECT_FALSE(c.IsMemorySyscall(other.c_str(), {}));
}

TEST(EventClassifierTest, Arches) {
  EXPECT_EQ((*EventClassifier::NumbersForArch("aarch64"))[0], 222);
  EXPECT_FALSE(EventClassifier::NumbersForArch("sparc64").has_value());
}

}  // namespace
}  // namespace pageblame::plugin
