// The first screens of `attribute` and `growth` by the application's method
// (issue 41), on real recordings: the .NET demo, node with its JIT map, and a
// C program whose cache_block is reached by two call paths. Each method's
// totals are the sums of its stacks (the JSON's "methods" against its
// "stacks"), every stack is in one method, the method is the function of
// each of its stacks' "first_app_frame", and the text names each row by that
// method, whole, at 80 and 120 columns and on a pipe. (`--group stack` is
// today's output: tests/golden/commands.txt holds its twins.)
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tests/cli_runner.h"
#include "tests/trace_fixtures.h"

namespace pageblame::testing {
namespace {

using Json = nlohmann::json;

struct Case {
  std::string name;
  std::string command;  // attribute or growth, without a format
};
// Its name in test listings (ctest), not its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {"DotnetAttribute",
       "attribute -i traces/dotnet/dotnet-leak.data --buildid-dir traces/buildid-cache --pid 23474 "
       "--regions traces/dotnet/dotnet-leak.23474.maps"},
      {"NodeAttribute",
       "attribute -i traces/node-dwarf.data --buildid-dir traces/buildid-cache --pid 28752 "
       "--regions traces/maps/node-dwarf.28752.maps"},
      {"CAttribute",
       "attribute -i traces/alloc-dwarf.data --buildid-dir traces/buildid-cache --pid 12300 "
       "--regions traces/maps/alloc-dwarf.12300.maps"},
      {"DotnetGrowth", "growth -i traces/dotnet/dotnet-leak.data --buildid-dir traces/buildid-cache"},
      {"NodeGrowth", "growth -i traces/node-dwarf.data --buildid-dir traces/buildid-cache"},
      {"CGrowth", "growth -i traces/alloc-dwarf.data --buildid-dir traces/buildid-cache"},
  };
  return cases;
}

bool IsGrowth(const Case& c) { return absl::StartsWith(c.command, "growth"); }

// From the checkout (the arguments are relative to it); `env` before the
// binary: "COLUMNS=80", or "-u COLUMNS".
CliRun RunWith(const std::string& env, const std::string& args) {
  return Shell(absl::StrCat("cd ", SourceDir(), " && env ", env, " ", PAGEBLAME_BINARY_DIR, "/bin/pageblame ", args));
}

