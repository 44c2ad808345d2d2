// A small command-line parser for pageblame's subcommands: `--flag value`,
// `--flag=value`, short aliases, booleans, and positionals. Unknown flags are
// errors (a typo must not silently change the answer).
//
//   ASSIGN_OR_RETURN(Args a, Args::Parse(argv_tail, {{"-i", "--input"}}, {"--input", "--pid"}, {"--json"}));
//   std::string in = a.Value("--input").value_or("perf.data");
#ifndef PAGEBLAME_CLI_ARGS_H_
#define PAGEBLAME_CLI_ARGS_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace pageblame::cli {

class Args {
 public:
  static absl::StatusOr<Args> Parse(const std::vector<std::string>& argv,
                                    const std::map<std::string, std::string>& aliases,
                                    const std::set<std::string>& value_flags,
                                    const std::set<std::string>& bool_flags);

  std::optional<std::string> Value(const std::string& flag) const;
  bool Has(const std::string& flag) const { return values_.count(flag) > 0; }
  const std::vector<std::string>& positional() const { return positional_; }
  // Every value given (of any flag but `flag`) and every positional: what an
  // output file must not be (OutputFile::Open).
  std::vector<std::string> ValuesExcept(const std::string& flag) const;

 private:
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

}  // namespace pageblame::cli

#endif  // PAGEBLAME_CLI_ARGS_H_
