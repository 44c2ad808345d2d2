#include "processor/analysis/history.h"

#include <algorithm>

namespace pageblame::analysis {
namespace {

PageChange ChangeOf(index::Begin b) {
  switch (b) {
    case index::Begin::kCreated: return PageChange::kCreated;
    case index::Begin::kBeforeTrace: return PageChange::kBeforeTrace;
    case index::Begin::kSplit: return PageChange::kSplit;
    case index::Begin::kMovedIn: return PageChange::kMovedIn;
    case index::Begin::kForked: return PageChange::kForked;
    case index::Begin::kCommitted: return PageChange::kCommitted;
    case index::Begin::kDecommitted: return PageChange::kDecommitted;
    case index::Begin::kProtected: return PageChange::kProtected;
  }
  return PageChange::kCreated;
}

// Only for a version that ended (kNotEnded has no entry).
PageChange ChangeOf(index::End e) {
  switch (e) {
    case index::End::kUnmapped: return PageChange::kUnmapped;
    case index::End::kReplaced: return PageChange::kReplaced;
    case index::End::kMovedOut: return PageChange::kMovedOut;
    case index::End::kExec: return PageChange::kExec;
    case index::End::kChanged:
    case index::End::kNotEnded: return PageChange::kChanged;
  }
  return PageChange::kChanged;
}

// madvise calls that release a page's contents (the page reads back as
// zeros, or as a file's contents): MADV_DONTNEED, FREE, REMOVE,
// DONTNEED_LOCKED (include/uapi/asm-generic/mman-common.h). Others advise.
PageChange AdviceChange(const index::CallEvent& ev) {
  switch (ev.args[2]) {
    case 4: case 8: case 9: case 24: return PageChange::kReleased;
    default: return PageChange::kAdvised;
  }
}

// Appends the madvise calls of process p that covered addr in [from, to),
// naming `version` (the page's version then).
void AddAdvice(const index::TraceIndex& idx, uint32_t p, uint64_t addr, uint64_t from,
               uint64_t to, VersionId version, std::vector<HistoryEntry>* out) {
  // Advice is in time order: the window by binary search, not a scan of a
  // churning process's every madvise for each version of each page.
  const std::vector<index::Advice>& all = idx.process(p).advice;
  auto it = std::lower_bound(all.begin(), all.end(), from,
                             [](const index::Advice& a, uint64_t t) { return a.time < t; });
  for (; it != all.end() && it->time < to; ++it) {
    if (addr < it->start || addr >= it->end) continue;
    out->push_back(HistoryEntry{it->time, AdviceChange(idx.event(it->event)), version, it->event});
  }
}

// Oldest first; at one instant, a version's beginning before what was done
// to it (entries are appended in that order).
void SortByTime(std::vector<HistoryEntry>* h) {
  std::stable_sort(h->begin(), h->end(),
                   [](const HistoryEntry& a, const HistoryEntry& b) { return a.time < b.time; });
}

}  // namespace

const char* PageChangeName(PageChange c) {
  switch (c) {
    case PageChange::kCreated: return "created";
    case PageChange::kBeforeTrace: return "before_trace";
    case PageChange::kSplit: return "split";
    case PageChange::kMovedIn: return "moved_in";
    case PageChange::kForked: return "forked";
    case PageChange::kCommitted: return "committed";
    case PageChange::kDecommitted: return "decommitted";
    case PageChange::kProtected: return "protected";
    case PageChange::kUnmapped: return "unmapped";
    case PageChange::kReplaced: return "replaced";
    case PageChange::kMovedOut: return "moved_out";
    case PageChange::kExec: return "exec";
    case PageChange::kChanged: return "changed";
    case PageChange::kReleased: return "released";
    case PageChange::kAdvised: return "advised";
  }
  return "?";
}

std::vector<HistoryEntry> PageHistory(const index::TraceIndex& idx, uint32_t process,
                                      uint64_t addr) {
  std::vector<HistoryEntry> out;
  std::vector<VersionId> versions = idx.History(process, addr);
  // A page that arrived by a move or a fork has an earlier life elsewhere:
  // its history starts where it was created, up to the move or fork.
  if (!versions.empty()) {
    const index::Version& first = idx.version(versions.front());
    if ((first.begin == index::Begin::kMovedIn || first.begin == index::Begin::kForked) &&
        first.prev.valid()) {
      const index::Version& from = idx.version(first.prev);
      for (HistoryEntry& h :
           PageHistory(idx, from.process, first.prev_addr + (addr - first.start))) {
        if (h.time > first.t_from) break;
        // The fork copied the page; it did not leave the parent.
        if (first.begin == index::Begin::kForked && h.time == first.t_from &&
            h.version == first.prev && h.change != PageChange::kCreated) {
          continue;
        }
        out.push_back(std::move(h));
      }
    }
  }
  for (size_t i = 0; i < versions.size(); ++i) {
    const index::Version& v = idx.version(versions[i]);
    out.push_back(HistoryEntry{v.t_from, ChangeOf(v.begin), versions[i], v.begin_event});
    AddAdvice(idx, process, addr, v.t_from, v.t_to, versions[i], &out);
    if (v.end_kind == index::End::kNotEnded) continue;
    // If the next version of this page continues this one (a split that kept
    // this page), its "split" entry tells the story; otherwise the page left.
    bool continued = false;
    if (i + 1 < versions.size()) {
      const index::Version& next = idx.version(versions[i + 1]);
      continued = next.prev == versions[i] && next.t_from == v.t_to;
    }
    if (!continued) {
      out.push_back(HistoryEntry{v.t_to, ChangeOf(v.end_kind), versions[i], v.end_event});
    }
  }
  SortByTime(&out);
  return out;
}

std::vector<HistoryEntry> PageLineage(const index::TraceIndex& idx, uint32_t process,
                                      uint64_t addr, uint64_t at) {
  // The page at `at`, or the last one that held addr before `at`.
  VersionId v = idx.Lookup(process, addr, at);
  if (!v.valid()) {
    for (VersionId c : idx.History(process, addr)) {
      if (idx.version(c).t_from <= at) v = c;  // History is oldest first
    }
  }
  if (!v.valid()) return {};
  // Walk back through `prev`: each step maps the address into the version it
  // continues (the same address for splits and forks, the source for moves).
  std::vector<VersionId> chain;
  std::vector<uint64_t> at_addr;  // the page's address in each version of the chain
  uint64_t a = addr;
  for (VersionId cur = v; cur.valid();) {
    chain.push_back(cur);
    at_addr.push_back(a);
    const index::Version& ver = idx.version(cur);
    if (!ver.prev.valid()) break;
    a = ver.prev_addr + (a - ver.start);
    cur = ver.prev;
  }
  std::vector<HistoryEntry> out;
  for (size_t i = chain.size(); i-- > 0;) {
    const index::Version& ver = idx.version(chain[i]);
    out.push_back(HistoryEntry{ver.t_from, ChangeOf(ver.begin), chain[i], ver.begin_event});
    AddAdvice(idx, ver.process, at_addr[i], ver.t_from, std::min(ver.t_to, at + (at != index::kEndOfTrace)),
              chain[i], &out);
    // Every version but the newest continues into the next: its end is that
    // next version's beginning. The newest may have ended by `at`.
    if (i == 0 && ver.end_kind != index::End::kNotEnded && ver.t_to <= at) {
      out.push_back(HistoryEntry{ver.t_to, ChangeOf(ver.end_kind), chain[i], ver.end_event});
    }
  }
  SortByTime(&out);
  return out;
}

}  // namespace pageblame::analysis
