#include "processor/regions/page_diff.h"

#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "processor/regions/range_set.h"

namespace pageblame::regions {
namespace {

RangeSet Claimed(const RegionTable& table) {
  RangeSet out;
  for (const Region& r : table.regions)
    if (table.IsClaimed(r)) out.Add(r.start, r.end);
  return out;
}

void SortAndTotal(DiffList* list) {
  std::sort(list->pieces.begin(), list->pieces.end(), [](const Region& a, const Region& b) {
    return std::make_tuple(b.size(), a.start, a.line) < std::make_tuple(a.size(), b.start, b.line);
  });
  list->bytes = 0;
  absl::flat_hash_set<int> lines;
  for (const Region& r : list->pieces) {
    list->bytes += r.size();
    lines.insert(r.line);
  }
  list->source_regions = lines.size();
}

// The committed bytes of `table` outside `cover`, as pieces of its regions.
DiffList Uncovered(const RegionTable& table, const RangeSet& cover) {
  std::vector<const Region*> committed;
  for (const Region& r : table.regions)
    if (table.IsCommitted(r)) committed.push_back(&r);
  std::sort(committed.begin(), committed.end(), [](const Region* a, const Region* b) {
    return std::tie(a->start, a->line) < std::tie(b->start, b->line);
  });
  DiffList out;
  if (table.has_rss) out.resident.emplace();
  RangeSet seen;  // committed bytes already attributed to an earlier region
  for (const Region* r : committed) {
    const size_t first = out.pieces.size();
    uint64_t bytes = 0;
    for (const auto& [gs, ge] : cover.Gaps(r->start, r->end)) {
      for (const auto& [s, e] : seen.Gaps(gs, ge)) {
        Region piece = *r;
        piece.start = s;
        piece.end = e;
        bytes += e - s;
        out.pieces.push_back(std::move(piece));
      }
    }
    seen.Add(r->start, r->end);
    // A piece's rss is the row's only if the piece is the whole row.
    if (bytes != r->size()) {
      for (size_t i = first; i < out.pieces.size(); ++i) out.pieces[i].rss.reset();
    }
    if (out.resident && r->rss) out.resident->Add(r->size(), *r->rss, bytes);
  }
  SortAndTotal(&out);
  return out;
}

// The seed's rule: committed regions of `table` whose start is not the start
// of any region of `other`.
DiffList StartMismatch(const RegionTable& table, const RegionTable& other) {
  absl::flat_hash_set<uint64_t> starts;
  for (const Region& r : other.regions) starts.insert(r.start);
  DiffList out;
  for (const Region& r : table.regions)
    if (table.IsCommitted(r) && !starts.contains(r.start)) out.pieces.push_back(r);
  SortAndTotal(&out);
  return out;
}

}  // namespace

DiffResult Diff(const RegionTable& address_table, const RegionTable& runtime_table) {
  DiffResult d;
  d.unaccounted = Uncovered(address_table, Claimed(runtime_table));
  d.runtime_only = Uncovered(runtime_table, Claimed(address_table));
  d.start_match_unaccounted = StartMismatch(address_table, runtime_table);
  d.start_match_runtime_only = StartMismatch(runtime_table, address_table);
  return d;
}

}  // namespace pageblame::regions
