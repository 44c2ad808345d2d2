// Where in a trace the samples and records that could not be parsed were:
// the loader reports every record it parses (with its time) and every one it
// cannot, and gets runs of failures with the times of the parsed records
// around them, which the CLI reports like lost events (issue 21: a trace
// whose every sample was unparsable printed `[]` and said nothing).
//
//   UnparsedTracker bad;
//   if (!reader->ParseComm(rec, &c).ok()) bad.Failed(/*sample=*/false, status); else bad.Parsed(t);
//   ...
//   bad.Finish(&idx->mutable_stats());  // unparsed spans, first_unparsed
//
// O(1) per record; runs whose spans touch or overlap in time are joined, and
// at most kMaxSpans spans are kept (later failures join the last span).
#ifndef PAGEBLAME_REPLAY_UNPARSED_TRACKER_H_
#define PAGEBLAME_REPLAY_UNPARSED_TRACKER_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "processor/index/trace_stats.h"

namespace pageblame::replay {

class UnparsedTracker {
 public:
  static constexpr size_t kMaxSpans = 100;

  // A record was parsed; `time` is its perf time, 0 if it has none.
  void Parsed(uint64_t time) {
    if (time == 0) return;
    if (open_) Close(time);
    last_time_ = std::max(last_time_, time);
  }
  // A sample (or another record) could not be parsed, for the reason `why`
  // (the reader's one-line error, which names the record's offset).
  void Failed(bool sample, const absl::Status& why);
  // Closes the last span (t_to 0: to the end) and stores the spans
  // and the first failure's reason in `stats` (bad_samples and bad_records
  // are the loader's to count).
  void Finish(index::TraceStats* stats);
  // The spans so far into `stats` (a run still open reaches the end), this
  // tracker unchanged: for a checkpoint of a load under way.
  void CopyTo(index::TraceStats* stats) const;
  // Why the first failure failed ("" if none did), until Finish.
  const std::string& first() const { return first_; }

 private:
  void Close(uint64_t time);

  bool open_ = false;
  uint64_t last_time_ = 0;
  index::UnparsedSpan current_;
  std::vector<index::UnparsedSpan> spans_;
  std::string first_;
};

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_UNPARSED_TRACKER_H_
