// Test-only: a plain reference of perf's time-ordering rule and generators of
// perf-shaped rounds, shared by the EventSorter and LaneSorter tests. Events
// carry their tag (push order) in a[0].
#ifndef PAGEBLAME_REPLAY_SORT_REFERENCE_FOR_TEST_H_
#define PAGEBLAME_REPLAY_SORT_REFERENCE_FOR_TEST_H_

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "processor/replay/trace_event.h"

namespace pageblame::replay {

// The order a reference implementation of perf's rule gives: at each round,
// every buffered event up to the previous round's largest time, sorted by
// time with ties in push order (a stable sort of everything buffered).
// `out_of_order` (if given) counts events delivered older than one before.
inline std::vector<uint64_t> Reference(const std::vector<std::vector<TraceEvent>>& rounds,
                                       uint64_t* out_of_order = nullptr) {
  std::vector<uint64_t> out;
  std::vector<TraceEvent> buffered;
  uint64_t max_time = 0, limit = 0, last = 0, late = 0;
  bool have_round = false;
  auto flush = [&](uint64_t lim) {
    std::stable_sort(buffered.begin(), buffered.end(),
                     [](const TraceEvent& a, const TraceEvent& b) { return a.time < b.time; });
    std::vector<TraceEvent> rest;
    for (const TraceEvent& e : buffered) {
      if (e.time <= lim) {
        out.push_back(e.call().args[0]);
        late += e.time < last;
        last = std::max(last, e.time);
      } else {
        rest.push_back(e);
      }
    }
    buffered = rest;
  };
  for (const auto& round : rounds) {
    for (const TraceEvent& e : round) {
      buffered.push_back(e);
      max_time = std::max(max_time, e.time);
    }
    if (have_round) flush(limit);
    limit = max_time;
    have_round = true;
  }
  flush(UINT64_MAX);
  if (out_of_order) *out_of_order = late;
  return out;
}

// Rounds shaped like perf's: each CPU's events in time order, CPUs one
// after the other, with ties and stragglers older than the last round; and
// some rounds in random order (more runs than any perf round has).
inline std::vector<std::vector<TraceEvent>> RandomRounds(std::mt19937_64& rng, int trial) {
  const int cpus = 1 + static_cast<int>(rng() % 8);
  const bool shuffled = trial % 10 == 9;
  std::vector<std::vector<TraceEvent>> rounds;
  uint64_t tag = 0, base = 1000;
  const int nrounds = 1 + static_cast<int>(rng() % 6);
  for (int r = 0; r < nrounds; ++r) {
    std::vector<TraceEvent> round;
    for (int c = 0; c < cpus; ++c) {
      uint64_t t = base - rng() % 300;  // may reach into the previous round
      const int n = static_cast<int>(rng() % 400);
      for (int i = 0; i < n; ++i) {
        t += rng() % 3;  // 0: a tie
        TraceEvent e;
        e.time = t;
        e.cpu = static_cast<uint32_t>(c);
        e.call().args[0] = tag++;
        round.push_back(e);
      }
    }
    if (shuffled) std::shuffle(round.begin(), round.end(), rng);
    rounds.push_back(round);
    base += 500;
  }
  return rounds;
}

// Rounds as a real recording writes them (bench/ churn traces): every CPU's
// clock runs on across rounds, each CPU records events until the round is
// read out (a busy program), and a round is each CPU's new events in turn.
// Round lengths differ wildly; ties across CPUs; some events without a CPU
// (sideband records written without sample_id_all), in their CPU's order.
// With `idle_cpus`, a CPU records nothing in about one round of four.
// `*cpus` is set to the number of CPUs (the NRCPUS header of the recording).
inline std::vector<std::vector<TraceEvent>> CleanRounds(std::mt19937_64& rng, bool idle_cpus,
                                                        uint32_t* ncpus) {
  const int cpus = 1 + static_cast<int>(rng() % 6);
  *ncpus = static_cast<uint32_t>(cpus);
  std::vector<uint64_t> clock(cpus, 1000);
  std::vector<std::vector<TraceEvent>> rounds;
  uint64_t tag = 0, now = 1000;
  const int nrounds = 1 + static_cast<int>(rng() % 8);
  for (int r = 0; r < nrounds; ++r) {
    const uint64_t drain = now + 1 + rng() % 2000;  // when the round is read out
    std::vector<TraceEvent> round;
    for (int c = 0; c < cpus; ++c) {
      const bool idle = idle_cpus && rng() % 4 == 0;
      while (!idle) {
        const uint64_t step = rng() % 16;  // 0: a tie
        if (clock[c] + step >= drain) break;
        clock[c] += step;
        TraceEvent e;
        e.time = clock[c];
        e.cpu = rng() % 50 == 0 ? TraceEvent::kNoCpu : static_cast<uint32_t>(c);
        e.call().args[0] = tag++;
        round.push_back(e);
      }
      // What was not recorded before the drain comes in a later round.
      clock[c] = std::max(clock[c], drain);
    }
    rounds.push_back(round);
    now = drain;
  }
  return rounds;
}

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_SORT_REFERENCE_FOR_TEST_H_
