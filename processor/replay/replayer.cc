#include "processor/replay/replayer.h"

#include <sys/mman.h>

#include <algorithm>
#include <optional>

#include "processor/replay/address_space.h"
#include "processor/replay/call_check.h"
#include "processor/replay/call_rules.h"

namespace pageblame::replay {

using decode::Syscall;
using index::RegionAttrs;

void Replayer::Apply(const TraceEvent& e, bool exit_part) {
  index::TraceStats& st = idx_->mutable_stats();
  const bool call_exit = e.kind == TraceEvent::Kind::kCall && exit_part;
  const uint64_t time = call_exit ? e.call().exit_time : e.time;
  // Time-0 records (attach-time synthesized maps, end-of-trace lost totals)
  // carry no time and do not bound the trace.
  if (time != 0 && (st.first_time == 0 || time < st.first_time)) st.first_time = time;
  st.last_time = std::max(st.last_time, time);
  // The kernel's table at the attach, before the first event at or after
  // the moment it was read.
  if (attach_ != nullptr && time != 0 && time >= attach_->next_time()) attach_->ApplyDue(time, &procs_, idx_);
  switch (e.kind) {
    case TraceEvent::Kind::kEnter:
      OnEnter(e);
      break;
    case TraceEvent::Kind::kExit:
      OnExit(CallExit{e.time, e.call().raw_duplicate_time, e.call().ret, e.pid, e.tid, e.syscall});
      break;
    case TraceEvent::Kind::kCall:
      // The same two steps, each at its own time (the sorter delivers the
      // halves apart; other threads' events may come between).
      if (!exit_part) {
        OnEnter(e);
      } else {
        OnExit(CallExit{e.call().exit_time, /*raw_duplicate_time=*/0, e.call().ret, e.pid, e.tid,
                         e.syscall});
      }
      break;
    case TraceEvent::Kind::kComm:
      ++st.comm_records;
      OnComm(e);
      break;
    case TraceEvent::Kind::kFork:
      ++st.fork_records;
      OnFork(e);
      break;
    case TraceEvent::Kind::kTaskExit:
      ++st.exit_records;
      procs_.ThreadExited(e.pid, e.tid, e.time);
      break;
    case TraceEvent::Kind::kMmap:
      ++st.mmap_records;
      OnMmapRecord(e);
      break;
    case TraceEvent::Kind::kLost:
      OnLost(e);
      break;
    case TraceEvent::Kind::kRawDuplicate:
      OnLateRawDuplicate(e);
      break;
  }
  if (e.kind != TraceEvent::Kind::kLost) last_time_ = std::max(last_time_, time);
}

void Replayer::OnEnter(const TraceEvent& e) {
  ProcessTable::Thread& th = procs_.ThreadSeen(e.pid, e.tid, e.time);
  procs_.Proc(th.process).image_window = false;
  if (th.call.Enter(e)) ++idx_->mutable_stats().unmatched_enters;
}

void Replayer::OnExit(const CallExit& exit) {
  index::TraceStats& st = idx_->mutable_stats();
  // An enter made the thread's state: none, no enter.
  ProcessTable::Thread* th = procs_.FindThread(exit.tid);
  const SyscallPairer::Pending* call = th == nullptr ? nullptr : th->call.Exit(exit.syscall);
  if (call == nullptr) {
    ++st.unmatched_exits;
    return;
  }
  ++st.calls;
  OnCall(*call, exit, *th);
}

void Replayer::OnComm(const TraceEvent& e) {
  ProcessTable::Thread& th = procs_.ThreadSeen(e.pid, e.tid, e.time);
  th.has_comm = true;
  th.comm = e.comm().comm;
  const uint32_t p = th.process;
  if (e.pid == e.tid || e.flag) idx_->mutable_process(p).comm = e.comm().comm;
  if (!e.flag) return;
  // exec: a new, empty address space (the kernel's exec mappings arrive as
  // MMAP2 records right after and are "before trace" pages).
  AddressSpace(idx_, p).Clear(e.time);
  index::Process& proc = idx_->mutable_process(p);
  proc.saw_exec = true;
  proc.t_exec = e.time;
  proc.mapped.Restart(e.time);
  proc.existed_before_trace = false;
  // The exec'ing thread is now the only one, with the process's id (the old
  // main thread's exit record may have come first: it did not end the process).
  proc.t_exit = index::kEndOfTrace;
  procs_.Proc(p) = ProcessTable::ProcState();
  procs_.Proc(p).threads = {e.pid};
  procs_.MembershipChanged();
}

void Replayer::OnFork(const TraceEvent& e) {
  const uint32_t ppid = e.task().ppid;
  const uint32_t ptid = e.task().ptid;
  if (const ProcessTable::Thread* parent = procs_.FindThread(ptid);
      parent != nullptr && parent->has_comm) {
    const StringId name = parent->comm;  // copy: ThreadState below may rehash
    ProcessTable::Thread& child = procs_.ThreadState(e.tid);
    child.has_comm = true;
    child.comm = name;
  }
  if (e.pid == ppid) {  // a new thread shares its process's space
    procs_.ThreadSeen(e.pid, e.tid, e.time);
    return;
  }
  if (std::optional<uint32_t> existing = procs_.Find(e.pid);
      existing && idx_->process(*existing).t_exit == index::kEndOfTrace) {
    return;  // already known and alive: a synthesized FORK of an attached task
  }
  index::Process child;
  child.pid = e.pid;
  child.ppid = ppid;
  child.t_start = e.time;
  child.existed_before_trace = false;
  const std::optional<uint32_t> parent = procs_.Find(ppid);
  if (parent) child.comm = idx_->process(*parent).comm;
  const uint32_t c = procs_.AddChild(child, parent, e.tid);
  if (parent) AddressSpace(idx_, c).CopyFrom(*parent, e.time);
}

void Replayer::OnMmapRecord(const TraceEvent& e) {
  const TraceEvent::Mmap& m = e.mmap();
  if (absl::Status s = CheckMappingRecord(m.start, m.len); !s.ok()) {
    OnImpossible(e.time, s);
    return;
  }
  std::string_view name = idx_->strings().Get(m.filename);
  if (m.len == 0) return;
  // Inside a memory call of this thread: the record is that call's own
  // mapping (mmap/mremap, or brk's heap with `perf record -d`); it only tells
  // us the file name for the region the call creates.
  if (SyscallPairer::Pending* call = InCall(e.tid)) {
    // perf names anonymous memory "//anon" (synthetic-events.c; -d and
    // --call-graph dwarf recordings report data mappings too): no path.
    if ((call->enter.syscall == Syscall::kMmap || call->enter.syscall == Syscall::kMremap) &&
        name != "//anon") {
      call->path = m.filename;
    }
    return;
  }
  // Otherwise the kernel made it (exec) or perf synthesized it (attach; all
  // mappings with `-d`, else only executable ones): pages that exist with no
  // creating event in the trace.
  const uint32_t p = procs_.ProcessFor(e.pid, e.time);
  RegionAttrs attrs;
  // v1 says no prot: the parser's exec-unless-data, readable (prot_known false).
  attrs.prot = m.has_prot ? m.prot : m.prot | PROT_READ;
  attrs.prot_known = m.has_prot;
  attrs.flags = m.flags;
  attrs.pgoff = m.pgoff;
  // perf names anonymous memory "//anon" (tools/perf/util/synthetic-events.c).
  if (name != "//anon") attrs.path = m.filename;
  const uint64_t start = PageDown(m.start), end = PageUp(m.start + m.len);
  AddressSpace(idx_, p).AddBeforeTrace(start, end, e.time, attrs, /*replace_unseen=*/true);
  ProcessTable::ProcState& ps = procs_.Proc(p);
  if (ps.image_window && !name.empty() && name[0] == '/') AddImageOf(p, e, name);
  // The heap's extent at attach time is the program break brk() will move.
  if (name == "[heap]" && !ps.brk_known) {
    ps.brk_known = true;
    ps.brk = end;
  }
}

void Replayer::AddImageOf(uint32_t p, const TraceEvent& e, std::string_view path) {
  if (symbolizer_ == nullptr) return;
  // perf reports only executable mappings unless recorded with -d, but the
  // kernel (load_elf_binary) maps every PT_LOAD segment of the executable and
  // its interpreter at exec, bss included, and an attached process has its
  // libraries' data segments too. The code mapping fixes the load bias.
  bool elf32 = false;
  std::vector<symbols::Symbolizer::ImageSegment> segs =
      symbolizer_->ImageSegments(path, idx_->strings().Get(e.mmap().build_id), &elf32);
  // The first image mapped at exec is the program itself.
  if (elf32 && idx_->process(p).saw_exec) idx_->mutable_process(p).is_32bit = true;
  // Only a code mapping anchors the image: data segments can share a file
  // page (RELRO), the one executable segment cannot.
  if (!(e.mmap().prot & PROT_EXEC)) return;  // v1: the parser says exec unless data (perf_reader.cc)
  const uint64_t pgoff = e.mmap().pgoff;
  const symbols::Symbolizer::ImageSegment* anchor = nullptr;
  for (const auto& s : segs) {
    if (PageDown(s.offset) == pgoff && s.memsz > 0 && (s.prot & PROT_EXEC)) anchor = &s;
  }
  if (anchor == nullptr) return;
  const uint64_t bias = PageDown(e.mmap().start) - PageDown(anchor->vaddr);
  AddressSpace as(idx_, p);
  for (const auto& s : segs) {
    if (s.memsz == 0) continue;
    index::RegionAttrs attrs;
    attrs.prot = s.prot;
    attrs.flags = MAP_PRIVATE;
    attrs.pgoff = PageDown(s.offset);
    attrs.path = e.mmap().filename;
    as.AddBeforeTrace(bias + PageDown(s.vaddr), bias + PageUp(s.vaddr + s.memsz), e.time, attrs);
  }
}

void Replayer::OnLateRawDuplicate(const TraceEvent& e) {
  if (!e.flag) {
    // The call is still in flight: widen its span from the start.
    if (SyscallPairer::Pending* call = InCall(e.tid);
        call != nullptr && call->enter.syscall == e.syscall) {
      call->first_time = std::min(call->first_time, e.time);
    }
    return;
  }
  // The call just completed: widen the recorded event, if it changed something.
  const ProcessTable::Thread* th = procs_.FindThread(e.tid);
  if (th == nullptr || !th->last_event.valid()) return;
  index::CallEvent ev = idx_->event(th->last_event);
  if (ev.syscall != e.syscall || e.time <= ev.last_time) return;
  ev.last_time = e.time;
  idx_->SetEvent(th->last_event, ev);
}

void Replayer::ThinBefore(uint64_t cutoff) { procs_.Renumber(idx_->ThinBefore(cutoff)); }

void Replayer::OnLost(const TraceEvent& e) {
  index::TraceStats& st = idx_->mutable_stats();
  st.lost_records += e.lost().count;
  st.lost.push_back(index::LostSpan{last_time_, e.time, e.lost().count, e.flag});
}

void Replayer::OnImpossible(uint64_t time, const absl::Status& why) {
  index::TraceStats& st = idx_->mutable_stats();
  if (st.impossible_calls++ == 0) {
    st.first_impossible = std::string(why.message());
    st.impossible_from = time;
  }
  st.impossible_to = std::max(st.impossible_to, time);
}

SyscallPairer::Pending* Replayer::InCall(uint32_t tid) {
  ProcessTable::Thread* th = procs_.FindThread(tid);
  return th == nullptr ? nullptr : th->call.InCall();
}

void Replayer::OnCall(const SyscallPairer::Pending& call, const CallExit& exit,
                      ProcessTable::Thread& exiting) {
  const TraceEvent& in = call.enter;
  const uint64_t t = exit.time;  // the change is visible from the exit on
  ProcessTable::Thread& th = procs_.Seen(exiting, exit.pid, exit.tid, t);
  const uint32_t p = th.process;
  th.last_event = EventId::Invalid();
  if (idx_->process(p).is_32bit) {
    ++idx_->mutable_stats().calls_32bit;
    return;
  }
  AddressSpace as(idx_, p);
  auto record = [&]() {
    index::CallEvent ce;
    ce.time = t;
    ce.first_time = call.first_time;
    ce.last_time = std::max(t, exit.raw_duplicate_time);
    ce.pid = exit.pid;
    ce.tid = exit.tid;
    ce.syscall = in.syscall;
    std::copy(std::begin(in.call().args), std::end(in.call().args), ce.args);
    ce.ret = exit.ret;
    ce.stack = in.call().stack;
    ce.comm = th.has_comm ? th.comm : idx_->process(p).comm;
    const EventId id = idx_->AddEvent(ce);
    th.last_event = id;
    return id;
  };
  if (in.syscall >= Syscall::kCount) return;
  if (absl::Status s = CheckCall(in.syscall, in.call().args, exit.ret); !s.ok()) {
    OnImpossible(t, s);
    return;
  }
  CallContext c{call, exit.ret, t, exit.tid, p, *idx_, as, procs_.Proc(p), heap_name_, record};
  RuleFor(in.syscall)(c);
}

void Replayer::Finish() {
  index::TraceStats& st = idx_->mutable_stats();
  // Tables read after the last event (an idle process): applied at their
  // own moments, which the recording reached.
  if (attach_ != nullptr) {
    const uint64_t last_table = attach_->last_time();
    attach_->ApplyDue(index::kEndOfTrace, &procs_, idx_);
    st.last_time = std::max(st.last_time, last_table);
  }
  st.pending_at_end = procs_.WaitingCalls();
  // perf writes PERF_RECORD_LOST_SAMPLES at the end of the recording with no
  // time (one per event, totals): they may have hit anywhere in the trace.
  for (index::LostSpan& l : st.lost) {
    if (l.t_to == 0) {
      l.t_from = st.first_time;
      l.t_to = st.last_time;
    }
  }
}

}  // namespace pageblame::replay