Json JsonOf(const Case& c) {
  CliRun r = RunWith("-u COLUMNS", c.command + (IsGrowth(c) ? " --json" : " --format json"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return Json::parse(r.out);
}

// The fields of a method that are its stacks' sums.
std::vector<std::string> SummedFields(const Case& c) {
  if (IsGrowth(c)) {
    return {"from_bytes",   "to_bytes",      "from_committed_bytes", "to_committed_bytes",
            "added_bytes",  "removed_bytes", "made_gone_bytes",      "calls"};
  }
  return {"bytes", "committed_bytes"};  // an attribution's stacks have no "calls"
}

// The frame "first_app_frame" points at in a stack's call, or null.
const Json* AppFrame(const Json& stack) {
  const Json& call = stack.contains("commit") ? stack["commit"] : stack["origin"];
  if (call["first_app_frame"].is_null()) return nullptr;
  return &call["stack"][call["first_app_frame"].get<size_t>()];
}

class MethodRowsTest : public ::testing::TestWithParam<Case> {};

TEST_P(MethodRowsTest, EachMethodIsTheSumOfItsStacks) {
  const Json j = JsonOf(GetParam());
  ASSERT_FALSE(j["methods"].empty());
  std::vector<int> owner(j["stacks"].size(), -1);
  std::set<std::pair<bool, std::string>> names;
  bool some_method_has_two_stacks = false;
  for (size_t m = 0; m < j["methods"].size(); ++m) {
    const Json& method = j["methods"][m];
    EXPECT_TRUE(names.insert({method["app_frame"].get<bool>(), method["method"].get<std::string>()}).second)
        << "two rows for " << method["method"];
    ASSERT_FALSE(method["stacks"].empty());
    some_method_has_two_stacks |= method["stacks"].size() > 1;
    std::map<std::string, uint64_t> sums;
    for (const Json& i : method["stacks"]) {
      const size_t s = i.get<size_t>();
      ASSERT_LT(s, owner.size());
      EXPECT_EQ(owner[s], -1) << "stack " << s << " in two methods";
      owner[s] = static_cast<int>(m);
      for (const std::string& f : SummedFields(GetParam())) sums[f] += j["stacks"][s][f].get<uint64_t>();
    }
    for (const auto& [field, sum] : sums) EXPECT_EQ(method[field].get<uint64_t>(), sum) << method["method"] << " " << field;
  }
  for (size_t s = 0; s < owner.size(); ++s) EXPECT_NE(owner[s], -1) << "stack " << s << " in no method";
  EXPECT_TRUE(some_method_has_two_stacks) << "nothing grouped: the test would not see a wrong sum";
}

// The method is the function at each of its stacks' first_app_frame (V8's
// tier mark, "JS:~f" / "JS:*f", left out: one function).
TEST_P(MethodRowsTest, TheMethodIsEachStacksFirstAppFrame) {
  const Json j = JsonOf(GetParam());
  size_t checked = 0;
  for (const Json& method : j["methods"]) {
    const std::string name = method["method"];
    for (const Json& i : method["stacks"]) {
      const Json* frame = AppFrame(j["stacks"][i.get<size_t>()]);
      ASSERT_EQ(frame != nullptr, method["app_frame"].get<bool>()) << name;
      if (frame == nullptr) continue;
      ASSERT_TRUE((*frame)["symbol"].is_string()) << name;
      const std::string symbol = (*frame)["symbol"];
      EXPECT_TRUE(absl::StrContains(symbol, absl::StripPrefix(name, "JS:"))) << name << " vs " << symbol;
      ++checked;
    }
  }
  EXPECT_GT(checked, 0u);
}

// A row of the text's first table: its rank and its last column.
struct TextRow {
  size_t rank = 0;
  std::string line;
};

std::vector<TextRow> FirstTable(const std::string& text) {
  std::vector<TextRow> rows;
  bool in_table = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StrContains(line, "app method")) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (absl::StartsWith(line, "  --")) break;
    std::vector<absl::string_view> cells = absl::StrSplit(line, ' ', absl::SkipEmpty());
    TextRow r;
    if (cells.empty() || !absl::SimpleAtoi(cells[0], &r.rank)) continue;
    r.line = std::string(line);
    rows.push_back(r);
  }
  return rows;
}

// Each row says its method whole, whatever the width; its context only in
// whole parts (" -> name"), in order; within the width when the name fits.
TEST_P(MethodRowsTest, NamesAreWholeAt80And120ColumnsAndOnAPipe) {
  const Json j = JsonOf(GetParam());
  for (const std::string env : {"COLUMNS=80", "COLUMNS=120", "-u COLUMNS"}) {
    CliRun r = RunWith(env, GetParam().command);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::vector<TextRow> rows = FirstTable(r.out);
    ASSERT_FALSE(rows.empty()) << r.out;
    size_t width = 0;
    absl::SimpleAtoi(absl::StripPrefix(env, "COLUMNS="), &width);
    for (const TextRow& row : rows) {
      ASSERT_GE(row.rank, 1u);
      ASSERT_LE(row.rank, j["methods"].size());
      const Json& m = j["methods"][row.rank - 1];
      // The name, then parts of what follows it: the context (" -> f") of
      // a method, the outer frames (" <- f") of a stack with no app frame.
      std::string said = m["method"];
      std::vector<std::string> more;
      if (m["app_frame"].get<bool>()) {
        for (const Json& c : m["context"]) more.push_back(" -> " + std::string(c));
      } else {
        std::vector<std::string> frames = absl::StrSplit(said, " <- ");
        said = "(no app frame) " + frames[0];
        for (size_t f = 1; f < frames.size(); ++f) more.push_back(" <- " + frames[f]);
      }
      const size_t at = row.line.find("  " + said);
      ASSERT_NE(at, std::string::npos) << env << ": " << row.line << "\nmust name " << said;
      absl::string_view rest = absl::string_view(row.line).substr(at + 2 + said.size());
      size_t parts = 0;
      for (const std::string& part : more) {
        if (!absl::ConsumePrefix(&rest, part)) break;
        ++parts;
      }
      EXPECT_TRUE(rest.empty()) << env << ": " << row.line;
      if (width == 0) {
        EXPECT_EQ(parts, more.size()) << "a pipe gets whole lines: " << row.line;
      }
      if (width > 0 && row.line.size() > width) {
        EXPECT_EQ(parts, 0u) << env << ": " << row.line;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Traces, MethodRowsTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

}  // namespace
}  // namespace pageblame::testing
