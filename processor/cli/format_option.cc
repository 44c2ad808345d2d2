#include "processor/cli/format_option.h"

#include <unistd.h>

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "processor/base/usage_error.h"

namespace pageblame::cli {
namespace {

const char* NameOf(AnswerFormat f) {
  switch (f) {
    case AnswerFormat::kText: return "text";
    case AnswerFormat::kJson: return "json";
    case AnswerFormat::kFolded: return "folded";
    case AnswerFormat::kPprof: return "pprof";
  }
  return "?";
}

// "text, json or pprof"
std::string Choices(const std::vector<AnswerFormat>& allowed) {
  std::vector<std::string> names;
  for (AnswerFormat f : allowed) names.emplace_back(NameOf(f));
  const std::string last = names.back();
  names.pop_back();
  return names.empty() ? last : absl::StrCat(absl::StrJoin(names, ", "), " or ", last);
}

}  // namespace

absl::StatusOr<AnswerFormat> ParseFormat(const Args& args, const std::vector<AnswerFormat>& allowed) {
  const std::string asked = args.Value("--format").value_or(args.Has("--json") ? "json" : "text");
  auto it = std::find_if(allowed.begin(), allowed.end(), [&](AnswerFormat f) { return asked == NameOf(f); });
  if (it == allowed.end()) {
    return UsageError(absl::StrCat("bad --format '", asked, "': expected ", Choices(allowed)));
  }
  if (args.Has("--json") && *it != AnswerFormat::kJson) {
    return UsageError(absl::StrCat("--json contradicts --format ", asked));
  }
  if (*it == AnswerFormat::kPprof && !args.Value("--output") && isatty(STDOUT_FILENO)) {
    return UsageError("--format pprof writes a binary file: give -o FILE");
  }
  return *it;
}

}  // namespace pageblame::cli
