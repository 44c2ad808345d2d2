// The residency snapshot file `pageblame record` writes beside a trace
// (TRACE.rss, found by the trace's name) and every command reads. Format
// (little-endian; docs/residency.md):
//
//   header (32 bytes): "PBRESID1", u32 version (1), s32 clockid of the
//     times (CLOCK_MONOTONIC: 1), u64 page size, u64 reserved (0)
//   then snapshot records, appended while recording, each:
//     u32 "SNAP", u32 pid, u64 record bytes (this header included),
//     u64 time, u64 end time (ns, the clock above), u32 reason, u32 flags
//     (bit 0: rollup known), u64 smaps_rollup Rss, u64 Swap (bytes),
//     u32 number of ranges, u32 reserved (0), then per range:
//       varint pages from the previous range's end (the first: from 0),
//       varint length in pages, varint number of runs, then runs:
//         varint (pages << 2 | state), state 0 absent, 1 present, 2 swapped,
//       whose pages sum to the range's length.
//
// Run-length coded, so a fully resident mapping costs a few bytes whatever
// its size. A record is written with one write(), so a recorder killed
// mid-snapshot leaves a short last record, which reading reports.
//
//   std::string bytes = EncodeHeader(1) + EncodeSnapshot(snapshot);
//   ASSIGN_OR_RETURN(SnapshotFile f, ReadSnapshotFile("trace.data.rss"));
#ifndef PAGEBLAME_RESIDENCY_SNAPSHOT_FILE_H_
#define PAGEBLAME_RESIDENCY_SNAPSHOT_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "processor/residency/residency_snapshot.h"

namespace pageblame::residency {

inline constexpr char kSnapshotMagic[8] = {'P', 'B', 'R', 'E', 'S', 'I', 'D', '1'};
inline constexpr uint32_t kSnapshotVersion = 1;
inline constexpr uint32_t kRecordMagic = 0x50414e53;  // "SNAP"
inline constexpr size_t kFileHeaderSize = 32;
inline constexpr size_t kRecordHeaderSize = 64;

// The snapshot file of a trace: TRACE.rss.
std::string SnapshotPathFor(absl::string_view trace_path);

struct SnapshotFile {
  int32_t clockid = 0;
  uint64_t page_size = 0;
  // In file order (the recorder appends in time order per process).
  std::vector<ResidencySnapshot> snapshots;
};

std::string EncodeHeader(int32_t clockid, uint64_t page_size = 4096);
// One record. The snapshot's ranges must be page-aligned, sorted, disjoint,
// with present and swapped inside read.
std::string EncodeSnapshot(const ResidencySnapshot& s, uint64_t page_size = 4096);

// Parses a whole file. Errors name the file, the byte offset and what was
// expected (a short last record: "truncated").
// What messages call the file ("PATH: not a residency snapshot file").
inline constexpr char kSnapshotFileWhat[] = "residency snapshot file";

absl::StatusOr<SnapshotFile> ParseSnapshotFile(absl::Span<const uint8_t> bytes, absl::string_view name);
absl::StatusOr<SnapshotFile> ReadSnapshotFile(const std::string& path);

}  // namespace pageblame::residency

#endif  // PAGEBLAME_RESIDENCY_SNAPSHOT_FILE_H_
