#include "processor/index/index_codec.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "processor/base/byte_sink.h"
#include "processor/base/byte_writer.h"
#include "processor/base/status_macros.h"
#include "processor/base/stream_reader.h"
#include "processor/index/index_thinning.h"

namespace pageblame::index {
namespace {

// The fewest bytes each kind of entry takes, to refuse a count that the
// bytes left cannot hold before anything is allocated for it.
constexpr size_t kMinString = 1;
constexpr size_t kMinStackFrame = 12;
constexpr size_t kMinStackEntry = 5;
constexpr size_t kMinEvent = 97;
constexpr size_t kMinVersion = 87;
constexpr size_t kMinProcess = 100;

absl::Status Damaged(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("the index is damaged: ", what));
}

template <typename Id>
void PutId(std::string* out, Id id) {
  PutFixed<uint32_t>(out, id.value());
}

template <typename Id>
bool ReadId(StreamReader* r, Id* id) {
  uint32_t v = 0;
  if (!r->Read(&v)) return false;
  *id = Id(v);
  return true;
}

// A count of entries of at least `min_size` bytes each, that the bytes left
// can hold.
absl::StatusOr<uint64_t> ReadCount(StreamReader* r, size_t min_size, absl::string_view what) {
  uint64_t n = 0;
  if (!r->Read(&n)) return Damaged(absl::StrCat("it ends before the count of ", what));
  if (n > r->remaining() / min_size) return Damaged(absl::StrCat(n, " ", what, " cannot fit in what is left"));
  return n;
}

// ---------------------------------------------------------------- encoding

void PutStats(std::string* out, const TraceStats& s) {
  for (uint64_t v :
       {s.records,         s.samples,         s.memory_samples,  s.skipped_samples,  s.other_syscall_samples,
        s.calls,           s.calls_failed,    s.calls_no_change, s.unmatched_exits,  s.unmatched_enters,
        s.pending_at_end,  s.unknown_records, s.bad_samples,     s.bad_records,      s.impossible_calls,
        s.impossible_from, s.impossible_to,   s.out_of_order,    s.unmaps_reordered, s.calls_32bit,
        s.mmap_records,    s.comm_records,    s.fork_records,    s.exit_records,     s.lost_records,
        s.first_time,      s.last_time,       s.thinned_before,  s.thinned_calls,    s.thinned_versions}) {
    PutFixed(out, v);
  }
  PutFixed<uint8_t>(out, s.time_order_by_rounds);
  PutFixed<uint8_t>(out, s.data_mappings);
  PutString(out, s.first_unparsed);
  PutString(out, s.first_impossible);
  PutFixed<uint64_t>(out, s.unparsed.size());
  for (const UnparsedSpan& u : s.unparsed) {
    for (uint64_t v : {u.t_from, u.t_to, u.samples, u.records}) PutFixed(out, v);
  }
  PutFixed<uint64_t>(out, s.lost.size());
  for (const LostSpan& l : s.lost) {
    for (uint64_t v : {l.t_from, l.t_to, l.count}) PutFixed(out, v);
    PutFixed<uint8_t>(out, l.samples);
  }
}

void PutEvent(std::string* out, const CallEvent& e, const IndexThinning& n) {
  for (uint64_t v : {e.time, e.first_time, e.last_time}) PutFixed(out, v);
  PutFixed(out, e.pid);
  PutFixed(out, e.tid);
  PutFixed<uint8_t>(out, static_cast<uint8_t>(e.syscall));
  for (uint64_t a : e.args) PutFixed(out, a);
  PutFixed(out, e.ret);
  PutId(out, n.Stack(e.stack));
  PutId(out, n.String(e.comm));
}

void PutVersion(std::string* out, const Version& v, const IndexThinning& n) {
  for (uint64_t x : {v.start, v.end, v.t_from, v.t_to}) PutFixed(out, x);
  PutFixed(out, v.process);
  PutFixed<uint8_t>(out, static_cast<uint8_t>(v.begin));
  PutFixed<uint8_t>(out, static_cast<uint8_t>(v.end_kind));
  for (EventId e : {v.origin, v.commit, v.begin_event, v.end_event}) PutId(out, n.Event(e));
  PutId(out, n.Version(v.prev));
  PutFixed(out, v.prev_addr);
  PutFixed(out, v.attrs.prot);
  PutFixed(out, v.attrs.flags);
  PutFixed(out, v.attrs.pgoff);
  PutId(out, n.String(v.attrs.path));
  PutFixed<uint8_t>(out, v.attrs.prot_known);
}

}  // namespace

