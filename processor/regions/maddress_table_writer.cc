#include "processor/regions/maddress_table_writer.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace pageblame::regions {
namespace {

constexpr size_t kColumns = 9;
using Cells = std::array<std::string, kColumns>;

Cells RowCells(const RuntimeRow& r) {
  return {r.kind,
          absl::StrFormat("%x", r.start),
          absl::StrFormat("%x", r.end),
          MaddressTableWriter::HumanSize(r.end - r.start),
          r.type,
          r.state,
          r.protect,
          absl::StrReplaceAll(r.image, {{"|", "/"}}),
          absl::StrReplaceAll(r.detail, {{"|", "/"}})};
}

std::string Line(const Cells& c, const std::array<size_t, kColumns>& width) {
  std::string out = " |";
  for (size_t i = 0; i < kColumns; ++i) {
    // Addresses and sizes right-aligned, as maddress prints them.
    const bool right = i >= 1 && i <= 3;
    absl::StrAppend(&out, " ", (right ? absl::StrFormat("%*s", width[i], c[i]) : absl::StrFormat("%-*s", width[i], c[i])), " |");
  }
  return absl::StrCat(out, "\n");
}

}  // namespace

std::string MaddressTableWriter::HumanSize(uint64_t bytes) {
  double v = static_cast<double>(bytes) / 1024;
  if (v < 1024) return absl::StrFormat("%.2fkb", v);
  v /= 1024;
  if (v < 1024) return absl::StrFormat("%.2fmb", v);
  return absl::StrFormat("%.2fgb", v / 1024);
}

std::string MaddressTableWriter::Write(const std::vector<RuntimeRow>& rows, const std::vector<std::string>& comments) {
  const Cells header = {"Memory Kind", "StartAddr", "EndAddr-1", "Size", "Type", "State", "Protect", "Image", "Detail"};
  std::vector<Cells> cells;
  std::array<size_t, kColumns> width{};
  for (size_t i = 0; i < kColumns; ++i) width[i] = header[i].size();
  for (const RuntimeRow& r : rows) {
    cells.push_back(RowCells(r));
    for (size_t i = 0; i < kColumns; ++i) width[i] = std::max(width[i], cells.back()[i].size());
  }
  std::string out;
  for (const std::string& c : comments) absl::StrAppend(&out, "# ", c, "\n");
  size_t total = 1;
  for (size_t w : width) total += w + 3;
  const std::string border = absl::StrCat(" +", std::string(total - 2, '-'), "+\n");
  absl::StrAppend(&out, border, Line(header, width), border);
  for (const Cells& c : cells) absl::StrAppend(&out, Line(c, width));
  absl::StrAppend(&out, border);
  return out;
}

}  // namespace pageblame::regions
