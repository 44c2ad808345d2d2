#include "processor/replay/replay_feed.h"

namespace pageblame::replay {
namespace {

// An event of `kind` with the record's time, CPU and task.
TraceEvent EventOf(TraceEvent::Kind kind, RecordAt at, uint32_t pid, uint32_t tid) {
  TraceEvent e(kind);
  e.time = at.time;
  e.cpu = at.cpu;
  e.pid = pid;
  e.tid = tid;
  return e;
}

}  // namespace

void ReplayFeed::OnComm(const perf::CommRecord& c, RecordAt at) {
  TraceEvent e = EventOf(TraceEvent::Kind::kComm, at, c.pid, c.tid);
  e.flag = c.exec;
  e.comm().comm = idx_->strings().Intern(c.comm);
  worker_->Push(e);
}

void ReplayFeed::OnTask(const perf::TaskRecord& t, bool fork, RecordAt at) {
  TraceEvent e =
      EventOf(fork ? TraceEvent::Kind::kFork : TraceEvent::Kind::kTaskExit, at, t.pid, t.tid);
  e.task().ppid = t.ppid;
  e.task().ptid = t.ptid;
  worker_->Push(e);
}

void ReplayFeed::OnMmap(const perf::MmapRecord& m, RecordAt at) {
  TraceEvent e = EventOf(TraceEvent::Kind::kMmap, at, m.pid, m.tid);
  TraceEvent::Mmap& em = e.mmap();
  em.start = m.start;
  em.len = m.len;
  em.pgoff = m.pgoff;
  em.prot = m.prot;
  em.flags = m.flags;
  em.has_prot = m.has_prot;
  em.filename = idx_->strings().Intern(m.filename);
  if (!m.build_id.empty()) em.build_id = idx_->strings().Intern(m.build_id);
  worker_->Push(e);
}

void ReplayFeed::OnLost(const perf::LostRecord& l, RecordAt at) {
  TraceEvent e = EventOf(TraceEvent::Kind::kLost, at, 0, 0);
  e.lost().count = l.lost;
  e.flag = l.samples;
  worker_->Push(e);
}

}  // namespace pageblame::replay
