// Names that come from outside pageblame (symbols of ELF files, perf-PID.map
// and jit-PID.dump entries, comm names, paths of mappings and DSOs) made safe
// to print as text. Any of them may be written by the traced program or by
// whoever could write those files, and pageblame runs as root: a method named
// "\x1b]0;title\x07" would set root's terminal title, "\x1b[2J" clear it, a
// "\r" or "\n" overwrite or forge a line of the answer. JSON carries the real
// bytes (escaped as JSON); text says them with these escapes:
//
//   - C0 controls (0x00-0x1f, newline and tab included) and DEL: \xNN;
//   - C1 controls (U+0080-U+009F, "\xc2\x80".."\xc2\x9f" in UTF-8, which
//     terminals also obey: U+009B is CSI): \u0080..\u009f;
//   - every byte that is not part of well-formed UTF-8 (Unicode 15, table
//     3-7: no overlong forms, no surrogates, nothing above U+10FFFF; Linux
//     file names can hold any bytes, Latin-1 ones say "caf\xe9"): \xNN, so
//     that no lone byte can act as an 8-bit control either, and the text
//     stays UTF-8.
// Everything else is kept as it is: printable ASCII, backslashes, valid
// UTF-8 (non-ASCII method names such as "Über::naïve"). A backslash is not
// doubled, so a name holding the four characters "\x1b" reads like an
// escaped ESC; text is for reading, and --json has the exact bytes.
//
//   EscapeName("\x1b[31mMain\r")    -> "\\x1b[31mMain\\x0d"
//   EscapeName("Über::naïve")       -> "Über::naïve"
//   EscapeName("caf\xe9")           -> "caf\\xe9"
//   EscapeText("a\n\x1b[2Jb\n")     -> "a\n\\x1b[2Jb\n"   (a whole answer: its own newlines kept)
//
// Linear in the input; a name with nothing to escape (the usual case) is
// copied once, and EscapeText returns its argument unchanged when it is clean.
#ifndef PAGEBLAME_BASE_TEXT_ESCAPE_H_
#define PAGEBLAME_BASE_TEXT_ESCAPE_H_

#include <string>
#include <string_view>

namespace pageblame {

// One name (or one line of a message): everything above is escaped,
// newlines too, so the result is one line with no control in it.
std::string EscapeName(std::string_view name);
void AppendEscapedName(std::string* out, std::string_view name);

// A whole text answer whose lines end in '\n': the same escapes, except that
// its newlines are kept (no answer uses tabs or carriage returns, so they
// are escaped). The last line of defence before text is written: names are
// escaped where they enter the text (EscapeName), this catches any that
// were not, though it cannot tell a newline inside a name from the layout.
std::string EscapeText(std::string text);

// Whether EscapeText would change nothing.
bool IsSafeText(std::string_view text);

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_TEXT_ESCAPE_H_
