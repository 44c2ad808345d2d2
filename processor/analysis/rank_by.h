// What `attribute` and `growth` rank their stacks by (--sort): committed
// bytes (the default without residency snapshots), resident bytes (the
// default with them: what RSS and a container limit count), or mapped bytes.
// Ties fall back to the other measures, then to the first call's time.
#ifndef PAGEBLAME_ANALYSIS_RANK_BY_H_
#define PAGEBLAME_ANALYSIS_RANK_BY_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace pageblame::analysis {

enum class RankBy { kCommitted, kResident, kMapped };

// "rss", "committed", "mapped" -> RankBy; nullopt for anything else.
std::optional<RankBy> ParseRankBy(absl::string_view name);
// "resident", "committed", "mapped": for headings ("stacks by resident bytes").
absl::string_view RankByWord(RankBy by);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_RANK_BY_H_
