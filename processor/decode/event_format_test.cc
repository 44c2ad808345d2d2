#include "processor/decode/event_format.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pageblame::decode {
namespace {

using ::testing::HasSubstr;

// As Linux 6.1's tracefs prints events/syscalls/sys_enter_mmap/format.
constexpr char kEnterMmap[] =
    "name: sys_enter_mmap\n"
    "ID: 174\n"
    "format:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
    "\n"
    "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
    "\tfield:unsigned long addr;\toffset:16;\tsize:8;\tsigned:0;\n"
    "\tfield:unsigned long len;\toffset:24;\tsize:8;\tsigned:0;\n"
    "\n"
    "print fmt: \"addr: 0x%08lx, len: 0x%08lx\", ((unsigned long)(REC->addr)), "
    "((unsigned long)(REC->len))\n";

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(EventFormatTest, ReadsNameIdAndLayout) {
  auto ev = EventFormat::Parse(kEnterMmap, "syscalls");
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(ev->system(), "syscalls");
  EXPECT_EQ(ev->name(), "sys_enter_mmap");
  EXPECT_EQ(ev->id(), 174);
  ASSERT_EQ(ev->fields().size(), 7u);
  EXPECT_TRUE(ev->fields()[3].common);
  EXPECT_FALSE(ev->fields()[4].common);
  const FieldFormat* len = ev->FindField("len");
  ASSERT_NE(len, nullptr);
  EXPECT_EQ(len->offset, 24);
  EXPECT_EQ(len->size, 8);
  EXPECT_FALSE(len->is_signed);
  EXPECT_EQ(len->type, "unsigned long");
  EXPECT_TRUE(ev->FindField("__syscall_nr")->is_signed);
  // Like libtraceevent's tep_find_field: common fields are not searched.
  EXPECT_EQ(ev->FindField("common_pid"), nullptr);
  EXPECT_EQ(ev->FindField("nope"), nullptr);
}

TEST(EventFormatTest, ArraysAndDynamicFieldsAreNamedAsLibtraceeventNamesThem) {
  std::string text = Replace(kEnterMmap, "unsigned long addr;\toffset:16;\tsize:8;",
                             "unsigned long args[6];\toffset:16;\tsize:48;");
  text = Replace(text, "unsigned long len;\toffset:24;",
                 "__data_loc char[] filename;\toffset:64;");
  text = Replace(text, "\tsize:8;\tsigned:0;\n\n", "\tsize:4;\tsigned:0;\n\n");
  auto ev = EventFormat::Parse(text, "syscalls");
  ASSERT_TRUE(ev.ok()) << ev.status();
  ASSERT_NE(ev->FindField("args"), nullptr);
  EXPECT_EQ(ev->FindField("args")->size, 48);
  EXPECT_EQ(ev->FindField("args")->type, "unsigned long[6]");
  ASSERT_NE(ev->FindField("filename"), nullptr);
  EXPECT_EQ(ev->FindField("filename")->type, "__data_loc char[]");
}

TEST(EventFormatTest, OlderKernelsWithoutSignedAndWithoutPrintFmt) {
  std::string text = kEnterMmap;
  for (size_t at; (at = text.find("\tsigned:0;")) != std::string::npos;) text.erase(at, 10);
  for (size_t at; (at = text.find("\tsigned:1;")) != std::string::npos;) text.erase(at, 10);
  text = text.substr(0, text.find("print fmt"));
  auto ev = EventFormat::Parse(text, "syscalls");
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_FALSE(ev->FindField("__syscall_nr")->is_signed);
  EXPECT_EQ(ev->FindField("len")->offset, 24);
}

// What crashed libtraceevent's tep_parse_event (issue 21): the print fmt is
// never read, whatever it holds.
TEST(EventFormatTest, ThePrintFmtLineIsNeverRead) {
  for (const std::string& fmt : {
           std::string("print fmt: \"0x%lx\", R/C->ret"),
           std::string("print fmt: \"%d\", 1/0"),
           std::string("print fmt: \"%d\", 5%0"),
           std::string("print fmt: \"%s\", __print_symbolic(REC->x, { 1/0, \"a\" }, {)"),
           std::string("print fmt: \"%s\", __print_flags(, \"|\", {{{{{{"),
           std::string("print fmt: \"%lx\", ((((((((((((((((((((((((((((((("),
           std::string("print fmt: \"\\"),
           std::string("print fmt: \xff\xfe\x00\x01", 15),
       }) {
    std::string text = kEnterMmap;
    text = text.substr(0, text.find("print fmt")) + fmt + "\n";
    auto ev = EventFormat::Parse(text, "syscalls");
    ASSERT_TRUE(ev.ok()) << ev.status() << " for " << fmt;
    EXPECT_EQ(ev->FindField("len")->offset, 24);
  }
}

TEST(EventFormatTest, MalformedPartsAreErrorsNamingTheLine) {
  struct Case {
    std::string from, to, why;
  };
  for (const Case& c : std::vector<Case>{
           {"name: sys_enter_mmap", "name: sys enter", "line 1: expected 'name: EVENT'"},
           {"ID: 174", "ID: 17x4", "line 2: expected 'ID: NUMBER'"},
           {"ID: 174", "ID: 99999999999", "line 2"},
           {"format:", "fromat:", "line 3: expected 'format:'"},
           {"offset:24;", "offset:2x4;", "line 11: bad offset '2x4'"},
           {"offset:24;", "offset:-24;", "bad offset"},
           {"size:8;\tsigned:0;\n\nprint", "size:65536;\tsigned:0;\n\nprint", "bad size '65536'"},
           {"offset:24;", "offset:65530;", "bad size"},  // offset + size past 64 KiB
           {"signed:1;\n\n", "signed:2;\n\n", "bad signed '2'"},
           {"unsigned long len;", "unsigned long 9len;", "bad field declaration"},
           {"unsigned long len;", "len;", "bad field declaration"},
           {"unsigned long len;", "unsigned long len];", "unbalanced ']'"},
           {"unsigned long len;", "unsigned long addr;", "a second field 'addr'"},
           {"\tsize:8;\tsigned:0;\n\nprint", "\tsize:8;\tsigned:0;junk\n\nprint", "text after"},
           {"\tfield:unsigned long len;", "\tfield:unsigned long len", "expected 'offset:N;'"},
           {"\tfield:unsigned long len;", "\tfeld:unsigned long len;", "expected 'field:"},
           {"\tfield:unsigned long len;", "\tfield:unsigned \x01long len;", "not text"},
           {"\tfield:unsigned long len;", "\tfield:unsigned long len;\toffset;", "offset:N"},
       }) {
    SCOPED_TRACE(c.to);
    auto ev = EventFormat::Parse(Replace(kEnterMmap, c.from, c.to), "syscalls");
    ASSERT_FALSE(ev.ok());
    EXPECT_EQ(ev.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(std::string(ev.status().message()), HasSubstr(c.why));
  }
  EXPECT_FALSE(EventFormat::Parse(kEnterMmap, "sys calls").ok());
  EXPECT_FALSE(EventFormat::Parse("", "syscalls").ok());
  EXPECT_FALSE(EventFormat::Parse("name: x\nID: 3\n", "syscalls").ok());
}

TEST(EventFormatTest, EveryCutOfAFormatIsAnErrorOrAPrefixOfItsFields) {
  const std::string full = kEnterMmap;
  for (size_t n = 0; n <= full.size(); ++n) {
    auto ev = EventFormat::Parse(full.substr(0, n), "syscalls");
    if (!ev.ok()) continue;
    EXPECT_EQ(ev->id(), 174) << n;
    EXPECT_LE(ev->fields().size(), 7u) << n;
  }
}

}  // namespace
}  // namespace pageblame::decode
