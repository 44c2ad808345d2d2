#include "processor/cli/args.h"

#include "absl/strings/str_cat.h"
#include "processor/cli/usage.h"

namespace pageblame::cli {

absl::StatusOr<Args> Args::Parse(const std::vector<std::string>& argv,
                                 const std::map<std::string, std::string>& aliases,
                                 const std::set<std::string>& value_flags,
                                 const std::set<std::string>& bool_flags) {
  Args a;
  for (size_t i = 0; i < argv.size(); ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      a.positional_.insert(a.positional_.end(), argv.begin() + i + 1, argv.end());
      break;
    }
    if (arg.size() < 2 || arg[0] != '-' || arg == "-") {
      a.positional_.push_back(arg);
      continue;
    }
    std::optional<std::string> inline_value;
    if (size_t eq = arg.find('='); eq != std::string::npos && arg.rfind("--", 0) == 0) {
      inline_value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    if (auto al = aliases.find(arg); al != aliases.end()) arg = al->second;
    if (bool_flags.count(arg)) {
      if (inline_value) return UsageError(absl::StrCat(arg, " takes no value"));
      a.values_[arg] = "";
    } else if (value_flags.count(arg)) {
      if (inline_value) {
        a.values_[arg] = *inline_value;
      } else if (i + 1 < argv.size()) {
        a.values_[arg] = argv[++i];
      } else {
        return UsageError(absl::StrCat(arg, " needs a value"));
      }
    } else {
      std::vector<std::string> known(value_flags.begin(), value_flags.end());
      known.insert(known.end(), bool_flags.begin(), bool_flags.end());
      return UsageError(absl::StrCat("unknown option ", arg, DidYouMean(arg, known)));
    }
  }
  return a;
}

std::optional<std::string> Args::Value(const std::string& flag) const {
  auto it = values_.find(flag);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> Args::ValuesExcept(const std::string& flag) const {
  std::vector<std::string> out = positional_;
  for (const auto& [f, v] : values_) {
    if (f != flag && !v.empty()) out.push_back(v);
  }
  return out;
}

}  // namespace pageblame::cli