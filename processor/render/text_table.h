// The first screen's table: columns given as a list, each with its header,
// its alignment and how a row says its cell, so that a column (resident
// bytes, say) is added in one place. Cells are padded to the widest; the
// last column is cut to keep each line within `width` characters (0: no
// limit, whole lines), or, where its cell marks the places it may be cut
// (kPartBreak), fitted: its first part whole whatever the width (the name
// a user looks for is never cut), then as many of the other parts as fit.
//
//   std::vector<TableColumn<Row>> cols = {
//       {"#", Align::kRight, [](const Row& r) { return absl::StrCat(r.rank); }},
//       {"committed", Align::kRight, [](const Row& r) { return HumanBytes(r.bytes); }},
//       {"app frames", Align::kLeft, [](const Row& r) { return r.frames; }}};
//   std::string text = RenderTable(cols, rows, &total_row, 120);
#ifndef PAGEBLAME_RENDER_TEXT_TABLE_H_
#define PAGEBLAME_RENDER_TEXT_TABLE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace pageblame::render {

enum class Align { kLeft, kRight };

// In a cell of the last column: where it may be cut. The part before the
// first mark is kept whole; each later part only if the line, with it,
// stays within the width (strictly: the 20 columns a cut cell may always
// use do not count here) and all before it were kept; the marks are not
// printed. Names are escaped before they reach a table (EscapeName says
// every C0 control as \xNN), so no name holds one.
//   absl::StrCat("Program::Leak", kPartBreak, " -> NativeMemory::Alloc", kPartBreak, " -> malloc")
inline constexpr char kPartBreak[] = "\x1f";

template <typename Row>
struct TableColumn {
  std::string header;
  Align align = Align::kRight;
  std::function<std::string(const Row&)> cell;
};

// Lines of cells, each line indented by two spaces, columns two spaces
// apart; `rule` (>= 0) puts a line of dashes before row `rule` (the total).
// UTF-8 text is measured in code points. `width` 0: no line is cut.
std::string RenderCells(const std::vector<Align>& align, const std::vector<std::vector<std::string>>& lines,
                        int rule, size_t width);

// The header, the rows, then (if given) a rule and the total row.
template <typename Row>
std::string RenderTable(const std::vector<TableColumn<Row>>& columns, const std::vector<Row>& rows,
                        const Row* total, size_t width) {
  std::vector<Align> align;
  std::vector<std::vector<std::string>> lines(1);
  for (const TableColumn<Row>& c : columns) {
    align.push_back(c.align);
    lines[0].push_back(c.header);
  }
  auto add = [&](const Row& r) {
    lines.emplace_back();
    for (const TableColumn<Row>& c : columns) lines.back().push_back(c.cell(r));
  };
  for (const Row& r : rows) add(r);
  int rule = -1;
  if (total) {
    rule = static_cast<int>(lines.size());
    add(*total);
  }
  return RenderCells(align, lines, rule, width);
}

// "  ... 12 more stacks with committed bytes (--detail lists every stack)",
// or "" when `more` is 0: under a top table cut at its row limit.
inline std::string MoreStacksLine(size_t more, bool detail) {
  if (more == 0) return "";
  return absl::StrCat("  ... ", more, " more stacks with committed bytes",
                      detail ? " (all below)" : " (--detail lists every stack)", "\n");
}

}  // namespace pageblame::render

#endif  // PAGEBLAME_RENDER_TEXT_TABLE_H_
