// MemoryEventKind and the syscall tables, against the kernel's own spelling
// of the tracepoints (/sys/kernel/tracing/events/syscalls/) and its syscall
// tables, written out here independently of memory_event_kind.cc.
#include "processor/decode/memory_event_kind.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace pageblame::decode {
namespace {

using K = MemoryEventKind::Kind;

struct Expected {
  Syscall syscall;
  const char* name;
  int64_t x86_64, arm64;  // arch/x86/entry/syscalls/syscall_64.tbl, asm-generic/unistd.h
};
constexpr Expected kSeven[] = {
    {Syscall::kMmap, "mmap", 9, 222},
    {Syscall::kMunmap, "munmap", 11, 215},
    {Syscall::kBrk, "brk", 12, 214},
    {Syscall::kMremap, "mremap", 25, 216},
    {Syscall::kMprotect, "mprotect", 10, 226},
    {Syscall::kPkeyMprotect, "pkey_mprotect", 329, 288},
    {Syscall::kMadvise, "madvise", 28, 233},
};

TEST(MemoryEventKindTest, EveryMemorySyscallsEnterAndExit) {
  static_assert(sizeof(kSeven) / sizeof(kSeven[0]) == kSyscallCount);
  for (const Expected& e : kSeven) {
    EXPECT_EQ(SyscallName(e.syscall), e.name);
    const MemoryEventKind enter = MemoryEventKind::Of(std::string("syscalls:sys_enter_") + e.name);
    EXPECT_EQ(enter.kind(), K::kEnter) << e.name;
    EXPECT_EQ(enter.syscall(), e.syscall) << e.name;
    EXPECT_EQ(enter.TracepointName(), std::string("sys_enter_") + e.name);
    const MemoryEventKind exit = MemoryEventKind::Of("syscalls", std::string("sys_exit_") + e.name);
    EXPECT_EQ(exit.kind(), K::kExit) << e.name;
    EXPECT_EQ(exit.syscall(), e.syscall) << e.name;
    EXPECT_EQ(exit.TracepointName(), std::string("sys_exit_") + e.name);
    EXPECT_FALSE(enter.is_raw());
  }
}

TEST(MemoryEventKindTest, RawSyscallsByName) {
  EXPECT_EQ(MemoryEventKind::Of("raw_syscalls:sys_enter").kind(), K::kRawEnter);
  EXPECT_EQ(MemoryEventKind::Of("raw_syscalls", "sys_exit").kind(), K::kRawExit);
  EXPECT_TRUE(MemoryEventKind::Of("raw_syscalls:sys_exit").is_raw());
  EXPECT_EQ(MemoryEventKind::Of("raw_syscalls:sys_enter").TracepointName(), "sys_enter");
  EXPECT_EQ(MemoryEventKind::Of("raw_syscalls:sys_exit").TracepointName(), "sys_exit");
}

TEST(MemoryEventKindTest, OtherEvents) {
  for (const char* event :
       {"syscalls:sys_enter_mlock", "syscalls:sys_enter_mmap2", "syscalls:sys_enter_", "syscalls:sys_mmap",
        "syscalls:sys_enter_mmap/call-graph=fp/",  // terms are the caller's to strip
        "raw_syscalls:sys_enter_mmap", "syscalls:sys_enter", "sched:sched_switch", "sys_enter_mmap",
        "syscalls:sys_enter_mmap:x", ":", ""}) {
    const MemoryEventKind k = MemoryEventKind::Of(event);
    EXPECT_EQ(k.kind(), K::kOther) << event;
    EXPECT_FALSE(k.is_raw()) << event;
    EXPECT_EQ(k.TracepointName(), "") << event;
  }
  EXPECT_EQ(MemoryEventKind::Of("sched", "sys_enter_mmap").kind(), K::kOther);
  EXPECT_EQ(MemoryEventKind::Of("syscalls", "sys_exit").kind(), K::kOther);
}

TEST(MemoryEventKindTest, EqualityIsKindAndSyscall) {
  EXPECT_EQ(MemoryEventKind::Of("syscalls:sys_enter_brk"), MemoryEventKind::Of("syscalls", "sys_enter_brk"));
  EXPECT_NE(MemoryEventKind::Of("syscalls:sys_enter_brk"), MemoryEventKind::Of("syscalls:sys_exit_brk"));
  EXPECT_NE(MemoryEventKind::Of("syscalls:sys_enter_brk"), MemoryEventKind::Of("syscalls:sys_enter_mmap"));
  EXPECT_EQ(MemoryEventKind::Of("a:b"), MemoryEventKind::Of("syscalls:sys_enter_read"));
}

TEST(MemoryEventKindTest, RawNumbersPerArch) {
  const auto x86 = RawSyscallNumbers("x86_64");
  const auto blank = RawSyscallNumbers("");  // perf writes no HEADER_ARCH: x86_64
  const auto arm = RawSyscallNumbers("aarch64");
  ASSERT_TRUE(x86 && blank && arm);
  EXPECT_EQ(*RawSyscallNumbers("arm64"), *arm);
  EXPECT_EQ(*RawSyscallNumbers("riscv64"), *arm);  // both asm-generic
  for (const Expected& e : kSeven) {
    EXPECT_EQ((*x86)[static_cast<int>(e.syscall)], e.x86_64) << e.name;
    EXPECT_EQ((*blank)[static_cast<int>(e.syscall)], e.x86_64) << e.name;
    EXPECT_EQ((*arm)[static_cast<int>(e.syscall)], e.arm64) << e.name;
    EXPECT_EQ(SyscallOfNumber(*x86, e.x86_64), e.syscall) << e.name;
    EXPECT_EQ(SyscallOfNumber(*arm, e.arm64), e.syscall) << e.name;
  }
  for (int64_t other : {0, 1, 21, 59, 149, -1}) EXPECT_FALSE(SyscallOfNumber(*x86, other)) << other;
  EXPECT_FALSE(SyscallOfNumber(*arm, 9));  // x86_64's mmap; lgetxattr on arm64
  EXPECT_FALSE(RawSyscallNumbers("sparc64").has_value());
  EXPECT_FALSE(RawSyscallNumbers("i686").has_value());
}

}  // namespace
}  // namespace pageblame::decode