// The friend of TraceIndex, StackTable and MappedTally that reads and
// writes their private parts.
class IndexCodecAccess {
 public:
  // The stack table's prefix tree: every node but the root (its ip, its
  // parent, an earlier node), then every id (its leaf node, whether
  // unwound, whether it is the id its node interns to: Bind's aliases and
  // unbound reserved ids are not). Thinned (`kept`), only the ids kept and
  // the nodes on their paths, renumbered; a node whose owner went has none.
  static void PutStacks(PieceWriter* w, const StackTable& t, const StackTable::Kept* kept) {
    std::string* out = w->buf();
    auto node_id = [&](uint32_t node) { return kept == nullptr ? node : kept->nodes[node]; };
    // Thinned, over the tables as `kept` saw them (nothing interns meanwhile).
    const size_t nodes = kept == nullptr ? t.nodes_.size() : kept->nodes.size();
    const size_t ids = kept == nullptr ? t.entries_.size() : kept->stacks.size();
    PutFixed<uint64_t>(out, kept == nullptr ? nodes - 1 : kept->num_frames);
    for (size_t i = 1; i < nodes; ++i) {
      if (node_id(static_cast<uint32_t>(i)) == StackTable::Kept::kGone) continue;
      PutFixed(out, t.nodes_[i].ip);
      PutFixed(out, node_id(t.nodes_[i].parent));  // kept: its callers are
      w->Next();
    }
    PutFixed<uint64_t>(out, kept == nullptr ? ids : kept->num_stacks);
    for (size_t i = 0; i < ids; ++i) {
      if (kept != nullptr && kept->stacks[i] == StackTable::Kept::kGone) continue;
      const uint32_t node = t.entries_[i] & StackTable::kNodeMask;
      PutFixed(out, node_id(node));
      const bool owns = t.nodes_[node].stack == i;
      PutFixed<uint8_t>(out, ((t.entries_[i] & StackTable::kUnwoundBit) != 0 ? 1 : 0) | (owns ? 2 : 0));
      w->Next();
    }
  }

  static void PutTally(std::string* out, const MappedTally& m) {
    PutFixed(out, m.now_);
    for (uint64_t v : {m.instant_, m.since_, m.peak_.time, m.peak_.bytes}) PutFixed(out, v);
    PutFixed<uint8_t>(out, m.have_peak_);
  }

  static void PutProcess(PieceWriter* w, const Process& p, const IndexThinning& n) {
    std::string* out = w->buf();
    PutFixed(out, p.pid);
    PutFixed(out, p.ppid);
    for (uint64_t v : {p.t_start, p.t_exit, p.t_exec}) PutFixed(out, v);
    for (bool b : {p.existed_before_trace, p.saw_exec, p.is_32bit}) PutFixed<uint8_t>(out, b);
    PutId(out, n.String(p.comm));
    PutId(out, n.Event(p.unknown_break_event));
    PutFixed<uint64_t>(out, p.live.size());
    for (const auto& [start, r] : p.live) {
      PutFixed(out, start);
      PutFixed(out, r.end);
      PutId(out, n.Version(r.version));  // live: never left out
      PutFixed(out, r.t_from);
      w->Next();
    }
    // The madvise calls kept are those whose call is.
    size_t kept = 0;
    for (const Advice& a : p.advice) kept += n.Event(a.event).valid();
    PutFixed<uint64_t>(out, kept);
    for (const Advice& a : p.advice) {
      if (!n.Event(a.event).valid()) continue;
      for (uint64_t v : {a.start, a.end, a.time}) PutFixed(out, v);
      PutId(out, n.Event(a.event));
      w->Next();
    }
    PutTally(out, p.mapped);
  }

