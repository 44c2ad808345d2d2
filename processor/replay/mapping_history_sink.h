// The sink that fills the trace's one mapping history
// (symbols/mapping_history.h) from the MMAP/MMAP2 records of executable
// mappings, FORK and COMM exec records, in file order; the history puts
// them in time order itself.
#ifndef PAGEBLAME_REPLAY_MAPPING_HISTORY_SINK_H_
#define PAGEBLAME_REPLAY_MAPPING_HISTORY_SINK_H_

#include "processor/replay/record_sink.h"
#include "processor/symbols/mapping_history.h"

namespace pageblame::replay {

class MappingHistorySink : public RecordSink {
 public:
  explicit MappingHistorySink(symbols::MappingHistory* maps) : maps_(maps) {}

  void OnComm(const perf::CommRecord& c, RecordAt at) override;
  void OnTask(const perf::TaskRecord& t, bool fork, RecordAt at) override;
  void OnMmap(const perf::MmapRecord& m, RecordAt at) override;
  void OnLost(const perf::LostRecord&, RecordAt) override {}

 private:
  symbols::MappingHistory* maps_;
};

}  // namespace pageblame::replay

#endif  // PAGEBLAME_REPLAY_MAPPING_HISTORY_SINK_H_
