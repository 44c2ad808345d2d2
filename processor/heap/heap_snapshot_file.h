// The heap snapshot file: HeapSnapshots (heap_snapshot.h) stored beside a
// trace (TRACE.heap, as TRACE.rss holds residency snapshots), appended one
// record at a time while recording, read back bounds-checked. Format
// (little-endian, varints are unsigned LEB128; docs/heap.md):
//
//   header (32 bytes): "PBHEAP01", u32 version (1), s32 clockid of the
//     times (CLOCK_MONOTONIC: 1), u64 reserved (0), u64 reserved (0)
//   then records, each:
//     u32 "HEAP", u32 pid, u64 record bytes (this 16-byte header included),
//     then the body:
//       u8 flags (1: time, 2: threads, 4: cpus known), then those varints
//       u8 allocator, u8 layout source, varint attempts
//       strings (varint length <= 4096, bytes): glibc version, layout
//         from, note
//       varints: mmapped chunks, mmapped bytes, arena_max, arena_test
//       varint arenas (<= 65536), each:
//         varint address, u8 flags (1: main, 2: torn, 4: resident known),
//         varints system, in use, free, tcache, fastbin, top, free chunks,
//         releasable, [free resident, releasable resident],
//         binned, fastbin and tcache chunks, chunks walked, heaps,
//         attached threads,
//         string damage
//       varint free ranges, each: varint (start - previous end) / 16,
//         varint length / 16 (> 0), varint arena index, u8 kind (0 bin,
//         1 fastbin, 2 tcache, 3 top)
//
// Chunk boundaries are 16-aligned, so ranges are stored in 16-byte units:
// a heap's free ranges cost a few bytes each. A record is written with one
// write(), so a recorder stopped mid-record leaves a short last record,
// which reading reports ("truncated").
//
//   std::string bytes = EncodeHeapFileHeader(CLOCK_MONOTONIC) + EncodeHeapSnapshot(s);
//   ASSIGN_OR_RETURN(HeapSnapshotFile f, ReadHeapSnapshotFile("trace.data.heap"));
#ifndef PAGEBLAME_HEAP_HEAP_SNAPSHOT_FILE_H_
#define PAGEBLAME_HEAP_HEAP_SNAPSHOT_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "processor/heap/heap_snapshot.h"

namespace pageblame::heap {

inline constexpr char kHeapFileMagic[8] = {'P', 'B', 'H', 'E', 'A', 'P', '0', '1'};
inline constexpr uint32_t kHeapFileVersion = 1;
inline constexpr uint32_t kHeapRecordMagic = 0x50414548;  // "HEAP"
inline constexpr size_t kHeapFileHeaderSize = 32;
inline constexpr size_t kHeapRecordHeaderSize = 16;
inline constexpr size_t kMaxHeapString = 4096;
inline constexpr uint64_t kMaxHeapArenas = 65536;

// TRACE.heap.
std::string HeapSnapshotPathFor(absl::string_view trace_path);

struct HeapSnapshotFile {
  int32_t clockid = 0;
  std::vector<HeapSnapshot> snapshots;  // in file order
};

std::string EncodeHeapFileHeader(int32_t clockid);
// One record. Strings longer than kMaxHeapString are cut; free ranges must be
// sorted, disjoint and 16-aligned (as the walker makes them).
std::string EncodeHeapSnapshot(const HeapSnapshot& s);

// Errors name the file, the byte offset and what was expected.
absl::StatusOr<HeapSnapshotFile> ParseHeapSnapshotFile(absl::Span<const uint8_t> bytes, absl::string_view name);
absl::StatusOr<HeapSnapshotFile> ReadHeapSnapshotFile(const std::string& path);

}  // namespace pageblame::heap

#endif  // PAGEBLAME_HEAP_HEAP_SNAPSHOT_FILE_H_
