#include "processor/analysis/query_answers.h"

#include <algorithm>

#include "processor/analysis/resident_view.h"

namespace pageblame::analysis {
namespace {

// An answer for `address` in `process` (nullopt: none) with `version`; the
// rest is filled by Query().
QueryAnswer AnswerAt(uint64_t address, std::optional<uint32_t> process, VersionId version) {
  QueryAnswer a;
  a.address = address;
  a.process = process;
  a.version = version;
  return a;
}

// The page a query's address names: x86-64's and aarch64's usual 4 KiB (the
// replay's unit, replay/call_rules.h).
constexpr uint64_t kQueryPage = 4096;

// The processes among `procs` that had addr mapped last before `at` (all
// whose page there went away at that same latest time: a fork's children
// exiting together), or none if none ever had it by then.
std::vector<uint32_t> LastTenants(const index::TraceIndex& idx, const std::vector<uint32_t>& procs,
                                  uint64_t addr, uint64_t at) {
  std::vector<uint32_t> out;
  uint64_t latest = 0;
  for (uint32_t p : procs) {
    uint64_t gone = 0;
    bool had = false;
    for (VersionId id : idx.History(p, addr)) {
      const index::Version& v = idx.version(id);
      if (v.t_from > at) continue;
      had = true;
      gone = std::max(gone, std::min(v.t_to, at));
    }
    if (!had) continue;
    if (out.empty() || gone > latest) {
      out = {p};
      latest = gone;
    } else if (gone == latest) {
      out.push_back(p);
    }
  }
  return out;
}

// The answer's residency as of the snapshot for its process at `at`.
void AddResidency(const index::TraceIndex& idx, const ResidentView& view, uint64_t at, QueryAnswer* a) {
  a->snapshot = view.SnapshotFor(*a->process, at);
  a->page_state = ResidentView::PageState(a->snapshot, a->address);
  if (!a->version.valid()) return;
  const index::Version& v = idx.version(a->version);
  a->region_rss = ResidentView::Bytes(a->snapshot, v.start, v.end);
}

// The answer's kind and, inside malloc's arenas, its page's and region's
// split at the heap snapshot for its process at `at`.
void AddHeapUse(const index::TraceIndex& idx, const QueryOptions& options, const HeapView& heap,
                const ResidentView& rss, QueryAnswer* a) {
  if (!a->version.valid() || !options.kind_of) return;
  const index::Version& v = idx.version(a->version);
  a->kind = options.kind_of(v);
  if (!ArenaKind(a->kind)) return;
  a->heap_snapshot = heap.SnapshotFor(*a->process, options.at, rss);
  const uint64_t page = a->address / kQueryPage * kQueryPage;
  a->page_heap = HeapView::Split(a->heap_snapshot, a->kind, v, std::max(page, v.start),
                                 std::min(page + kQueryPage, v.end));
  a->region_heap = HeapView::Split(a->heap_snapshot, a->kind, v, v.start, v.end);
}

}  // namespace

std::vector<QueryAnswer> QueryAnswers(const index::TraceIndex& idx, const std::vector<uint32_t>& procs,
                                      const std::vector<uint64_t>& addresses, uint64_t at, bool one_pid) {
  using Answer = QueryAnswer;
  std::vector<Answer> out;
  for (uint64_t addr : addresses) {
    size_t before = out.size();
    for (uint32_t p : procs) {
      VersionId v = idx.Lookup(p, addr, at);
      if (v.valid()) out.push_back(AnswerAt(addr, p, v));
    }
    if (out.size() != before) continue;
    // Nobody had it mapped then: answer for its last tenant(s), whose
    // history says when and how the page went away.
    std::vector<uint32_t> last = LastTenants(idx, procs, addr, at);
    for (uint32_t p : last) out.push_back(AnswerAt(addr, p, VersionId::Invalid()));
    if (!last.empty()) continue;
    // Never mapped there: with --pid, answer for the newest process of that
    // pid (attach mode may know why not).
    if (one_pid && !procs.empty()) {
      out.push_back(AnswerAt(addr, procs.back(), VersionId::Invalid()));
    } else {
      out.push_back(AnswerAt(addr, std::nullopt, VersionId::Invalid()));
    }
  }
  return out;
}

std::vector<QueryAnswer> Query(const index::TraceIndex& idx, const QueryOptions& options) {
  std::vector<QueryAnswer> out =
      QueryAnswers(idx, options.processes, options.addresses, options.at, options.pid.has_value());
  const ResidentView view(options.rss, idx);
  const HeapView heap(options.heap, idx);
  for (QueryAnswer& a : out) {
    if (!a.process) continue;
    a.lineage = PageLineage(idx, *a.process, a.address, options.at);
    if (!a.version.valid()) a.unknown_break = UnknownBreakCall(idx, *a.process, a.address);
    AddResidency(idx, view, options.at, &a);
    AddHeapUse(idx, options, heap, view, &a);
  }
  return out;
}

EventId UnknownBreakCall(const index::TraceIndex& idx, uint32_t p, uint64_t addr) {
  const index::Process& proc = idx.process(p);
  if (!proc.unknown_break_event.valid()) return EventId::Invalid();
  const index::CallEvent& ev = idx.event(proc.unknown_break_event);
  const uint64_t brk = static_cast<uint64_t>(ev.ret);
  if (addr >= brk) return EventId::Invalid();
  // The heap is contiguous up to the break, above the executable: nothing
  // known may lie between addr and the break, and something (the
  // executable's image) must lie below addr.
  auto above = proc.live.upper_bound(addr);
  if (above != proc.live.end() && above->first < brk) return EventId::Invalid();
  if (above == proc.live.begin()) return EventId::Invalid();
  return proc.unknown_break_event;
}

}  // namespace pageblame::analysis