  // Into `sink` a piece at a time (PieceWriter): never the whole in memory.
  static void Encode(const TraceIndex& idx, const IndexThinning& n, const TraceStats& stats, ByteSink* sink) {
    PieceWriter w(sink);
    std::string* out = w.buf();
    PutFixed<uint64_t>(out, n.KeptStrings(idx.strings().size()));
    for (uint32_t i = 0; i < idx.strings().size(); ++i) {
      if (!n.KeepsString(i)) continue;
      PutString(out, idx.strings().Get(StringId(i)));
      w.Next();
    }
    PutStacks(&w, idx.stacks_, n.stacks());
    PutFixed<uint64_t>(out, n.KeptEvents(idx.num_events()));
    for (size_t i = 0; i < idx.num_events(); ++i) {
      if (n.KeepsEvent(i)) {
        PutEvent(out, idx.event(EventId(static_cast<uint32_t>(i))), n);
        w.Next();
      }
    }
    PutFixed<uint64_t>(out, n.KeptVersions(idx.num_versions()));
    for (size_t i = 0; i < idx.num_versions(); ++i) {
      if (n.KeepsVersion(i)) {
        PutVersion(out, idx.version(VersionId(static_cast<uint32_t>(i))), n);
        w.Next();
      }
    }
    PutFixed<uint64_t>(out, idx.num_processes());
    for (size_t i = 0; i < idx.num_processes(); ++i) PutProcess(&w, idx.process(static_cast<uint32_t>(i)), n);
    PutStats(out, stats);
  }
  static void Encode(const TraceIndex& idx, ByteSink* out) { Encode(idx, IndexThinning{}, idx.stats_, out); }

  // EncodeThinned: the versions that outlive `cutoff`, the calls they
  // name or made after it, and the stacks and strings those name
  // (index_thinning.h), numbered in their old order.
  static void EncodeThinned(const TraceIndex& idx, uint64_t cutoff, ByteSink* out) {
    TraceStats stats = idx.stats_;
    const IndexThinning n = IndexThinning::At(idx, cutoff, &stats, IndexThinning::Tables::kThinned);
    Encode(idx, n, stats, out);
  }

  static size_t KeptByThinning(const TraceIndex& idx, uint64_t cutoff) {
    TraceStats stats;
    const IndexThinning n = IndexThinning::At(idx, cutoff, &stats);
    return n.KeptEvents(idx.num_events()) + n.KeptVersions(idx.num_versions());
  }

  // ---------------------------------------------------------------- decoding

  static absl::Status ReadStrings(StreamReader* r, TraceIndex* idx) {
    ASSIGN_OR_RETURN(uint64_t n, ReadCount(r, kMinString, "strings"));
    for (uint64_t i = 0; i < n; ++i) {
      std::string_view s;
      if (!r->ReadString(&s)) return Damaged(absl::StrCat("string ", i, " runs past the end"));
      // Interning gives each string the next id: a repeated one would
      // shift every later id.
      if (idx->strings_.Intern(s).value() != i) return Damaged(absl::StrCat("string ", i, " repeats an earlier one"));
    }
    return absl::OkStatus();
  }

  // Into a fresh table (the root alone). A node's parent comes before it,
  // so every walk to the root ends; no two nodes are the same frame under
  // the same caller, and no node is owned twice, so interning more (a
  // folded recording goes on) finds what the replay found.
  static absl::Status ReadStacks(StreamReader* r, StackTable* t) {
    ASSIGN_OR_RETURN(uint64_t n_nodes, ReadCount(r, kMinStackFrame, "stack frames"));
    if (n_nodes >= StackTable::kNodeMask) return Damaged(absl::StrCat(n_nodes, " stack frames are too many"));
    t->set_.reserve(n_nodes);
    for (uint64_t i = 1; i <= n_nodes; ++i) {
      StackTable::Node n;
      // The count was checked against the bytes the stream declares; a
      // stream cut short still fails here.
      if (!r->Read(&n.ip) || !r->Read(&n.parent)) return Damaged(absl::StrCat("stack frame ", i, " runs past the end"));
      if (n.parent >= i) return Damaged(absl::StrCat("stack frame ", i, " has no earlier caller frame"));
      const uint32_t node = static_cast<uint32_t>(t->nodes_.push_back(n));
      if (!t->set_.insert(node).second) {
        return Damaged(absl::StrCat("stack frame ", i, " repeats an earlier one"));
      }
    }
    ASSIGN_OR_RETURN(uint64_t n, ReadCount(r, kMinStackEntry, "stacks"));
    for (uint64_t i = 0; i < n; ++i) {
      uint32_t node = 0;
      uint8_t flags = 0;
      if (!r->Read(&node) || !r->Read(&flags)) return Damaged(absl::StrCat("stack ", i, " runs past the end"));
      if (node > n_nodes || flags > 3) return Damaged(absl::StrCat("stack ", i, " names no stack frame"));
      t->entries_.push_back(node | ((flags & 1) != 0 ? StackTable::kUnwoundBit : 0));
      if ((flags & 2) != 0) {
        if (t->nodes_[node].stack != StackTable::kNoStack) {
          return Damaged(absl::StrCat("stack ", i, " repeats stack ", t->nodes_[node].stack));
        }
        t->nodes_[node].stack = static_cast<uint32_t>(i);
      }
    }
    return absl::OkStatus();
  }

