// A real trace whose names a hostile program chose, for the tests of issue
// 44 (names reach root's terminal): traces/node-trace.data copied into a
// directory, with
//   - every JIT method in perf-11358.map beside it named kHostileMethod +
//     its real name (a JIT, or whoever wrote the map, names them);
//   - pid 11358's comm ("node" in every COMM record) set to kHostileComm,
//     a newline in it (prctl(PR_SET_NAME) takes any bytes);
//   - libc's path in the MMAP2 records set to kHostileLibc (a file name
//     holds any bytes but '/' and NUL).
//
//   ASSIGN_OR_RETURN(std::string trace, MakeHostileTrace(dir.path()));
//   CliRun r = Pageblame("maps --pid 11358 -i " + trace);
//   EXPECT_TRUE(TerminalSafe(r.out));
#ifndef PAGEBLAME_TESTS_HOSTILE_TRACE_H_
#define PAGEBLAME_TESTS_HOSTILE_TRACE_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace pageblame::testing {

// OSC set-title, clear screen, red, two backspaces, a carriage return, C1
// CSI (U+009B), a byte that is not UTF-8, then valid UTF-8 that must stay.
inline constexpr char kHostileMethod[] =
    "\x1b]0;title\x07\x1b[2J\x1b[31m\b\b\r\xc2\x9b\xff\xc3\x9c" "ber:";
// Exactly the 7 bytes a COMM record of "node" has room for.
inline constexpr char kHostileComm[] = "\x1b]0;t\x07\n";
// Exactly as long as the path it replaces, /usr/lib/x86_64-linux-gnu/libc.so.6.
inline constexpr char kHostileLibc[] = "/usr/lib/x86_64-linux-gnu/\x1b\xc2\x9b\n\r\b\xff.6";
inline constexpr char kHostilePid[] = "11358";

// Writes DIR/node-trace.data and DIR/perf-11358.map; returns the trace's path.
absl::StatusOr<std::string> MakeHostileTrace(const std::string& dir);

// Whether `text` is safe to print on a terminal: well-formed UTF-8 with no
// C0 control but '\n', no DEL, no C1 control. Decoded here, independently
// of base/text_escape.
bool TerminalSafe(std::string_view text);

}  // namespace pageblame::testing

#endif  // PAGEBLAME_TESTS_HOSTILE_TRACE_H_
