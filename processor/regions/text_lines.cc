#include "processor/regions/text_lines.h"

#include <algorithm>
#include <climits>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/types/optional.h"

namespace pageblame::regions {

TextLines::TextLines(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
  has_nul_ = text_.find('\0') != std::string::npos;
  size_t first = 0;
  if (text_.compare(0, 3, "\xEF\xBB\xBF") == 0) first = 3;  // UTF-8 BOM
  // Where the line starting at `at` ends, past its '\n'.
  auto next = [this](size_t at) {
    const void* nl = std::memchr(text_.data() + at, '\n', text_.size() - at);
    return nl == nullptr ? text_.size() : static_cast<size_t>(static_cast<const char*>(nl) - text_.data()) + 1;
  };
  // Counted first, so that the index is made at its size (a table of
  // millions of lines), not grown by doubling. More lines than an int
  // counts is no table (text inputs are 1 GiB at most): the rest is left.
  size_t count = 0;
  for (size_t at = first; at < text_.size() && count < INT_MAX; at = next(at)) ++count;
  lines_ = static_cast<int>(count);
  const bool small = text_.size() <= UINT32_MAX;
  if (small) {
    starts32_.reserve(count);
  } else {
    starts64_.reserve(count);
  }
  size_t at = first;
  for (size_t i = 0; i < count; ++i, at = next(at)) {
    if (small) {
      starts32_.push_back(static_cast<uint32_t>(at));
    } else {
      starts64_.push_back(at);
    }
  }
  end_ = at;
}

absl::string_view TextLines::line(int n) const {
  const size_t start = Start(n - 1);
  // To the next line's start (or the end of the last line), less its '\n'.
  size_t end = n < lines_ ? Start(n) : end_;
  if (end > start && text_[end - 1] == '\n') --end;
  if (end > start && text_[end - 1] == '\r') --end;
  return absl::string_view(text_).substr(start, end - start);
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
