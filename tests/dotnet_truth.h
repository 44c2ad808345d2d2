// The truth file traces/src/dotnet-leak writes (NAME.truth.tsv): which C#
// method got which addresses, one row per range (method, what, start, end
// exclusive, bytes, the maps lines it overlaps). Shared by the .NET hunt
// test and the live residency test.
#ifndef PAGEBLAME_TESTS_DOTNET_TRUTH_H_
#define PAGEBLAME_TESTS_DOTNET_TRUTH_H_

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"

namespace pageblame::testing {

struct TruthRange {
  std::string method, what;
  uint64_t start, end;
};

// Rows that do not parse (the header, comments) are left out.
inline std::vector<TruthRange> ReadDotnetTruth(const std::string& path) {
  std::vector<TruthRange> out;
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    std::vector<std::string> c = absl::StrSplit(line, '\t');
    if (line.empty() || line[0] == '#' || c.size() < 5 || c[0] == "method") continue;
    TruthRange t{c[0], c[1], std::stoull(c[2], nullptr, 16), std::stoull(c[3], nullptr, 16)};
    out.push_back(t);
  }
  return out;
}

// The GC's memory (managed arrays), and the part of a reservation the app
// never committed (PROT_NONE).
inline bool IsManaged(const TruthRange& t) { return t.method == "GrowManagedHeap"; }
inline bool IsReservedOnly(const TruthRange& t) { return absl::StrContains(t.what, "reserved part"); }

}  // namespace pageblame::testing

#endif  // PAGEBLAME_TESTS_DOTNET_TRUTH_H_
