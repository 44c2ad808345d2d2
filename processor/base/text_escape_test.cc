// Names as text: nothing a terminal obeys gets through, nothing is lost,
// valid UTF-8 stays as it is.
#include "processor/base/text_escape.h"

#include <cstdint>
#include <random>
#include <string>

#include "gtest/gtest.h"

namespace pageblame {
namespace {

TEST(TextEscapeTest, PrintableAsciiAndUtf8AreKept) {
  for (const std::string s : {"", "Program::Main", "void* [System.Private.CoreLib] X::Alloc(native uint)[PreJIT]",
                              "/usr/lib/x86_64-linux-gnu/libc.so.6", "Über::naïve", "日本語::関数", "emoji 😀",
                              "a\\x1b literal backslash", "\xc2\xa0nbsp", "\xed\x9f\xbf", "\xf4\x8f\xbf\xbf"}) {
    EXPECT_EQ(EscapeName(s), s);
    EXPECT_EQ(EscapeText(s + "\n" + s + "\n"), s + "\n" + s + "\n");
    EXPECT_TRUE(IsSafeText(s));
  }
}

TEST(TextEscapeTest, TerminalControlsAreEscaped) {
  EXPECT_EQ(EscapeName("\x1b]0;title\x07Main"), "\\x1b]0;title\\x07Main");
  EXPECT_EQ(EscapeName("\x1b[2J\x1b[31mred"), "\\x1b[2J\\x1b[31mred");
  EXPECT_EQ(EscapeName("ab\b\bcd\rX"), "ab\\x08\\x08cd\\x0dX");
  EXPECT_EQ(EscapeName(std::string("nul\0end", 7)), "nul\\x00end");
  EXPECT_EQ(EscapeName("del\x7f"), "del\\x7f");
  EXPECT_EQ(EscapeName("tab\there"), "tab\\x09here");
}

TEST(TextEscapeTest, ANewlineInANameCannotMakeALine) {
  EXPECT_EQ(EscapeName("Main\nforged line"), "Main\\x0aforged line");
  // A whole answer keeps its own newlines and nothing else.
  EXPECT_EQ(EscapeText("row 1\nrow\r2\x1b[2J\n"), "row 1\nrow\\x0d2\\x1b[2J\n");
  EXPECT_FALSE(IsSafeText("a\tb\n"));
  EXPECT_TRUE(IsSafeText("a b\n\n"));
}

TEST(TextEscapeTest, C1ControlsAreEscapedAsCodePoints) {
  // U+009B is CSI: "\xc2\x9b" "2J" clears a UTF-8 terminal as ESC [ 2 J does.
  EXPECT_EQ(EscapeName("a\xc2\x9b" "2Jb"), "a\\u009b2Jb");
  EXPECT_EQ(EscapeName("\xc2\x80\xc2\x9f\xc2\xa0"), "\\u0080\\u009f\xc2\xa0");
}

TEST(TextEscapeTest, BytesThatAreNotUtf8AreEscapedOneByOne) {
  EXPECT_EQ(EscapeName("caf\xe9"), "caf\\xe9");
  EXPECT_EQ(EscapeName("\x9b" "2J"), "\\x9b2J");                 // a lone 8-bit CSI
  EXPECT_EQ(EscapeName("\xc0\xaf"), "\\xc0\\xaf");              // overlong '/'
  EXPECT_EQ(EscapeName("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");     // overlong
  EXPECT_EQ(EscapeName("\xed\xa0\x80"), "\\xed\\xa0\\x80");     // a surrogate
  EXPECT_EQ(EscapeName("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(EscapeName("\xe2\x82"), "\\xe2\\x82");              // cut short
  EXPECT_EQ(EscapeName("\xe2\x82" "A\xe2\x82\xac"), "\\xe2\\x82A\xe2\x82\xac");
}

TEST(TextEscapeTest, AppendAddsToWhatIsThere) {
  std::string out = "name: ";
  AppendEscapedName(&out, "\x1b");
  EXPECT_EQ(out, "name: \\x1b");
}

// The escapes read back: undoing them gives the name (for names without a
// backslash of their own, which is kept as it is).
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (s[i] != '\\') {
      out += s[i++];
      continue;
    }
    if (s[i + 1] == 'x') {
      out += static_cast<char>(std::stoi(s.substr(i + 2, 2), nullptr, 16));
      i += 4;
    } else {  // \u00NN: a C1 control's UTF-8
      out += '\xc2';
      out += static_cast<char>(std::stoi(s.substr(i + 4, 2), nullptr, 16));
      i += 6;
    }
  }
  return out;
}

// Whether s is well-formed UTF-8 holding no C0, DEL or C1 control (newlines
// allowed when `newlines`): decoded independently of the code under test.
bool SafeUtf8(const std::string& s, bool newlines) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    uint32_t cp;
    size_t n;
    if (c < 0x80) {
      cp = c, n = 1;
    } else if ((c & 0xe0) == 0xc0) {
      cp = c & 0x1f, n = 2;
    } else if ((c & 0xf0) == 0xe0) {
      cp = c & 0x0f, n = 3;
    } else if ((c & 0xf8) == 0xf0) {
      cp = c & 0x07, n = 4;
    } else {
      return false;
    }
    if (i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    if (cp < 0x20 && !(newlines && cp == '\n')) return false;
    if (cp >= 0x7f && cp <= 0x9f) return false;
    i += n;
  }
  return true;
}

// Random names of bytes a hostile JIT could write: controls, C1 sequences,
// pieces of UTF-8, any byte. Whatever comes in, what goes out is safe UTF-8
// of one line, says the same bytes, and is left alone by a second pass.
TEST(TextEscapeTest, AnyBytesComeOutSafeAndLossless) {
  std::mt19937 rng(44);
  const std::string pieces[] = {"\x1b", "\x07", "\n", "\r", "\b", "\x7f", "\xc2\x9b", "\xc2", "\xe2\x82\xac",
                                "\xf0\x9f\x98\x80", "\xed\xa0\x80", "\xff", "a", "Z", ";", " "};
  for (int round = 0; round < 20000; ++round) {
    std::string name;
    const int len = static_cast<int>(rng() % 24);
    for (int k = 0; k < len; ++k) {
      if (rng() % 3 == 0) {
        name += static_cast<char>(rng() % 256);
      } else {
        name += pieces[rng() % (sizeof(pieces) / sizeof(pieces[0]))];
      }
    }
    if (name.find('\\') != std::string::npos) continue;
    const std::string escaped = EscapeName(name);
    ASSERT_TRUE(SafeUtf8(escaped, /*newlines=*/false)) << escaped;
    ASSERT_EQ(Unescape(escaped), name) << escaped;
    ASSERT_EQ(EscapeName(escaped), escaped);
    const std::string text = EscapeText(name + "\n");
    ASSERT_TRUE(SafeUtf8(text, /*newlines=*/true)) << text;
    ASSERT_EQ(Unescape(text), name + "\n");
    ASSERT_EQ(IsSafeText(name + "\n"), text == name + "\n");
  }
}

}  // namespace
}  // namespace pageblame
