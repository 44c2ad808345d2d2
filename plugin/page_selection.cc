#include "plugin/page_selection.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "processor/analysis/history.h"
#include "processor/render/maps_report.h"

namespace pageblame::plugin {
namespace {

void SortUnique(std::vector<uint64_t>* v) {
  std::sort(v->begin(), v->end());
  v->erase(std::unique(v->begin(), v->end()), v->end());
}

}  // namespace

PageSelection::PageSelection(const index::TraceIndex& idx, std::vector<uint32_t> processes)
    : idx_(idx), processes_(std::move(processes)) {
  by_process_.resize(idx.num_processes());
  for (uint32_t i = 0; i < idx.num_versions(); ++i) {
    const index::Version& v = idx.version(VersionId(i));
    if (v.process < by_process_.size()) by_process_[v.process].push_back({v.start, v.end, VersionId(i)});
  }
  max_end_.resize(by_process_.size());
  for (size_t p = 0; p < by_process_.size(); ++p) {
    auto& entries = by_process_[p];
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.start < b.start; });
    uint64_t m = 0;
    for (const Entry& e : entries) max_end_[p].push_back(m = std::max(m, e.end));
  }
}

void PageSelection::Boundaries(uint32_t p, uint64_t a, uint64_t b,
                               absl::flat_hash_set<uint32_t>* visited,
                               std::vector<uint64_t>* out) const {
  out->push_back(a);
  if (p >= by_process_.size()) return;
  const auto& entries = by_process_[p];
  auto it = std::lower_bound(entries.begin(), entries.end(), b,
                             [](const Entry& e, uint64_t x) { return e.start < x; });
  // Entries before `it` start below b; walk back while some may end above a.
  for (size_t i = it - entries.begin(); i-- > 0 && max_end_[p][i] > a;) {
    const Entry& e = entries[i];
    if (e.end <= a) continue;
    uint64_t lo = std::max(a, e.start), hi = std::min(b, e.end);
    out->push_back(lo);
    if (hi < b) out->push_back(hi);
    const index::Version& v = idx_.version(e.id);
    // Pages that arrived by a move or a fork: their earlier life may have
    // been cut elsewhere (analysis/history.h follows the same link).
    if ((v.begin == index::Begin::kMovedIn || v.begin == index::Begin::kForked) && v.prev.valid() &&
        visited->insert(e.id.value()).second) {
      const index::Version& from = idx_.version(v.prev);
      uint64_t from_lo = v.prev_addr + (lo - v.start);
      std::vector<uint64_t> earlier;
      Boundaries(from.process, from_lo, from_lo + (hi - lo), visited, &earlier);
      for (uint64_t x : earlier) out->push_back(x - from_lo + lo);
    }
  }
}

std::vector<EventId> PageSelection::HistoryCalls(uint32_t p, uint64_t addr) const {
  std::vector<EventId> out;
  absl::flat_hash_set<EventId> seen;
  auto add = [&](EventId id) {
    if (id.valid() && seen.insert(id).second) out.push_back(id);
  };
  for (const analysis::HistoryEntry& h : analysis::PageHistory(idx_, p, addr)) {
    add(idx_.version(h.version).origin);
    add(idx_.version(h.version).commit);
    if (h.change != analysis::PageChange::kSplit) add(h.event);
  }
  return out;
}

void PageSelection::AddHistoryCalls(const Target& t, KeepSet* keep) const {
  for (uint32_t p : processes_) {
    std::vector<uint64_t> reps;
    if (t.end - t.start <= kPageSize) {
      // Every version boundary is page-aligned: one page has one history.
      reps.push_back(t.start);
    } else {
      absl::flat_hash_set<uint32_t> visited;
      Boundaries(p, t.start, t.end, &visited, &reps);
    }
    SortUnique(&reps);
    for (uint64_t addr : reps) {
      for (EventId id : HistoryCalls(p, addr)) keep->Add(idx_.event(id), id);
    }
    // madvise calls start no version: a range's boundaries do not find
    // those that advised only part of a version.
    for (const index::Advice& a : idx_.process(p).advice) {
      if (a.start < t.end && t.start < a.end) keep->Add(idx_.event(a.event), a.event);
    }
  }
}

std::vector<uint64_t> PageSelection::LivePieces(uint64_t a, uint64_t b) const {
  std::vector<uint64_t> out = {a};
  for (uint32_t p : processes_) {
    const auto& live = idx_.process(p).live;
    auto it = live.upper_bound(a);
    if (it != live.begin()) --it;
    for (; it != live.end() && it->first < b; ++it) {
      const index::Version& v = idx_.version(it->second.version);
      if (v.end <= a) continue;
      out.push_back(std::max(a, v.start));
      if (v.end < b) out.push_back(v.end);
    }
  }
  SortUnique(&out);
  return out;
}

std::vector<Target> PageSelection::Targets(const DlfilterOptions& options) const {
  std::vector<Target> out;
  for (uint64_t addr : options.pages) {
    Target t;
    t.start = addr & ~(kPageSize - 1);
    t.end = t.start + kPageSize;
    if (t.end < t.start) t.end = UINT64_MAX;  // the last page of the address space
    t.addresses = {addr};
    out.push_back(std::move(t));
  }
  for (const RequestedRegion& r : options.regions) {
    Target t;
    t.start = r.start;
    t.end = r.end;
    t.is_region = true;
    t.source = absl::StrCat(r.file, ":", r.line);
    t.addresses = LivePieces(r.start, r.end);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace pageblame::plugin
