// Growth::stacks: a growth's rows in their order, read by index or in a
// loop, where a stack that only churned (made memory and unmapped it again
// between the two moments, nothing of it at either end) is kept in 16 B,
// not as a whole StackGrowth (~250 B): a JIT-heavy service makes millions
// of such stacks a day, and a growth over that day has a row for each.
//
//   GrowthStacks rows(std::move(kept), std::move(churned), churned_at, nothing);
//   rows.size();                        // kept.size() + churned.size()
//   StackGrowth s = rows[i];            // a copy, made for a churned row
//   for (const StackGrowth& s : rows) ...
//
// The order: kept[0, at), then every churned row (those all rank alike but
// for made_gone: ComputeGrowth's order puts them in one run), then
// kept[at, end). A churned row reads as a StackGrowth with `nothing` at
// both ends (what a sum of nothing is: resident 0 with snapshots), no
// calls or kinds, and its made_gone.
#ifndef PAGEBLAME_ANALYSIS_GROWTH_STACKS_H_
#define PAGEBLAME_ANALYSIS_GROWTH_STACKS_H_

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

#include "processor/analysis/stack_growth.h"
#include "processor/base/index_iterator.h"

namespace pageblame::analysis {

// A stack that only churned: 16 B.
struct ChurnedStack {
  StackId stack;
  EventId first_call;
  uint64_t made_gone = 0;
};

class GrowthStacks {
 public:
  GrowthStacks() = default;
  // `at` <= kept.size().
  GrowthStacks(std::vector<StackGrowth> kept, std::vector<ChurnedStack> churned, size_t at, BytesAt nothing)
      : kept_(std::move(kept)), churned_(std::move(churned)), at_(at), nothing_(std::move(nothing)) {}

  size_t size() const { return kept_.size() + churned_.size(); }
  bool empty() const { return size() == 0; }
  StackGrowth operator[](size_t i) const {
    if (i < at_) return kept_[i];
    if (i - at_ < churned_.size()) return Churned(churned_[i - at_]);
    return kept_[i - churned_.size()];
  }
  StackGrowth front() const { return (*this)[0]; }

  using const_iterator = IndexIterator<GrowthStacks, StackGrowth>;
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }

 private:
  StackGrowth Churned(const ChurnedStack& c) const {
    StackGrowth s;
    s.stack = c.stack;
    s.first_call = c.first_call;
    s.from = nothing_;
    s.to = nothing_;
    s.made_gone = c.made_gone;
    return s;
  }

  std::vector<StackGrowth> kept_;     // stacks with bytes at either end
  std::vector<ChurnedStack> churned_;
  size_t at_ = 0;
  BytesAt nothing_;
};

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_GROWTH_STACKS_H_
