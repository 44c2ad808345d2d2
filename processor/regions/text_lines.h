// TextLines: a text file split into numbered lines, with compiler-style error
// messages ("windbg-address.output:123: expected ..., got '...'").
//
//   TextLines text("address.output", std::move(contents));
//   for (int n = 1; n <= text.size(); ++n) {
//     absl::string_view l = text.line(n);   // no "\n" / "\r\n"
//     if (bad) return text.Error(n, "expected a region row");
//   }
//
// Handles what copy-pasted debugger output brings along: CRLF line ends (the
// WinDbg and SOS samples are CRLF), a missing final newline, a UTF-8 BOM.
// Lines are stored as offsets into the owned text (4 bytes a line below 4 GiB
// of text), so the object can be moved and copied freely. line(n) is valid
// while the TextLines lives.
#ifndef PAGEBLAME_REGIONS_TEXT_LINES_H_
#define PAGEBLAME_REGIONS_TEXT_LINES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace pageblame::regions {

class TextLines {
 public:
  TextLines(std::string name, std::string text);

  const std::string& name() const { return name_; }
  // Number of lines; a final newline does not start an extra empty line.
  int size() const { return lines_; }
  // 1-based; requires 1 <= n <= size().
  absl::string_view line(int n) const;
  // True if the text contained a NUL byte (a binary file, not a table).
  bool has_nul() const { return has_nul_; }

  // InvalidArgument("NAME:LINE: what"), with LINE also kept in the status
  // (ErrorLine reads it back).
  absl::Status Error(int line, absl::string_view what) const;
  // The LINE of an Error() status; 0 for any other status (a whole-file
  // error, or one made elsewhere). RegionTableReader uses it to tell a
  // parser that failed on a line of its format from one that found nothing.
  static int ErrorLine(const absl::Status& s);
  // InvalidArgument("NAME: what"), for whole-file problems.
  absl::Status FileError(absl::string_view what) const;

  // `line` trimmed and quoted for an error message, cut at 100 characters.
  static std::string Quote(absl::string_view line);

  // Whitespace-separated fields of `line`, as views into it.
  static std::vector<absl::string_view> Fields(absl::string_view line);
  // The tail of `line` starting at `field` (a view returned by Fields(line)),
  // trailing whitespace removed: for free-text last columns.
  static absl::string_view RestFrom(absl::string_view line, absl::string_view field);

 private:
  std::string name_;
  std::string text_;
  // Where line n + 1 starts (index n); whichever fits the text's size.
  size_t Start(int n) const { return starts32_.empty() ? starts64_[n] : starts32_[n]; }

  std::vector<uint32_t> starts32_;
  std::vector<size_t> starts64_;
  int lines_ = 0;
  size_t end_ = 0;  // where the last line ends, past its '\n'
  bool has_nul_ = false;
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_TEXT_LINES_H_