  static bool ReadEvent(StreamReader* r, CallEvent* e) {
    uint8_t syscall = 0;
    bool ok = r->Read(&e->time) && r->Read(&e->first_time) && r->Read(&e->last_time) && r->Read(&e->pid) &&
              r->Read(&e->tid) && r->Read(&syscall);
    for (uint64_t& a : e->args) ok = ok && r->Read(&a);
    ok = ok && r->Read(&e->ret) && ReadId(r, &e->stack) && ReadId(r, &e->comm);
    e->syscall = static_cast<decode::Syscall>(syscall);
    return ok && syscall < static_cast<uint8_t>(decode::Syscall::kCount);
  }

  static bool ReadVersion(StreamReader* r, Version* v) {
    uint8_t begin = 0, end_kind = 0, prot_known = 0;
    bool ok = r->Read(&v->start) && r->Read(&v->end) && r->Read(&v->t_from) && r->Read(&v->t_to) &&
              r->Read(&v->process) && r->Read(&begin) && r->Read(&end_kind);
    for (EventId* e : {&v->origin, &v->commit, &v->begin_event, &v->end_event}) ok = ok && ReadId(r, e);
    ok = ok && ReadId(r, &v->prev) && r->Read(&v->prev_addr) && r->Read(&v->attrs.prot) && r->Read(&v->attrs.flags) &&
         r->Read(&v->attrs.pgoff) && ReadId(r, &v->attrs.path) && r->Read(&prot_known);
    v->begin = static_cast<Begin>(begin);
    v->end_kind = static_cast<End>(end_kind);
    v->attrs.prot_known = prot_known != 0;
    return ok && begin <= static_cast<uint8_t>(Begin::kProtected) && end_kind <= static_cast<uint8_t>(End::kChanged);
  }

  static bool ReadTally(StreamReader* r, MappedTally* m) {
    uint8_t have = 0;
    const bool ok = r->Read(&m->now_) && r->Read(&m->instant_) && r->Read(&m->since_) && r->Read(&m->peak_.time) &&
                    r->Read(&m->peak_.bytes) && r->Read(&have);
    m->have_peak_ = have != 0;
    return ok;
  }

  static absl::Status ReadProcess(StreamReader* r, uint32_t i, Process* p) {
    uint8_t flags[3] = {0, 0, 0};
    bool ok = r->Read(&p->pid) && r->Read(&p->ppid) && r->Read(&p->t_start) && r->Read(&p->t_exit) &&
              r->Read(&p->t_exec) && r->Read(&flags[0]) && r->Read(&flags[1]) && r->Read(&flags[2]) &&
              ReadId(r, &p->comm) && ReadId(r, &p->unknown_break_event);
    if (!ok) return Damaged(absl::StrCat("process ", i, " runs past the end"));
    p->existed_before_trace = flags[0] != 0;
    p->saw_exec = flags[1] != 0;
    p->is_32bit = flags[2] != 0;
    ASSIGN_OR_RETURN(uint64_t live, ReadCount(r, 28, "live regions"));
    for (uint64_t k = 0; k < live; ++k) {
      uint64_t start = 0;
      LiveRegion lr;
      if (!r->Read(&start) || !r->Read(&lr.end) || !ReadId(r, &lr.version) || !r->Read(&lr.t_from)) {
        return Damaged(absl::StrCat("process ", i, "'s live regions run past the end"));
      }
      if (!p->live.emplace(start, lr).second) return Damaged(absl::StrCat("process ", i, " has a region twice"));
    }
    ASSIGN_OR_RETURN(uint64_t advice, ReadCount(r, 28, "madvise calls"));
    p->advice.resize(advice);
    for (Advice& a : p->advice) {
      if (!r->Read(&a.start) || !r->Read(&a.end) || !r->Read(&a.time) || !ReadId(r, &a.event)) {
        return Damaged(absl::StrCat("process ", i, "'s madvise calls run past the end"));
      }
    }
    if (!ReadTally(r, &p->mapped)) return Damaged(absl::StrCat("process ", i, "'s tally runs past the end"));
    return absl::OkStatus();
  }

