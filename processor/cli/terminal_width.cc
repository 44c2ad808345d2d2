#include "processor/cli/terminal_width.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/numbers.h"

namespace pageblame::cli {
namespace {

// Beyond any terminal: a $COLUMNS above it is a mistake, not a width.
constexpr size_t kMaxWidth = 10000;

}  // namespace

size_t TextWidth(bool to_stdout) {
  if (!to_stdout) return 0;
  const char* columns = std::getenv("COLUMNS");
  size_t n = 0;
  if (columns != nullptr && absl::SimpleAtoi(columns, &n) && n > 0 && n <= kMaxWidth) return n;
  if (isatty(STDOUT_FILENO) != 1) return 0;
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 0;
}

}  // namespace pageblame::cli
