#include "processor/regions/text_encoding.h"

#include <cstdint>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace pageblame::regions {
namespace {

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Decodes the UTF-16 code units of `bytes` (the mark already removed).
class Utf16Decoder {
 public:
  Utf16Decoder(absl::string_view bytes, bool big_endian, absl::string_view name)
      : bytes_(bytes), big_endian_(big_endian), name_(name) {}

  absl::StatusOr<std::string> Decode() {
    if (bytes_.size() % 2 != 0)
      return Error(absl::StrFormat("odd number of bytes (%d after the byte-order mark) in a %s "
                                   "file: truncated?",
                                   bytes_.size(), Label()));
    std::string out;
    out.reserve(bytes_.size() / 2);
    for (size_t i = 0; i < bytes_.size(); i += 2) {
      uint32_t unit = Unit(i);
      if (unit >= 0xDC00 && unit <= 0xDFFF) return Unpaired(unit, i, &out);
      if (unit >= 0xD800 && unit <= 0xDBFF) {
        uint32_t low = i + 2 < bytes_.size() ? Unit(i + 2) : 0;
        if (low < 0xDC00 || low > 0xDFFF) return Unpaired(unit, i, &out);
        unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
        i += 2;
      }
      AppendUtf8(unit, &out);
    }
    return out;
  }

 private:
  uint32_t Unit(size_t i) const {
    uint32_t a = static_cast<unsigned char>(bytes_[i]);
    uint32_t b = static_cast<unsigned char>(bytes_[i + 1]);
    return big_endian_ ? (a << 8 | b) : (b << 8 | a);
  }
  absl::string_view Label() const { return big_endian_ ? "UTF-16BE" : "UTF-16LE"; }

  absl::Status Unpaired(uint32_t unit, size_t i, const std::string* decoded) const {
    int line = 1;
    for (char c : *decoded) line += c == '\n';
    // +2: the offset in the file, counting the byte-order mark.
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s:%d: invalid %s: unpaired surrogate 0x%04X at byte %d", name_, line, Label(), unit,
        i + 2));
  }
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": ", what));
  }

  absl::string_view bytes_;
  bool big_endian_;
  absl::string_view name_;
};

}  // namespace

absl::StatusOr<std::string> TextEncoding::ToUtf8(std::string bytes, absl::string_view name) {
  absl::string_view b = bytes;
  if (absl::StartsWith(b, "\xEF\xBB\xBF")) return bytes.substr(3);
  if (absl::StartsWith(b, "\xFF\xFE")) return Utf16Decoder(b.substr(2), false, name).Decode();
  if (absl::StartsWith(b, "\xFE\xFF")) return Utf16Decoder(b.substr(2), true, name).Decode();
  return bytes;
}

bool TextEncoding::LooksLikeUtf16WithoutBom(absl::string_view bytes) {
  // 16 code units are enough to tell: ASCII text has no NUL of its own.
  size_t n = bytes.size() < 32 ? bytes.size() & ~size_t{1} : 32;
  if (n < 4) return false;
  bool le = true, be = true;
  for (size_t i = 0; i < n; i += 2) {
    le = le && bytes[i] != '\0' && bytes[i + 1] == '\0';
    be = be && bytes[i] == '\0' && bytes[i + 1] != '\0';
  }
  return le || be;
}

}  // namespace pageblame::regions
