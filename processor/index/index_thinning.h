// IndexThinning: what thinning an index at a moment keeps (record
// --max-size: the index on disk must fit its share, and the recorder's
// memory its bound), as a renumbering of its calls and versions.
//
// Thinned at `cutoff`, an index keeps every version alive after it (t_to >
// cutoff) and the calls those versions name or made after it (every call
// after the cutoff changed a version that outlives it: they are kept
// anyway), each in its old order. So the state at any moment from the
// cutoff on is whole; before it only what still mattered after it is kept.
//
//   IndexThinning n = IndexThinning::At(idx, cutoff, &stats);  // stats += what goes
//   EventId e = n.Event(old);     // invalid if left out
//   VersionId v = n.Version(old);
//
// Thinning at c1 and then at c2 >= c1 keeps what thinning once at c2 would:
// a version kept at c2 was kept at c1, and so were the calls it names. The
// recorder's folding relies on that (it thins in memory at each checkpoint,
// trace_index.h ThinBefore), and IndexCodec::EncodeThinned on the rest.
//
// With Tables::kThinned (a file: IndexCodec::EncodeThinned) the stack and
// string tables are thinned too: only the stacks the kept calls name (with
// the frames from their leaves to the root) and the strings the kept calls,
// versions and processes name, each renumbered in its old order.
//   IndexThinning f = IndexThinning::At(idx, cutoff, &stats, IndexThinning::Tables::kThinned);
//   StackId s = f.Stack(old);     // invalid if left out
// In memory (ThinBefore) they stay whole here: the replay and the loader's
// reading thread hold stack ids too (waiting stacks, calls not replayed
// yet). The recorder's loader thins the stack table after ThinBefore with
// every such holder in view (replay/load_pass.h ThinStacks, with
// StackTable::Thin); the string table stays whole in memory.
#ifndef PAGEBLAME_INDEX_INDEX_THINNING_H_
#define PAGEBLAME_INDEX_INDEX_THINNING_H_

#include <cstdint>
#include <vector>

#include "processor/base/typed_id.h"
#include "processor/index/stack_table.h"
#include "processor/index/string_table.h"
#include "processor/index/trace_stats.h"

namespace pageblame::index {

class TraceIndex;

class IndexThinning {
 public:
  // Keeps everything (the identity).
  IndexThinning() = default;
  // Whether the stack and string tables are thinned too (see above).
  enum class Tables { kWhole, kThinned };
  // The renumbering of `idx` thinned at `cutoff`; what it leaves out is
  // added to `stats` (thinned_calls, thinned_versions, thinned_before).
  static IndexThinning At(const TraceIndex& idx, uint64_t cutoff, TraceStats* stats, Tables tables = Tables::kWhole);

  // The earliest cut in [from, until] (to 1/4096 of that span) at which the
  // index thinned in memory takes at most `bytes` of
  // TraceIndex::BoundedBytes: the calls, versions and madvise calls kept
  // (sizeof each), the stacks and frames they name and those in `held`
  // (named from outside the index: the replay's held events; as
  // StackTable::Thin leaves them: StackTable::AddKeptBytes), and what no
  // cut thins (TraceIndex::UnthinnedBytes); `until` if none does. One pass over the
  // tables: for the recorder's memory bound, where a search thinning at
  // each probe would pass over them a dozen times. Meanwhile 8 bytes a
  // call and 2 a stack and a frame.
  static uint64_t EarliestCutWithin(const TraceIndex& idx, uint64_t from, uint64_t until, size_t bytes,
                                    const std::vector<StackId>& held = {});

  EventId Event(EventId e) const {
    return e.valid() && !events_.empty() ? EventId(events_[e.value()]) : e;
  }
  VersionId Version(VersionId v) const {
    return v.valid() && !versions_.empty() ? VersionId(versions_[v.value()]) : v;
  }
  bool KeepsEvent(size_t i) const { return events_.empty() || events_[i] != EventId::kInvalidValue; }
  bool KeepsVersion(size_t i) const { return versions_.empty() || versions_[i] != VersionId::kInvalidValue; }
  // How many of `all` calls / versions are kept.
  size_t KeptEvents(size_t all) const { return events_.empty() ? all : kept_events_; }
  size_t KeptVersions(size_t all) const { return versions_.empty() ? all : kept_versions_; }

  // The tables (identities unless At(..., Tables::kThinned)).
  StackId Stack(StackId s) const {
    if (!s.valid() || !thins_tables_) return s;
    return s.value() < stacks_.stacks.size() ? StackId(stacks_.stacks[s.value()]) : StackId();
  }
  StringId String(StringId s) const {
    if (!s.valid() || !thins_tables_) return s;
    return s.value() < strings_.size() ? StringId(strings_[s.value()]) : StringId();
  }
  bool KeepsString(size_t i) const {
    return !thins_tables_ || (i < strings_.size() && strings_[i] != StringId::kInvalidValue);
  }
  size_t KeptStrings(size_t all) const { return thins_tables_ ? kept_strings_ : all; }
  // The stack table's kept ids and frames; null: all of them.
  const StackTable::Kept* stacks() const { return thins_tables_ ? &stacks_ : nullptr; }

 private:
  // Tables::kThinned: what the kept calls, versions and processes name.
  void ThinTables(const TraceIndex& idx);

  std::vector<uint32_t> events_, versions_;  // old id -> new id (or invalid); empty: the identity
  size_t kept_events_ = 0, kept_versions_ = 0;
  bool thins_tables_ = false;
  StackTable::Kept stacks_;
  std::vector<uint32_t> strings_;  // old id -> new id (or invalid)
  size_t kept_strings_ = 0;
};

}  // namespace pageblame::index

#endif  // PAGEBLAME_INDEX_INDEX_THINNING_H_
