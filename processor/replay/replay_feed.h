// The sink that turns COMM, FORK/EXIT, MMAP/MMAP2 and LOST records into the
// replay thread's TraceEvents (replay_worker.h), their strings interned in
// the index. Samples of memory syscalls reach the worker from the loader
// itself (load_pass.cc): they carry stacks and join their exits.
#ifndef PAGEBLAME_REPLAY_REPLAY_FEED_H_
#define PAGEBLAME_REPLAY_REPLAY_FEED_H_

#include "processor/index/trace_index.h"
#include "processor/replay/record_sink.h"
#include "processor/replay/replay_worker.h"

namespace pageblame::replay {

class ReplayFeed : public RecordSink {
 public:
  ReplayFeed(index::TraceIndex* idx, ReplayWorker* worker) : idx_(idx), worker_(worker) {}

  void OnComm(const perf::CommRecord& c, RecordAt at) override;
  void OnTask(const perf::TaskRecord& t, bool fork, RecordAt at) override;
  void OnMmap(const perf::MmapRecord& m, RecordAt at) override;
  void OnLost(const perf::LostRecord& l, RecordAt at) override;

 private:
  index::TraceIndex* idx_;
  ReplayWorker* worker_;
};

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_REPLAY_FEED_H_
