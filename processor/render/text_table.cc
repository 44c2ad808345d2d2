#include "processor/render/text_table.h"

#include <algorithm>
#include <cstdint>

namespace pageblame::render {
namespace {

// Code points of UTF-8 text (continuation bytes not counted).
size_t Width(const std::string& s) {
  return std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

// The first `n` code points of s, with "..." in place of the rest if cut.
std::string Cut(const std::string& s, size_t n) {
  if (Width(s) <= n) return s;
  const size_t keep = n > 3 ? n - 3 : 0;
  size_t i = 0, points = 0;
  while (i < s.size() && points < keep) {
    ++i;
    while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
    ++points;
  }
  return s.substr(0, i) + std::string(std::min<size_t>(3, n), '.');
}

// The parts of s (split at kPartBreak): the first whole, then each next
// one while the text stays within n code points.
std::string Fit(const std::string& s, size_t n) {
  size_t end = s.find(kPartBreak[0]);
  std::string out = s.substr(0, end);
  size_t used = Width(out);
  while (end != std::string::npos) {
    const size_t next = s.find(kPartBreak[0], end + 1);
    const std::string part = s.substr(end + 1, next == std::string::npos ? std::string::npos : next - end - 1);
    if (used + Width(part) > n) break;
    out += part;
    used += Width(part);
    end = next;
  }
  return out;
}

// The last column's cell as printed: fitted to `room` (what the line
// leaves, strictly) where it has parts, else cut to `last`.
std::string LastCell(const std::string& s, size_t last, size_t room) {
  return s.find(kPartBreak[0]) == std::string::npos ? Cut(s, last) : Fit(s, room);
}

}  // namespace

std::string RenderCells(const std::vector<Align>& align, const std::vector<std::vector<std::string>>& lines,
                        int rule, size_t width) {
  const size_t n = align.size();
  std::vector<size_t> widths(n, 0);
  for (const auto& line : lines) {
    for (size_t c = 0; c + 1 < n && c < line.size(); ++c) widths[c] = std::max(widths[c], Width(line[c]));
  }
  // What the last column may use: the line width less the indent and the
  // other columns; at least 20.
  size_t used = 2;
  for (size_t c = 0; c + 1 < n; ++c) used += widths[c] + 2;
  const size_t last = width == 0 ? SIZE_MAX : width > used + 20 ? width - used : 20;
  const size_t room = width == 0 ? SIZE_MAX : width > used ? width - used : 0;
  // The last column as printed: cut or fitted to what it may use.
  std::vector<std::string> last_cells(lines.size());
  for (size_t l = 0; l < lines.size() && n > 0; ++l) {
    if (n - 1 < lines[l].size()) last_cells[l] = LastCell(lines[l][n - 1], last, room);
    widths[n - 1] = std::max(widths[n - 1], Width(last_cells[l]));
  }
  std::string out;
  for (size_t l = 0; l < lines.size(); ++l) {
    if (static_cast<int>(l) == rule) {
      size_t total = used + (widths.empty() ? 0 : widths.back()) - 2;
      out += "  " + std::string(total, '-') + "\n";
    }
    std::string text = "  ";
    for (size_t c = 0; c < n; ++c) {
      const bool is_last = c + 1 == n;
      std::string cell = is_last ? last_cells[l] : c < lines[l].size() ? lines[l][c] : "";
      const size_t pad = widths[c] > Width(cell) ? widths[c] - Width(cell) : 0;
      if (align[c] == Align::kRight) {
        text += std::string(pad, ' ') + cell;
      } else {
        text += cell;
        if (!is_last) text += std::string(pad, ' ');
      }
      if (!is_last) text += "  ";
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  }
  return out;
}

}  // namespace pageblame::render
