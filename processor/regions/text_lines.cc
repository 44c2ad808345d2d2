#include "processor/regions/text_lines.h"

#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/types/optional.h"

namespace pageblame::regions {

TextLines::TextLines(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
  has_nul_ = text_.find('\0') != std::string::npos;
  size_t pos = 0;
  if (text_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos = 3;  // UTF-8 BOM
  while (pos < text_.size()) {
    size_t nl = text_.find('\n', pos);
    size_t stop = nl == std::string::npos ? text_.size() : nl;
    size_t len = stop - pos;
    if (len > 0 && text_[pos + len - 1] == '\r') --len;
    lines_.emplace_back(pos, len);
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
}

absl::string_view TextLines::line(int n) const {
  const auto& [offset, len] = lines_[n - 1];
  return absl::string_view(text_).substr(offset, len);
}

namespace {
constexpr absl::string_view kLinePayload = "pageblame.regions/text-line";
}  // namespace

absl::Status TextLines::Error(int line, absl::string_view what) const {
  absl::Status s = absl::InvalidArgumentError(absl::StrCat(name_, ":", line, ": ", what));
  s.SetPayload(kLinePayload, absl::Cord(absl::StrCat(line)));
  return s;
}

int TextLines::ErrorLine(const absl::Status& s) {
  absl::optional<absl::Cord> p = s.GetPayload(kLinePayload);
  int line = 0;
  if (!p || !absl::SimpleAtoi(std::string(*p), &line)) return 0;
  return line;
}

absl::Status TextLines::FileError(absl::string_view what) const {
  return absl::InvalidArgumentError(absl::StrCat(name_, ": ", what));
}

std::string TextLines::Quote(absl::string_view line) {
  absl::string_view t = absl::StripAsciiWhitespace(line);
  constexpr size_t kMax = 100;
  if (t.size() > kMax) return absl::StrCat("'", t.substr(0, kMax), "...'");
  return absl::StrCat("'", t, "'");
}

std::vector<absl::string_view> TextLines::Fields(absl::string_view line) {
  // A plain scan: absl::ByAnyChar rebuilds a lookup table on every search,
  // which dominated parsing the 1.4 MB pmap sample.
  std::vector<absl::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

absl::string_view TextLines::RestFrom(absl::string_view line, absl::string_view field) {
  size_t offset = static_cast<size_t>(field.data() - line.data());
  return absl::StripTrailingAsciiWhitespace(line.substr(offset));
}

}  // namespace pageblame::regions