  static absl::Status ReadStats(StreamReader* r, TraceStats* s) {
    bool ok = true;
    for (
        uint64_t* v :
        {&s->records,         &s->samples,         &s->memory_samples,  &s->skipped_samples,  &s->other_syscall_samples,
         &s->calls,           &s->calls_failed,    &s->calls_no_change, &s->unmatched_exits,  &s->unmatched_enters,
         &s->pending_at_end,  &s->unknown_records, &s->bad_samples,     &s->bad_records,      &s->impossible_calls,
         &s->impossible_from, &s->impossible_to,   &s->out_of_order,    &s->unmaps_reordered, &s->calls_32bit,
         &s->mmap_records,    &s->comm_records,    &s->fork_records,    &s->exit_records,     &s->lost_records,
         &s->first_time,      &s->last_time,       &s->thinned_before,  &s->thinned_calls,   &s->thinned_versions}) {
      ok = ok && r->Read(v);
    }
    uint8_t rounds = 0, data = 0;
    ok = ok && r->Read(&rounds) && r->Read(&data) && r->ReadString(&s->first_unparsed) &&
         r->ReadString(&s->first_impossible);
    if (!ok) return Damaged("the load's counters run past the end");
    s->time_order_by_rounds = rounds != 0;
    s->data_mappings = data != 0;
    ASSIGN_OR_RETURN(uint64_t n_unparsed, ReadCount(r, 32, "unparsed spans"));
    s->unparsed.resize(n_unparsed);
    for (UnparsedSpan& u : s->unparsed) {
      if (!r->Read(&u.t_from) || !r->Read(&u.t_to) || !r->Read(&u.samples) || !r->Read(&u.records)) {
        return Damaged("the unparsed spans run past the end");
      }
    }
    ASSIGN_OR_RETURN(uint64_t n_lost, ReadCount(r, 25, "lost spans"));
    s->lost.resize(n_lost);
    for (LostSpan& l : s->lost) {
      uint8_t samples = 0;
      if (!r->Read(&l.t_from) || !r->Read(&l.t_to) || !r->Read(&l.count) || !r->Read(&samples)) {
        return Damaged("the lost spans run past the end");
      }
      l.samples = samples != 0;
    }
    return absl::OkStatus();
  }

  static absl::Status ReadTables(StreamReader* r, TraceIndex* idx) {
    RETURN_IF_ERROR(ReadStrings(r, idx));
    RETURN_IF_ERROR(ReadStacks(r, &idx->stacks_));
    ASSIGN_OR_RETURN(uint64_t n_events, ReadCount(r, kMinEvent, "calls"));
    idx->Reserve(n_events, 0);
    for (uint64_t i = 0; i < n_events; ++i) {
      CallEvent e;
      if (!ReadEvent(r, &e)) return Damaged(absl::StrCat("call ", i, " runs past the end or names no syscall"));
      idx->AddEvent(e);
    }
    ASSIGN_OR_RETURN(uint64_t n_versions, ReadCount(r, kMinVersion, "versions"));
    idx->Reserve(0, n_versions);
    for (uint64_t i = 0; i < n_versions; ++i) {
      Version v;
      if (!ReadVersion(r, &v)) return Damaged(absl::StrCat("version ", i, " runs past the end or is of no kind"));
      idx->AddVersion(v);
    }
    ASSIGN_OR_RETURN(uint64_t n_processes, ReadCount(r, kMinProcess, "processes"));
    for (uint64_t i = 0; i < n_processes; ++i) {
      Process p;
      RETURN_IF_ERROR(ReadProcess(r, static_cast<uint32_t>(i), &p));
      idx->AddProcess(std::move(p));
    }
    return ReadStats(r, &idx->stats_);
  }
};

namespace {

// Every id names an entry of its table (or is invalid where that means
// something); every range is a range.
class Checker {
 public:
  explicit Checker(const TraceIndex& idx) : idx_(idx) {}

