#include "processor/replay/unparsed_tracker.h"

#include <utility>

namespace pageblame::replay {

void UnparsedTracker::Failed(bool sample, const absl::Status& why) {
  if (first_.empty()) first_ = std::string(why.message());
  if (!open_) {
    open_ = true;
    current_ = index::UnparsedSpan{last_time_, 0, 0, 0};
  }
  ++(sample ? current_.samples : current_.records);
}

void UnparsedTracker::Close(uint64_t time) {
  open_ = false;
  current_.t_to = time == 0 ? 0 : std::max(time, current_.t_from);
  // A run that starts where the last one ended (file order is only roughly
  // time order: the times around runs a few records apart often tie) is
  // said as one span with it.
  const bool joins = !spans_.empty() && spans_.back().t_to != 0 &&
                     current_.t_from <= spans_.back().t_to;
  if (spans_.size() < kMaxSpans && !joins) {
    spans_.push_back(current_);
    return;
  }
  index::UnparsedSpan& last = spans_.back();
  last.t_to = current_.t_to == 0 ? 0 : std::max(last.t_to, current_.t_to);
  last.samples += current_.samples;
  last.records += current_.records;
}

void UnparsedTracker::Finish(index::TraceStats* stats) {
  if (open_) Close(0);  // nothing parsed after the run: it reaches the end
  stats->unparsed = std::move(spans_);
  stats->first_unparsed = std::move(first_);
}

void UnparsedTracker::CopyTo(index::TraceStats* stats) const {
  UnparsedTracker copy = *this;
  copy.Finish(stats);
}

}  // namespace pageblame::replay
