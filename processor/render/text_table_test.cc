// The first screen's table: columns from a list, padded, the last one cut
// to the width.
#include "processor/render/text_table.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace pageblame::render {
namespace {

struct Row {
  int rank;
  std::string what;
};

std::vector<TableColumn<Row>> Columns() {
  return {{"#", Align::kRight, [](const Row& r) { return r.rank ? absl::StrCat(r.rank) : ""; }},
          {"what", Align::kLeft, [](const Row& r) { return r.what; }}};
}

TEST(TextTableTest, PadsAndRulesTheTotal) {
  const std::vector<Row> rows = {{1, "malloc <- main"}, {12, "b"}};
  const Row total{0, "total"};
  EXPECT_EQ(RenderTable(Columns(), rows, &total, 80),
            "   #  what\n"
            "   1  malloc <- main\n"
            "  12  b\n"
            "  ------------------\n"
            "      total\n");
}

TEST(TextTableTest, CutsTheLastColumnToTheWidth) {
  const std::vector<Row> rows = {{1, std::string(200, 'x')}};
  const std::string out = RenderTable<Row>(Columns(), rows, nullptr, 60);
  const std::string line = out.substr(out.find('\n') + 1);
  EXPECT_EQ(line.size(), 60u + 1) << line;  // and its newline
  EXPECT_NE(line.find("xxx...\n"), std::string::npos);
}

TEST(TextTableTest, CountsCodePointsNotBytes) {
  const std::vector<Row> rows = {{1, "a \xe2\x86\x90 b"}, {2, "abcde"}};
  EXPECT_EQ(RenderTable<Row>(Columns(), rows, nullptr, 80),
            "  #  what\n"
            "  1  a \xe2\x86\x90 b\n"
            "  2  abcde\n");
}

// A method's row: the name whole even past the width, then as much context
// as fits, whole parts only; width 0 (a pipe) keeps every part.
TEST(TextTableTest, FitsPartsKeepingTheFirstWhole) {
  const std::string cell = absl::StrCat("Program::LeakNativeMemory", kPartBreak, " -> NativeMemory::Alloc",
                                        kPartBreak, " -> malloc");
  const std::vector<Row> rows = {{1, cell}};
  // "  1  " is 5 columns, the cell 25 + 23 + 10.
  EXPECT_EQ(RenderTable<Row>(Columns(), rows, nullptr, 63), "  #  what\n  1  Program::LeakNativeMemory -> NativeMemory::Alloc -> malloc\n");
  EXPECT_EQ(RenderTable<Row>(Columns(), rows, nullptr, 62), "  #  what\n  1  Program::LeakNativeMemory -> NativeMemory::Alloc\n");
  EXPECT_EQ(RenderTable<Row>(Columns(), rows, nullptr, 40), "  #  what\n  1  Program::LeakNativeMemory\n");
  EXPECT_EQ(RenderTable<Row>(Columns(), rows, nullptr, 0),
            "  #  what\n  1  Program::LeakNativeMemory -> NativeMemory::Alloc -> malloc\n");
  // A name longer than any width is still whole, and so is its rule.
  const std::vector<Row> long_name = {{1, absl::StrCat(std::string(90, 'n'), kPartBreak, " -> malloc")}};
  const Row total{0, "total"};
  const std::string out = RenderTable<Row>(Columns(), long_name, &total, 80);
  EXPECT_NE(out.find("  1  " + std::string(90, 'n') + "\n"), std::string::npos) << out;
  EXPECT_NE(out.find("  " + std::string(93, '-') + "\n"), std::string::npos) << out;
}

TEST(TextTableTest, WidthZeroCutsNothing) {
  const std::vector<Row> rows = {{1, std::string(300, 'x')}};
  EXPECT_EQ(RenderTable<Row>(Columns(), rows, nullptr, 0), "  #  what\n  1  " + std::string(300, 'x') + "\n");
}

}  // namespace
}  // namespace pageblame::render