  absl::Status Check() const {
    for (size_t i = 0; i < idx_.num_events(); ++i) {
      const CallEvent& e = idx_.event(EventId(static_cast<uint32_t>(i)));
      if (!Names(e.stack, idx_.stacks().size()) || !Names(e.comm, idx_.strings().size())) {
        return Damaged(absl::StrCat("call ", i, " names a stack or comm the index does not have"));
      }
    }
    for (size_t i = 0; i < idx_.num_versions(); ++i) RETURN_IF_ERROR(CheckVersion(i));
    for (size_t i = 0; i < idx_.num_processes(); ++i) RETURN_IF_ERROR(CheckProcess(i));
    return absl::OkStatus();
  }

 private:
  // The replay keeps whole pages only (replay/call_rules.h).
  static bool Paged(uint64_t a) { return a % 4096 == 0; }
  template <typename Id>
  static bool Names(Id id, size_t size) {
    return !id.valid() || id.value() < size;
  }
  bool Event(EventId id) const { return Names(id, idx_.num_events()); }

  absl::Status CheckVersion(size_t i) const {
    const Version& v = idx_.version(VersionId(static_cast<uint32_t>(i)));
    const bool ok = v.start <= v.end && Paged(v.start) && Paged(v.end) && v.t_from <= v.t_to &&
                    v.process < idx_.num_processes() && Event(v.origin) && Event(v.commit) && Event(v.begin_event) &&
                    Event(v.end_event) && Names(v.prev, idx_.num_versions()) &&
                    Names(v.attrs.path, idx_.strings().size());
    return ok ? absl::OkStatus() : Damaged(absl::StrCat("version ", i, " is no range, or names what is not there"));
  }

  absl::Status CheckProcess(size_t i) const {
    const Process& p = idx_.process(static_cast<uint32_t>(i));
    if (!Names(p.comm, idx_.strings().size()) || !Event(p.unknown_break_event)) {
      return Damaged(absl::StrCat("process ", i, " names a comm or call the index does not have"));
    }
    uint64_t last_end = 0;
    for (const auto& [start, r] : p.live) {
      if (start < last_end || start >= r.end || !Paged(start) || !Paged(r.end) || !r.version.valid() ||
          r.version.value() >= idx_.num_versions()) {
        return Damaged(absl::StrCat("process ", i, "'s live regions overlap or name no version"));
      }
      last_end = r.end;
    }
    for (const Advice& a : p.advice) {
      if (a.start > a.end || !Event(a.event)) return Damaged(absl::StrCat("process ", i, " has a bad madvise"));
    }
    return absl::OkStatus();
  }

  const TraceIndex& idx_;
};

}  // namespace

void IndexCodec::Encode(const TraceIndex& idx, std::string* out) {
  StringSink sink(out);
  Encode(idx, &sink);
}

void IndexCodec::Encode(const TraceIndex& idx, ByteSink* out) { IndexCodecAccess::Encode(idx, out); }

void IndexCodec::EncodeThinned(const TraceIndex& idx, uint64_t cutoff, std::string* out) {
  StringSink sink(out);
  EncodeThinned(idx, cutoff, &sink);
}

void IndexCodec::EncodeThinned(const TraceIndex& idx, uint64_t cutoff, ByteSink* out) {
  IndexCodecAccess::EncodeThinned(idx, cutoff, out);
}

size_t IndexCodec::KeptByThinning(const TraceIndex& idx, uint64_t cutoff) {
  return IndexCodecAccess::KeptByThinning(idx, cutoff);
}

absl::Status IndexCodec::Decode(std::string_view bytes, TraceIndex* idx) {
  StreamReader r(bytes);
  return Decode(&r, idx);
}

absl::Status IndexCodec::Decode(StreamReader* r, TraceIndex* idx) {
  if (absl::Status s = IndexCodecAccess::ReadTables(r, idx); !s.ok()) {
    // A stream that failed or ended early: that is what was wrong.
    if (!r->status().ok()) {
      return absl::DataLossError(absl::StrCat(s.message(), " (", r->status().message(), ")"));
    }
    return s;
  }
  if (!r->empty()) return Damaged(absl::StrCat(r->remaining(), " bytes follow its tables"));
  RETURN_IF_ERROR(Checker(*idx).Check());
  idx->Finalize();
  return absl::OkStatus();
}

}  // namespace pageblame::index
