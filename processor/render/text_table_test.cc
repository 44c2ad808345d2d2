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

}  // namespace
}  // namespace pageblame::render
