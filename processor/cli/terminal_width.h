// How wide a text answer's lines may be: the first screens of `attribute`
// and `growth` fit a method's context to it (render/text_table.h), never its
// name.
//
//   text.width = TextWidth(out->is_stdout());
//
// Standard output: $COLUMNS when set (a positive number: the width the user
// asks for, as ls reads it), else on a terminal the terminal's columns
// (TIOCGWINSZ), else 0: whole lines, so that a pipe gets every name. -o FILE
// (to_stdout false): always 0.
#ifndef PAGEBLAME_CLI_TERMINAL_WIDTH_H_
#define PAGEBLAME_CLI_TERMINAL_WIDTH_H_

#include <cstddef>

namespace pageblame::cli {

size_t TextWidth(bool to_stdout);

}  // namespace pageblame::cli

#endif  // PAGEBLAME_CLI_TERMINAL_WIDTH_H_
