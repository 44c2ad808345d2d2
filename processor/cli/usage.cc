#include "processor/cli/usage.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>

#include "absl/strings/str_cat.h"

namespace pageblame::cli {
namespace {

// Edits (insert, delete, substitute, swap two neighbours) that make a into b:
// the optimal string alignment distance, a swap being the commonest typo.
size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

int ExitCodeFor(const absl::Status& s) {
  if (s.ok()) return kExitOk;
  return IsUsage(s) ? kExitUsage : kExitBadInput;
}

std::string Closest(absl::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const std::string& c : candidates) {
    const size_t d = EditDistance(word, c);
    if (d < best_distance) best_distance = d, best = c;
  }
  // A typo changes a few letters: at most a third of the word.
  const size_t allowed = std::max<size_t>(1, word.size() / 3);
  return best_distance <= allowed ? best : "";
}

std::string DidYouMean(absl::string_view word, const std::vector<std::string>& candidates) {
  const std::string c = Closest(word, candidates);
  return c.empty() ? "" : absl::StrCat(" (did you mean ", c, "?)");
}

int RunGuarded(const std::function<int()>& run) {
  try {
    return run();
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "pageblame: out of memory (the input is larger than this machine's memory or limit)\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pageblame: internal error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "pageblame: internal error: an unknown exception\n");
  }
  return kExitBadInput;
}

}  // namespace pageblame::cli
