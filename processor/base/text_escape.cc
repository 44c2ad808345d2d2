#include "processor/base/text_escape.h"

namespace pageblame {
namespace {

constexpr char kHex[] = "0123456789abcdef";

unsigned char At(std::string_view s, size_t i) { return static_cast<unsigned char>(s[i]); }

// The length (2 to 4) of the well-formed UTF-8 sequence that starts at s[i],
// or 0 if none does (Unicode 15, table 3-7: the second byte's range depends
// on the first, which excludes overlong forms, surrogates and code points
// above U+10FFFF).
size_t Utf8Length(std::string_view s, size_t i) {
  const unsigned char c = At(s, i);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (s.size() - i < n || At(s, i + 1) < lo || At(s, i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if ((At(s, i + k) & 0xc0) != 0x80) return 0;
  }
  return n;
}

// How many bytes at s[i] are printed as they are: 0 when s[i] starts
// something to escape.
size_t KeptLength(std::string_view s, size_t i, bool keep_newline) {
  const unsigned char c = At(s, i);
  if (c >= 0x20 && c < 0x7f) return 1;
  if (c == '\n') return keep_newline ? 1 : 0;
  if (c < 0x80) return 0;  // another C0 control, or DEL
  const size_t n = Utf8Length(s, i);
  if (n == 2 && c == 0xc2 && At(s, i + 1) < 0xa0) return 0;  // C1: U+0080-U+009F
  return n;
}

// Where the first byte to escape is, or s.size().
size_t FirstToEscape(std::string_view s, bool keep_newline) {
  size_t i = 0;
  while (i < s.size()) {
    const size_t n = KeptLength(s, i, keep_newline);
    if (n == 0) return i;
    i += n;
  }
  return i;
}

void AppendEscaped(std::string* out, std::string_view s, bool keep_newline) {
  size_t i = FirstToEscape(s, keep_newline);
  out->append(s.data(), i);
  while (i < s.size()) {
    const size_t n = KeptLength(s, i, keep_newline);
    if (n > 0) {
      out->append(s.data() + i, n);
      i += n;
      continue;
    }
    const unsigned char c = At(s, i);
    if (c == 0xc2 && Utf8Length(s, i) == 2) {  // a C1 control
      const unsigned char cp = At(s, i + 1);
      out->append({'\\', 'u', '0', '0', kHex[cp >> 4], kHex[cp & 15]});
      i += 2;
    } else {
      out->append({'\\', 'x', kHex[c >> 4], kHex[c & 15]});
      i += 1;
    }
  }
}

}  // namespace

std::string EscapeName(std::string_view name) {
  std::string out;
  AppendEscaped(&out, name, /*keep_newline=*/false);
  return out;
}

void AppendEscapedName(std::string* out, std::string_view name) {
  AppendEscaped(out, name, /*keep_newline=*/false);
}

bool IsSafeText(std::string_view text) { return FirstToEscape(text, /*keep_newline=*/true) == text.size(); }

std::string EscapeText(std::string text) {
  if (IsSafeText(text)) return text;
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  AppendEscaped(&out, text, /*keep_newline=*/true);
  return out;
}

}  // namespace pageblame
