#include "processor/replay/replayer.h"

#include <sys/mman.h>

#include <algorithm>
#include <optional>

#include "processor/replay/address_space.h"

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif
#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif

namespace pageblame::replay {

using decode::IsErrorReturn;
using decode::Syscall;
using index::End;
using index::RegionAttrs;

namespace {

constexpr uint64_t kPage = 4096;
uint64_t PageUp(uint64_t x) { return (x + kPage - 1) & ~(kPage - 1); }
uint64_t PageDown(uint64_t x) { return x & ~(kPage - 1); }

// mmap lengths round up to the mapping's page size: 4 KiB, or the huge page
// size encoded in the flags for MAP_HUGETLB (include/uapi/asm-generic/mman-common.h).
uint64_t MmapLength(uint64_t len, uint64_t flags) {
  if (flags & MAP_HUGETLB) {
    uint64_t shift = (flags >> MAP_HUGE_SHIFT) & 0x3f;
    uint64_t huge = shift ? (uint64_t{1} << shift) : (uint64_t{2} << 20);
    return (len + huge - 1) & ~(huge - 1);
  }
  return PageUp(len);
}

}  // namespace

uint32_t Replayer::ProcessFor(uint32_t pid, uint64_t time) {
  // Only a fork starts a new process for a pid (OnFork); anything else seen
  // for a known pid belongs to it, even after an exit record (the main thread
  // may exit first, or be replaced by an exec from another thread).
  if (auto it = pid_to_process_.find(pid); it != pid_to_process_.end()) return it->second;
  index::Process p;
  p.pid = pid;
  p.t_start = time;
  p.existed_before_trace = true;  // until a fork or exec in the trace says otherwise
  uint32_t i = idx_->AddProcess(p);
  pid_to_process_[pid] = i;
  return i;
}

void Replayer::Apply(const TraceEvent& e, bool exit_part) {
  index::TraceStats& st = idx_->mutable_stats();
  const bool call_exit = e.kind == TraceEvent::Kind::kCall && exit_part;
  const uint64_t time = call_exit ? e.exit_time : e.time;
  // Time-0 records (attach-time synthesized maps, end-of-trace lost totals)
  // carry no time and do not bound the trace.
  if (time != 0 && (st.first_time == 0 || time < st.first_time)) st.first_time = time;
  st.last_time = std::max(st.last_time, time);
  switch (e.kind) {
    case TraceEvent::Kind::kEnter:
      OnEnter(e);
      break;
    case TraceEvent::Kind::kExit:
      OnExit(CallExit{e.time, e.twin_time, e.ret, e.pid, e.tid, e.syscall});
      break;
    case TraceEvent::Kind::kCall:
      // The same two steps, each at its own time (the sorter delivers the
      // halves apart; other threads' events may come between).
      if (!exit_part) {
        OnEnter(e);
      } else {
        OnExit(CallExit{e.exit_time, /*twin_time=*/0, e.ret, e.pid, e.tid, e.syscall});
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
    case TraceEvent::Kind::kTaskExit: {
      ++st.exit_records;
      if (auto th = thread_state_.find(e.tid); th != thread_state_.end()) th->second.call.Forget();
      // A process ends with its last thread, not with its main thread.
      auto it = pid_to_process_.find(e.pid);
      if (it != pid_to_process_.end()) {
        auto& threads = Proc(it->second).threads;
        threads.erase(e.tid);
        MembershipChanged();
        index::Process& p = idx_->mutable_process(it->second);
        if (threads.empty() && p.t_exit == index::kLive) p.t_exit = e.time;
      }
      break;
    }
    case TraceEvent::Kind::kMmap:
      ++st.mmap_records;
      OnMmapRecord(e);
      break;
    case TraceEvent::Kind::kLost:
      OnLost(e);
      break;
    case TraceEvent::Kind::kTwin:
      OnLateTwin(e);
      break;
  }
  if (e.kind != TraceEvent::Kind::kLost) last_time_ = std::max(last_time_, time);
}

void Replayer::OnEnter(const TraceEvent& e) {
  ThreadState& th = ThreadSeen(e.pid, e.tid, e.time);
  Proc(th.process).image_window = false;
  if (th.call.Enter(e)) ++idx_->mutable_stats().unmatched_enters;
}

void Replayer::OnExit(const CallExit& exit) {
  index::TraceStats& st = idx_->mutable_stats();
  // An enter made the thread's state: none, no enter.
  auto it = thread_state_.find(exit.tid);
  const SyscallPairer::Pending* call =
      it == thread_state_.end() ? nullptr : it->second.call.Exit(exit.syscall);
  if (call == nullptr) {
    ++st.unmatched_exits;
    return;
  }
  ++st.calls;
  OnCall(*call, exit, it->second);
}

Replayer::ThreadState& Replayer::ThreadSeen(uint32_t pid, uint32_t tid, uint64_t time) {
  return Seen(thread_state_[tid], pid, tid, time);
}

Replayer::ThreadState& Replayer::Seen(ThreadState& th, uint32_t pid, uint32_t tid,
                                      uint64_t time) {
  if (th.seen == membership_ && th.pid == pid) return th;
  th.process = ProcessFor(pid, time);
  th.pid = pid;
  th.seen = membership_;
  Proc(th.process).threads.insert(tid);
  return th;
}

void Replayer::OnComm(const TraceEvent& e) {
  ThreadState& th = ThreadSeen(e.pid, e.tid, e.time);
  th.has_comm = true;
  th.comm = e.str;
  const uint32_t p = th.process;
  if (e.pid == e.tid || e.flag) idx_->mutable_process(p).comm = e.str;
  if (!e.flag) return;
  // exec: a new, empty address space (the kernel's exec mappings arrive as
  // MMAP2 records right after and are "before trace" pages).
  AddressSpace(idx_, p).Clear(e.time);
  index::Process& proc = idx_->mutable_process(p);
  proc.saw_exec = true;
  proc.existed_before_trace = false;
  // The exec'ing thread is now the only one, with the process's id (the old
  // main thread's exit record may have come first: it did not end the process).
  proc.t_exit = index::kLive;
  Proc(p) = ProcState();
  Proc(p).threads = {e.pid};
  MembershipChanged();
  if (symbolizer_) symbolizer_->OnExec(e.pid, e.time);
}

void Replayer::OnFork(const TraceEvent& e) {
  uint32_t ppid = static_cast<uint32_t>(e.a[0]);
  uint32_t ptid = static_cast<uint32_t>(e.a[1]);
  if (auto parent = thread_state_.find(ptid);
      parent != thread_state_.end() && parent->second.has_comm) {
    const StringId name = parent->second.comm;  // copy: operator[] below may rehash
    ThreadState& child = thread_state_[e.tid];
    child.has_comm = true;
    child.comm = name;
  }
  if (e.pid == ppid) {  // a new thread shares its process's space
    ThreadSeen(e.pid, e.tid, e.time);
    return;
  }
  auto existing = pid_to_process_.find(e.pid);
  if (existing != pid_to_process_.end() &&
      idx_->process(existing->second).t_exit == index::kLive) {
    return;  // already known and alive: a synthesized FORK of an attached task
  }
  index::Process child;
  child.pid = e.pid;
  child.ppid = ppid;
  child.t_start = e.time;
  child.existed_before_trace = false;
  // Copy what we need of the parent before inserting: insertion may rehash
  // the maps and invalidate iterators into them.
  std::optional<uint32_t> parent;
  if (auto it = pid_to_process_.find(ppid); it != pid_to_process_.end()) parent = it->second;
  if (parent) child.comm = idx_->process(*parent).comm;
  uint32_t c = idx_->AddProcess(child);
  pid_to_process_[e.pid] = c;
  ProcState state = parent ? Proc(*parent) : ProcState();
  state.threads = {e.tid};
  Proc(c) = std::move(state);
  MembershipChanged();
  if (parent) AddressSpace(idx_, c).CopyFrom(*parent, e.time);
  if (symbolizer_) symbolizer_->OnFork(e.pid, ppid, e.time);
}

void Replayer::OnMmapRecord(const TraceEvent& e) {
  std::string_view name = idx_->strings().Get(e.str);
  if (symbolizer_) {
    symbolizer_->AddMapping(e.pid, e.time, e.a[0], e.a[1], e.a[2], name,
                            idx_->strings().Get(e.str2));
  }
  if (e.a[1] == 0) return;
  // Inside a memory call of this thread: the record is that call's own
  // mapping (mmap/mremap, or brk's heap with `perf record -d`); it only tells
  // us the file name for the region the call creates.
  if (SyscallPairer::Pending* call = InCall(e.tid)) {
    if (call->enter.syscall == Syscall::kMmap || call->enter.syscall == Syscall::kMremap) {
      call->path = e.str;
    }
    return;
  }
  // Otherwise the kernel made it (exec) or perf synthesized it (attach; all
  // mappings with `-d`, else only executable ones): pages that exist with no
  // creating event in the trace.
  uint32_t p = ProcessFor(e.pid, e.time);
  RegionAttrs attrs;
  attrs.prot = e.a[5] ? static_cast<uint32_t>(e.a[3]) : PROT_READ | PROT_EXEC;
  attrs.flags = static_cast<uint32_t>(e.a[4]);
  attrs.pgoff = e.a[2];
  // perf names anonymous memory "//anon" (tools/perf/util/synthetic-events.c).
  if (name != "//anon") attrs.path = e.str;
  const uint64_t start = PageDown(e.a[0]), end = PageUp(e.a[0] + e.a[1]);
  AddressSpace(idx_, p).AddBeforeTrace(start, end, e.time, attrs);
  ProcState& ps = Proc(p);
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
      symbolizer_->ImageSegments(path, idx_->strings().Get(e.str2), &elf32);
  // The first image mapped at exec is the program itself.
  if (elf32 && idx_->process(p).saw_exec) idx_->mutable_process(p).is_32bit = true;
  // Only a code mapping anchors the image: data segments can share a file
  // page (RELRO), the one executable segment cannot.
  const bool exec = !e.a[5] || (e.a[3] & PROT_EXEC);
  if (!exec) return;
  const uint64_t pgoff = e.a[2];
  const symbols::Symbolizer::ImageSegment* anchor = nullptr;
  for (const auto& s : segs) {
    if (PageDown(s.offset) == pgoff && s.memsz > 0 && (s.prot & PROT_EXEC)) anchor = &s;
  }
  if (anchor == nullptr) return;
  const uint64_t bias = PageDown(e.a[0]) - PageDown(anchor->vaddr);
  AddressSpace as(idx_, p);
  for (const auto& s : segs) {
    if (s.memsz == 0) continue;
    index::RegionAttrs attrs;
    attrs.prot = s.prot;
    attrs.flags = MAP_PRIVATE;
    attrs.pgoff = PageDown(s.offset);
    attrs.path = e.str;
    as.AddBeforeTrace(bias + PageDown(s.vaddr), bias + PageUp(s.vaddr + s.memsz), e.time, attrs);
  }
}

void Replayer::OnLateTwin(const TraceEvent& e) {
  if (!e.flag) {
    // The call is still in flight: widen its span from the start.
    if (SyscallPairer::Pending* call = InCall(e.tid);
        call != nullptr && call->enter.syscall == e.syscall) {
      call->first_time = std::min(call->first_time, e.time);
    }
    return;
  }
  // The call just completed: widen the recorded event, if it changed something.
  auto it = thread_state_.find(e.tid);
  if (it == thread_state_.end() || !it->second.last_event.valid()) return;
  index::CallEvent& ev = idx_->mutable_event(it->second.last_event);
  if (ev.syscall == e.syscall) ev.last_time = std::max(ev.last_time, e.time);
}

void Replayer::OnLost(const TraceEvent& e) {
  index::TraceStats& st = idx_->mutable_stats();
  st.lost_records += e.a[0];
  st.lost.push_back(index::LostSpan{last_time_, e.time, e.a[0], e.flag});
}

SyscallPairer::Pending* Replayer::InCall(uint32_t tid) {
  auto it = thread_state_.find(tid);
  return it == thread_state_.end() ? nullptr : it->second.call.InCall();
}

void Replayer::OnCall(const SyscallPairer::Pending& call, const CallExit& exit,
                      ThreadState& exiting) {
  index::TraceStats& st = idx_->mutable_stats();
  const TraceEvent& in = call.enter;
  const int64_t ret = exit.ret;
  const uint64_t t = exit.time;  // the change is visible from the exit on
  ThreadState& th = Seen(exiting, exit.pid, exit.tid, t);
  const uint32_t p = th.process;
  th.last_event = EventId::Invalid();
  if (idx_->process(p).is_32bit) {
    ++st.calls_32bit;
    return;
  }
  AddressSpace as(idx_, p);

  auto record = [&]() {
    index::CallEvent ce;
    ce.time = t;
    ce.first_time = call.first_time;
    ce.last_time = std::max(t, exit.twin_time);
    ce.pid = exit.pid;
    ce.tid = exit.tid;
    ce.syscall = in.syscall;
    std::copy(std::begin(in.a), std::end(in.a), ce.args);
    ce.ret = ret;
    ce.stack = in.stack;
    ce.comm = th.has_comm ? th.comm : idx_->process(p).comm;
    EventId id = idx_->AddEvent(ce);
    th.last_event = id;
    return id;
  };

  switch (in.syscall) {
    case Syscall::kMmap: {
      if (IsErrorReturn(ret)) { ++st.calls_failed; return; }
      const uint64_t start = static_cast<uint64_t>(ret);
      const uint64_t end = start + MmapLength(in.a[1], in.a[3]);
      EventId ev = record();
      RegionAttrs attrs;
      attrs.prot = static_cast<uint32_t>(in.a[2]);
      attrs.flags = static_cast<uint32_t>(in.a[3]);
      attrs.pgoff = (in.a[3] & MAP_ANONYMOUS) ? 0 : in.a[5];
      attrs.path = call.path;
      // MAP_FIXED (or any placement) replaces whatever was there.
      as.Map(start, end, t, ev, attrs);
      return;
    }
    case Syscall::kMunmap: {
      if (ret != 0) { ++st.calls_failed; return; }
      const uint64_t start = in.a[0];
      const uint64_t end = start + PageUp(in.a[1]);
      const bool changed = as.Unmap(start, end, t, record, [&](const AddressSpace::Piece& piece) {
        // The kernel applied this munmap somewhere between its enter and its
        // exit record. A page another thread mapped there in between, where
        // the kernel checked the range was free, was placed after the unmap:
        // it is not this call's to remove.
        if (!PlacedInFreeRangeSince(piece, in.time, exit.tid)) return false;
        ++st.unmaps_reordered;
        return true;
      });
      if (!changed) ++st.calls_no_change;
      return;
    }
    case Syscall::kBrk: {
      // brk returns the new break, or the old one when it refuses; the first
      // answer we see is the initial break (or, in attach mode, the break at
      // the time the trace began).
      ProcState& ps = Proc(p);
      const uint64_t now = static_cast<uint64_t>(ret);
      if (!ps.brk_known) {
        ps.brk_known = true;
        ps.brk = now;
        index::Process& proc = idx_->mutable_process(p);
        if (in.a[0] != 0 && proc.existed_before_trace && !proc.unknown_break_event.valid()) {
          // Attached without -d: this call moved the break from a value the
          // trace never saw, so which heap pages it made cannot be known.
          // Remember it so answers about the heap can say so.
          proc.unknown_break_event = record();
          return;
        }
        ++st.calls_no_change;
        return;
      }
      const uint64_t old_end = PageUp(ps.brk), new_end = PageUp(now);
      ps.brk = now;
      if (new_end == old_end) {
        ++(in.a[0] != 0 && now != in.a[0] ? st.calls_failed : st.calls_no_change);
        return;
      }
      EventId ev = record();
      if (new_end > old_end) {
        RegionAttrs attrs;
        attrs.prot = PROT_READ | PROT_WRITE;
        attrs.flags = MAP_PRIVATE | MAP_ANONYMOUS;
        attrs.path = heap_name_;
        as.Map(old_end, new_end, t, ev, attrs);
      } else {
        as.Remove(new_end, old_end, t, End::kUnmapped, ev);
      }
      return;
    }
    case Syscall::kMremap: {
      if (IsErrorReturn(ret)) { ++st.calls_failed; return; }
      const uint64_t old_addr = in.a[0];
      const uint64_t old_len = PageUp(in.a[1]);
      const uint64_t new_len = PageUp(in.a[2]);
      const uint64_t flags = in.a[3];
      const uint64_t dst = static_cast<uint64_t>(ret);
      EventId ev = record();
      if (old_len == 0) {
        // mremap(old, 0, n, MAYMOVE) duplicates a shared mapping: new pages.
        RegionAttrs attrs = as.AttrsAt(old_addr);
        if (call.path.valid()) attrs.path = call.path;
        as.Map(dst, dst + new_len, t, ev, attrs);
        return;
      }
      if (dst == old_addr) {  // in place
        if (new_len < old_len) {
          as.Remove(old_addr + new_len, old_addr + old_len, t, End::kUnmapped, ev);
        } else if (new_len > old_len) {
          RegionAttrs attrs = as.AttrsAt(old_addr + old_len - 1);
          if (attrs.path.valid() || attrs.pgoff) attrs.pgoff += kPage;
          as.Map(old_addr + old_len, old_addr + new_len, t, ev, attrs);
        }
        return;
      }
      // A move. The target is freed first (MREMAP_FIXED unmaps what was there).
      as.Remove(dst, dst + new_len, t, End::kReplaced, ev);
      const bool keep = (flags & MREMAP_DONTUNMAP) != 0;
      const uint64_t moved = std::min(old_len, new_len);
      if (new_len < old_len && !keep) {
        as.Remove(old_addr + new_len, old_addr + old_len, t, End::kUnmapped, ev);
      }
      RegionAttrs last = as.Move(old_addr, moved, dst, t, ev, keep);
      if (new_len > old_len) {
        if (last.path.valid() || last.pgoff) last.pgoff += kPage;
        as.Create(dst + old_len, dst + new_len, t, ev, last);
      }
      return;
    }
    case Syscall::kCount:
      return;
  }
}

bool Replayer::PlacedInFreeRangeSince(const AddressSpace::Piece& piece, uint64_t since,
                                      uint32_t tid) const {
  // Nearly every piece is older than the call: answered without its version.
  if (piece.t_from <= since) return false;
  const index::Version& v = idx_->version(piece.from);
  if (!v.begin_event.valid()) return false;
  if (v.begin != index::Begin::kCreated && v.begin != index::Begin::kMovedIn) return false;
  const index::CallEvent& by = idx_->event(v.begin_event);
  if (by.tid == tid) return false;  // one thread's calls are in order
  // Only MAP_FIXED and MREMAP_FIXED replace what is there; every other way
  // of creating pages (kernel-chosen address, MAP_FIXED_NOREPLACE, brk,
  // mremap growing in place) fails unless the range is free.
  if (by.syscall == Syscall::kMmap) return (by.args[3] & MAP_FIXED) == 0;
  if (by.syscall == Syscall::kMremap) return (by.args[3] & MREMAP_FIXED) == 0;
  return true;
}

void Replayer::Finish() {
  index::TraceStats& st = idx_->mutable_stats();
  st.pending_at_end = 0;
  for (const auto& [tid, th] : thread_state_) st.pending_at_end += th.call.waiting();
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
