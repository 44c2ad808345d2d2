// Which symbol tables printing will likely need, guessed before replay ends:
// the DSOs whose executable file mappings hold frames of the trace's stacks,
// the most frames first. The loader's thread makes it from the trace's
// mapping history once the file is read, and gives what it names to
// Symbolizer::Preload while the replay thread finishes.
//
//   PreloadPlan plan = PreloadPlan::Of(history);
//   for (const PreloadPlan::Dso& d : plan.Needed(stacks.DistinctIps())) sym.Preload(d.path, d.build_id);
//
// A guess, never an answer: mappings of every process are taken together and
// without their times, so a DSO may be named that no printed frame is in
// (its table is then loaded for nothing). What Symbolize says does not
// depend on it.
#ifndef PAGEBLAME_SYMBOLS_PRELOAD_PLAN_H_
#define PAGEBLAME_SYMBOLS_PRELOAD_PLAN_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/types/span.h"
#include "processor/symbols/mapping_history.h"

namespace pageblame::symbols {

class PreloadPlan {
 public:
  struct Dso {
    std::string path;
    std::string build_id;
    size_t frames = 0;  // ips of `Needed`'s list in its mappings
  };
  // The mappings of `history` (code) whose files may have an ELF
  // behind them (JIT code, anonymous or memfd, has no table to load).
  static PreloadPlan Of(const MappingHistory& history);
  // An executable mapping of a file, [start, start + len).
  void AddMapping(uint64_t start, uint64_t len, std::string_view path, std::string_view build_id);
  // The DSOs with at least one of `ips` in one of their mappings, the most
  // first (ties: the first mapped first). `ips` may repeat and be unsorted.
  std::vector<Dso> Needed(absl::Span<const uint64_t> ips) const;
  size_t mappings() const { return mappings_.size(); }

 private:
  struct Mapping {
    uint64_t start, end;
    size_t dso;  // index in dsos_
  };
  std::vector<Mapping> mappings_;
  absl::flat_hash_set<std::tuple<uint64_t, uint64_t, size_t>> seen_;  // of mappings_
  std::vector<Dso> dsos_;  // by first mapping
  absl::flat_hash_map<std::pair<std::string, std::string>, size_t> dso_index_;
};

}  // namespace pageblame::symbols

#endif  // PAGEBLAME_SYMBOLS_PRELOAD_PLAN_H_
