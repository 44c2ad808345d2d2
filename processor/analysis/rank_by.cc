#include "processor/analysis/rank_by.h"

namespace pageblame::analysis {

std::optional<RankBy> ParseRankBy(absl::string_view name) {
  if (name == "rss") return RankBy::kResident;
  if (name == "committed") return RankBy::kCommitted;
  if (name == "mapped") return RankBy::kMapped;
  return std::nullopt;
}

absl::string_view RankByWord(RankBy by) {
  switch (by) {
    case RankBy::kResident: return "resident";
    case RankBy::kMapped: return "mapped";
    case RankBy::kCommitted: break;
  }
  return "committed";
}

}  // namespace pageblame::analysis
