#include "processor/index/index_thinning.h"

#include <algorithm>

#include "processor/index/trace_index.h"

namespace pageblame::index {
namespace {

// Every call a version or a process names, with how long it is named:
// until the naming version ends, or for ever (a process's unknown break).
// A call so named is kept by every cut before that.
template <typename Fn>
void ForEachNamedCall(const TraceIndex& idx, Fn fn) {
  for (size_t i = 0; i < idx.num_versions(); ++i) {
    const Version& v = idx.version(VersionId(static_cast<uint32_t>(i)));
    for (EventId e : {v.origin, v.commit, v.begin_event, v.end_event}) {
      if (e.valid()) fn(e, v.t_to);
    }
  }
  for (size_t i = 0; i < idx.num_processes(); ++i) {
    if (EventId e = idx.process(static_cast<uint32_t>(i)).unknown_break_event; e.valid()) fn(e, kEndOfTrace);
  }
}

}  // namespace

IndexThinning IndexThinning::At(const TraceIndex& idx, uint64_t cutoff, TraceStats* stats, Tables tables) {
  IndexThinning n;
  n.versions_.assign(idx.num_versions(), VersionId::kInvalidValue);
  n.events_.assign(idx.num_events(), EventId::kInvalidValue);
  std::vector<bool> named(idx.num_events(), false);
  ForEachNamedCall(idx, [&](EventId e, uint64_t until) {
    if (until > cutoff) named[e.value()] = true;
  });
  uint32_t next = 0;
  for (size_t i = 0; i < idx.num_events(); ++i) {
    if (named[i] || idx.event(EventId(static_cast<uint32_t>(i))).time > cutoff) {
      n.events_[i] = next++;
    } else {
      ++stats->thinned_calls;
    }
  }
  n.kept_events_ = next;
  next = 0;
  for (size_t i = 0; i < idx.num_versions(); ++i) {
    if (idx.version(VersionId(static_cast<uint32_t>(i))).t_to > cutoff) {
      n.versions_[i] = next++;
    } else {
      ++stats->thinned_versions;
    }
  }
  n.kept_versions_ = next;
  stats->thinned_before = std::max(stats->thinned_before, cutoff);
  if (tables == Tables::kThinned) n.ThinTables(idx);
  return n;
}

void IndexThinning::ThinTables(const TraceIndex& idx) {
  // Every holder of a stack or string id the index file keeps: the calls'
  // stacks and comms, the versions' paths, the processes' comms (all kept).
  std::vector<bool> stacks(idx.stacks().size(), false), strings(idx.strings().size(), false);
  auto name = [](std::vector<bool>* named, auto id) {
    if (id.valid() && id.value() < named->size()) (*named)[id.value()] = true;
  };
  for (size_t i = 0; i < idx.num_events(); ++i) {
    if (!KeepsEvent(i)) continue;
    const CallEvent& e = idx.event(EventId(static_cast<uint32_t>(i)));
    name(&stacks, e.stack);
    name(&strings, e.comm);
  }
  for (size_t i = 0; i < idx.num_versions(); ++i) {
    if (KeepsVersion(i)) name(&strings, idx.version(VersionId(static_cast<uint32_t>(i))).attrs.path);
  }
  for (size_t i = 0; i < idx.num_processes(); ++i) name(&strings, idx.process(static_cast<uint32_t>(i)).comm);
  thins_tables_ = true;
  stacks_ = idx.stacks().Keeping(stacks);
  strings_.assign(strings.size(), StringId::kInvalidValue);
  kept_strings_ = 0;
  for (size_t i = 0; i < strings.size(); ++i) {
    if (strings[i]) strings_[i] = static_cast<uint32_t>(kept_strings_++);
  }
}

uint64_t IndexThinning::EarliestCutWithin(const TraceIndex& idx, uint64_t from, uint64_t until, size_t bytes,
                                          const std::vector<StackId>& held) {
  if (until <= from) return until;
  // Each call and version is kept by a cut before its key: a version's end,
  // a call's time or the latest end of the versions naming it.
  std::vector<uint64_t> call_key(idx.num_events());
  for (size_t i = 0; i < idx.num_events(); ++i) call_key[i] = idx.event(EventId(static_cast<uint32_t>(i))).time;
  ForEachNamedCall(idx, [&](EventId e, uint64_t until_t) {
    call_key[e.value()] = std::max(call_key[e.value()], until_t);
  });
  // Cut j is from + j * step (the last at `until`). An entry goes to the
  // bucket of the last cut that keeps it (j + 1; every earlier cut keeps
  // it too), 0 if none does, cuts + 1 if every one does.
  constexpr size_t kCuts = 4096;
  const uint64_t step = std::max<uint64_t>((until - from + kCuts - 1) / kCuts, 1);
  const size_t cuts = static_cast<size_t>((until - from + step - 1) / step) + 1;
  auto bucket = [&](uint64_t key) -> uint16_t {
    if (key <= from) return 0;
    if (key > until) return static_cast<uint16_t>(cuts + 1);
    return static_cast<uint16_t>((key - from + step - 1) / step);
  };
  std::vector<size_t> kept(cuts + 2, 0);
  // A stack is kept by the cuts that keep a call naming it (ThinStacks).
  std::vector<uint16_t> stack_bucket(idx.stacks().size(), 0);
  for (size_t i = 0; i < call_key.size(); ++i) {
    const uint16_t b = bucket(call_key[i]);
    kept[b] += idx.EventBytes(EventId(static_cast<uint32_t>(i)));
    const StackId s = idx.event(EventId(static_cast<uint32_t>(i))).stack;
    if (s.valid() && s.value() < stack_bucket.size()) stack_bucket[s.value()] = std::max(stack_bucket[s.value()], b);
  }
  for (size_t i = 0; i < idx.num_versions(); ++i) {
    kept[bucket(idx.version(VersionId(static_cast<uint32_t>(i))).t_to)] += sizeof(index::Version);
  }
  // A madvise call is kept with its call (ThinBefore).
  for (size_t p = 0; p < idx.num_processes(); ++p) {
    for (const Advice& a : idx.process(static_cast<uint32_t>(p)).advice) {
      if (a.event.valid() && a.event.value() < call_key.size()) kept[bucket(call_key[a.event.value()])] += sizeof(Advice);
    }
  }
  call_key = {};
  for (StackId s : held) {
    if (s.valid() && s.value() < stack_bucket.size()) stack_bucket[s.value()] = static_cast<uint16_t>(cuts + 1);
  }
  idx.stacks().AddKeptBytes(stack_bucket, &kept);
  // From the last cut back: the earliest whose kept bytes fit.
  size_t total = kept[cuts + 1] + idx.UnthinnedBytes();
  size_t best = cuts;
  for (size_t j = cuts; j-- > 0;) {
    total += kept[j + 1];
    if (total > bytes) break;
    best = j;
  }
  return best == cuts ? until : std::min(until, from + best * step);
}

}  // namespace pageblame::index
