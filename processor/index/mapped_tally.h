// The bytes one process has mapped, kept up to date as replay adds and ends
// its versions, with the peak since its last exec: what `maps` needs to say
// "this process had already unmapped most of its memory when it exited"
// without a second pass over every version (BytesTimeline's O(v log v),
// which took longer than the replay on a 400k-call trace).
//
//   MappedTally t;
//   t.Change(100, +8192);   // a version of 8 KiB from t = 100
//   t.Change(200, -8192);   // ... ended at t = 200
//   t.Peak();               // {100, 8192}; t.now() == 0
//
// Same answer as BytesTimeline::Of(idx, {p}).Peak(false, t_exec): the
// totals are compared once per instant, after all changes at that instant
// (an mremap ends and starts versions at one time), and the first instant
// with the most bytes wins. Changes arrive in time order; one that does not
// (a trace replayed out of order) counts at the current instant.
#ifndef PAGEBLAME_INDEX_MAPPED_TALLY_H_
#define PAGEBLAME_INDEX_MAPPED_TALLY_H_

#include <cstdint>

namespace pageblame::index {

class IndexCodecAccess;

class MappedTally {
 public:
  struct Point {
    uint64_t time = 0;
    uint64_t bytes = 0;
  };

  void Change(uint64_t t, int64_t delta) {
    if (t > instant_) {
      Close();
      instant_ = t;
    }
    now_ += delta;
  }

  // An exec at t: the peak counts from t on (the value at t included).
  void Restart(uint64_t t) {
    if (t > instant_) {
      Close();
      instant_ = t;
    }
    since_ = t;
    have_peak_ = false;
  }

  // Bytes mapped after every change so far.
  uint64_t now() const { return static_cast<uint64_t>(now_); }

  // The first instant since the last Restart (or the start) with the most
  // bytes mapped; {since, now} if nothing changed since.
  Point Peak() const {
    Point best = peak_;
    bool have = have_peak_;
    Consider(&best, &have);
    return best;
  }

 private:
  friend class IndexCodecAccess;  // index_codec.h
  // The totals of the instant that just ended, as a candidate.
  void Close() { Consider(&peak_, &have_peak_); }
  void Consider(Point* best, bool* have) const {
    const uint64_t bytes = now();
    if (!*have || bytes > best->bytes) {
      *best = Point{instant_ > since_ ? instant_ : since_, bytes};
      *have = true;
    }
  }

  int64_t now_ = 0;
  uint64_t instant_ = 0;  // the time of the changes being summed
  uint64_t since_ = 0;
  Point peak_;
  bool have_peak_ = false;
};

}  // namespace pageblame::index

#endif  // PAGEBLAME_INDEX_MAPPED_TALLY_H_
