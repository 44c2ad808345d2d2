#include "processor/replay/mapping_history_sink.h"

#include <sys/mman.h>

namespace pageblame::replay {

void MappingHistorySink::OnComm(const perf::CommRecord& c, RecordAt at) {
  if (c.exec) maps_->OnExec(c.pid, at.time);
}

void MappingHistorySink::OnTask(const perf::TaskRecord& t, bool fork, RecordAt at) {
  if (fork) maps_->OnFork(t.pid, t.ppid, at.time);  // a new thread changes nothing
}

void MappingHistorySink::OnMmap(const perf::MmapRecord& m, RecordAt at) {
  // Only code holds pcs. (An MMAP v1 record's prot is perf's reading of it:
  // PROT_EXEC unless it is a data mapping; PerfReader::ParseMmap.)
  if (m.prot & PROT_EXEC) maps_->AddMapping(m.pid, at.time, m.start, m.len, m.pgoff, m.filename, m.build_id);
}

}  // namespace pageblame::replay
