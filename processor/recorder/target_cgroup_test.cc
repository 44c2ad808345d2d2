#include "processor/recorder/target_cgroup.h"

#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace pageblame::recorder {
namespace {

// /proc/self/mountinfo of a hybrid machine (this one: v1 controllers, v2 at
// .../unified) and of a v2-only one (Debian 12's default).
constexpr char kHybrid[] =
    "30 25 0:26 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "31 25 0:27 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "35 25 0:31 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
constexpr char kV2Only[] =
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    "27 21 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate\n";
constexpr char kV1PerfEvent[] =
    "35 25 0:31 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
    "36 25 0:32 / /sys/fs/cgroup/perf_event rw,relatime - cgroup cgroup rw,perf_event\n";

TEST(TargetCgroupTest, PerfsHierarchyIsV1PerfEventElseV2) {
  std::optional<TargetCgroup::Mount> m = TargetCgroup::PerfHierarchy(kHybrid);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->path, "/sys/fs/cgroup/unified");
  EXPECT_FALSE(m->v1);
  m = TargetCgroup::PerfHierarchy(kV2Only);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->path, "/sys/fs/cgroup");
  m = TargetCgroup::PerfHierarchy(kV1PerfEvent);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->path, "/sys/fs/cgroup/perf_event");
  EXPECT_TRUE(m->v1);
  EXPECT_FALSE(TargetCgroup::PerfHierarchy("22 1 8:1 / / rw - ext4 /dev/sda1 rw\nbroken line\n").has_value());
}

TEST(TargetCgroupTest, ThePathInThatHierarchy) {
  const char proc_cgroup[] =
      "9:name=systemd:/system.slice/shop.service\n"
      "4:memory:/system.slice/shop.service\n"
      "3:perf_event,net_cls:/perf/shop\n"
      "0::/system.slice/shop.service\n";
  EXPECT_EQ(TargetCgroup::PathIn(proc_cgroup, false), "/system.slice/shop.service");
  EXPECT_EQ(TargetCgroup::PathIn(proc_cgroup, true), "/perf/shop");
  EXPECT_FALSE(TargetCgroup::PathIn("4:memory:/x\n", true).has_value());
  EXPECT_FALSE(TargetCgroup::PathIn("", false).has_value());
}

TEST(TargetCgroupTest, MembersCountedWhenTheProcessIsOne) {
  EXPECT_EQ(TargetCgroup::MembersWith("4242\n", 4242), 1);
  EXPECT_EQ(TargetCgroup::MembersWith("17\n4242\n4243\n", 4242), 3);
  EXPECT_EQ(TargetCgroup::MembersWith("17\n", 4242), 0);
  EXPECT_EQ(TargetCgroup::MembersWith("", 4242), 0);  // unreadable or empty
  EXPECT_EQ(TargetCgroup::MembersWith("4242\nx\n", 4242), 0);
}

// This test process on this machine: never its cgroup when it shares it
// (ctest's other processes, a shell) or sits in the root, and always a reason.
TEST(TargetCgroupTest, SaysWhyNot) {
  std::string why;
  const std::optional<TargetCgroup::Choice> g = TargetCgroup::SmallCgroupOf(1u << 30, &why);  // no such pid
  EXPECT_FALSE(g.has_value());
  EXPECT_FALSE(why.empty());
}

}  // namespace
}  // namespace pageblame::recorder
