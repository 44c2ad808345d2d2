// libFuzzer target: the heap snapshot file (processor/heap/heap_snapshot_file.h)
// from arbitrary bytes. A file that parses must encode back to a file that
// parses to the same snapshots (what is read is what was meant).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "processor/heap/heap_snapshot_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pageblame::heap;
  absl::StatusOr<HeapSnapshotFile> f = ParseHeapSnapshotFile(absl::Span<const uint8_t>(data, size), "fuzz.heap");
  if (!f.ok()) return 0;
  std::string again = EncodeHeapFileHeader(f->clockid);
  for (const HeapSnapshot& s : f->snapshots) again += EncodeHeapSnapshot(s);
  absl::StatusOr<HeapSnapshotFile> g = ParseHeapSnapshotFile(
      absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(again.data()), again.size()), "again.heap");
  if (!g.ok() || g->snapshots.size() != f->snapshots.size()) {
    std::fprintf(stderr, "heap_snapshot_file: a parsed file does not parse again\n");
    std::abort();
  }
  for (size_t i = 0; i < f->snapshots.size(); ++i) {
    if (!(g->snapshots[i] == f->snapshots[i])) {
      std::fprintf(stderr, "heap_snapshot_file: snapshot %zu differs after a round trip\n", i);
      std::abort();
    }
  }
  return 0;
}
