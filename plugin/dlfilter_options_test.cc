#include "plugin/dlfilter_options.h"

#include <cstdio>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pageblame::plugin {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(DlfilterOptionsTest, PagesInEveryAddressSpelling) {
  auto o = ParseDlfilterArgs({"pages=0x7f3bad120000,7f3bad121fff", "pages=7f3b`ad130000"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_THAT(o->pages, ElementsAre(0x7f3bad120000u, 0x7f3bad121fffu, 0x7f3bad130000u));
  EXPECT_FALSE(o->keep_all());
  EXPECT_EQ(o->summary, Summary::kText);
  EXPECT_FALSE(o->pid.has_value());
}

TEST(DlfilterOptionsTest, NoArgumentsKeepsAll) {
  auto o = ParseDlfilterArgs({});
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->keep_all());
}

TEST(DlfilterOptionsTest, PidSummaryTrace) {
  auto o = ParseDlfilterArgs({"pid=6640", "summary=json", "trace=/tmp/x.data"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->pid, 6640u);
  EXPECT_EQ(o->summary, Summary::kJson);
  EXPECT_EQ(o->trace, "/tmp/x.data");
  EXPECT_EQ(ParseDlfilterArgs({"summary=none"})->summary, Summary::kNone);
}

TEST(DlfilterOptionsTest, RegionsFromATable) {
  std::string path = ::testing::TempDir() + "/plugin_regions.txt";
  {
    std::ofstream f(path);
    f << "7f0000001000-7f0000003000 rw-p 00000000 00:00 0\n"
         "7f0000010000-7f0000011000 r--p 00000000 00:00 0 /lib/x.so\n";
  }
  auto o = ParseDlfilterArgs({"regions=" + path});
  ASSERT_TRUE(o.ok()) << o.status();
  ASSERT_EQ(o->regions.size(), 2u);
  EXPECT_EQ(o->regions[0].start, 0x7f0000001000u);
  EXPECT_EQ(o->regions[0].end, 0x7f0000003000u);
  EXPECT_EQ(o->regions[1].line, 2);
  EXPECT_EQ(o->regions[1].file, path);
  std::remove(path.c_str());
}

TEST(DlfilterOptionsTest, AtTakesTheCliTimes) {
  auto o = ParseDlfilterArgs({"pages=0x1000", "at=+1.5"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->at.kind, session::TimeSpec::Kind::kFromStart);
  EXPECT_EQ(o->at.ns, 1500000000u);
  EXPECT_EQ(ParseDlfilterArgs({"at=peak"})->at.kind, session::TimeSpec::Kind::kPeak);
  EXPECT_EQ(ParseDlfilterArgs({})->at.kind, session::TimeSpec::Kind::kEnd);
}

TEST(DlfilterOptionsTest, BadValuesNameTheArgument) {
  struct Case {
    std::string arg, why;
  };
  for (const Case& c : std::vector<Case>{{"pages=0xzz", "pages=0xzz"},
                                         {"pages=0x1000,,0x2000", "empty address"},
                                         {"pages=", "empty value"},
                                         {"pid=abc", "process id"},
                                         {"pid=-3", "process id"},
                                         {"summary=xml", "text, json or none"},
                                         {"at=yesterday", "at=yesterday"},
                                         {"colour=red", "unknown key"},
                                         {"0x7f00", "KEY=VALUE"},
                                         {"regions=/nonexistent/table.txt", "regions="}}) {
    auto o = ParseDlfilterArgs({c.arg});
    ASSERT_FALSE(o.ok()) << c.arg;
    EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument) << c.arg;
    EXPECT_THAT(std::string(o.status().message()), HasSubstr(c.why)) << c.arg;
    EXPECT_EQ(std::string(o.status().message()).find('\n'), std::string::npos) << c.arg;
  }
}

}  // namespace
}  // namespace pageblame::plugin
