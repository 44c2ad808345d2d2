// --format F of the commands that answer in several forms (maps, attribute,
// growth), and --json, its short form: checked one way for all of them.
//
//   ASSIGN_OR_RETURN(AnswerFormat f, ParseFormat(args, {AnswerFormat::kText, AnswerFormat::kJson}));
//
// Usage errors (exit 2): a form the command does not have ("bad --format
// 'x': expected text, json or pprof"), --json beside another --format, and
// pprof (a gzipped protobuf) to a terminal without -o.
#ifndef PAGEBLAME_CLI_FORMAT_OPTION_H_
#define PAGEBLAME_CLI_FORMAT_OPTION_H_

#include <vector>

#include "absl/status/statusor.h"
#include "processor/cli/args.h"

namespace pageblame::cli {

enum class AnswerFormat { kText, kJson, kFolded, kPprof };

// The format asked (default text), one of `allowed`.
absl::StatusOr<AnswerFormat> ParseFormat(const Args& args, const std::vector<AnswerFormat>& allowed);
// Whether the answer is text lines (written through OutputFile::WriteText).
inline bool IsText(AnswerFormat f) { return f == AnswerFormat::kText || f == AnswerFormat::kFolded; }

}  // namespace pageblame::cli

#endif  // PAGEBLAME_CLI_FORMAT_OPTION_H_
