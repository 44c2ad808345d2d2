// What the loader does with a trace's records other than samples: it parses
// each once (load_pass.h) and hands it to every sink, in file order, on its
// reading thread. A sink takes what it needs (the replay's events, the
// mapping history) and ignores the rest.
//
//   MappingHistorySink history(&maps);
//   ReplayFeed feed(&index, &worker);
//   RecordSink* sinks[] = {&feed, &history};
//   for (RecordSink* s : sinks) s->OnMmap(record, at);
//
// Kernel mappings (kernel text, modules) reach no sink: nothing here reads
// kernel frames.
#ifndef PAGEBLAME_REPLAY_RECORD_SINK_H_
#define PAGEBLAME_REPLAY_RECORD_SINK_H_

#include <cstdint>

#include "processor/perf/perf_records.h"

namespace pageblame::replay {

// When and where a record happened: its time (0 if the trace has none) and
// CPU (TraceEvent::kNoCpu if it does not say).
struct RecordAt {
  uint64_t time = 0;
  uint32_t cpu = 0;
};

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void OnComm(const perf::CommRecord& c, RecordAt at) = 0;
  // FORK (`fork`) or EXIT.
  virtual void OnTask(const perf::TaskRecord& t, bool fork, RecordAt at) = 0;
  virtual void OnMmap(const perf::MmapRecord& m, RecordAt at) = 0;
  virtual void OnLost(const perf::LostRecord& l, RecordAt at) = 0;
};

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_RECORD_SINK_H_
