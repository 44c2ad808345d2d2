// SosEeheapParser: the text of SOS `eeheap` (`dotnet-dump analyze CORE -c
// eeheap`, lldb's sos), read as the .NET runtime's own table: what the
// runtime says it allocated, for `diff` and `attribute --regions` where
// SOS `maddress` cannot run (it needs WinDbg).
//
//   LowFrequencyHeap:     7fe77f580000(10000:6000) 7fe77e060000(3000:3000) Size: 0x9000 (36864) bytes total.
//   LoaderCodeHeap:       7fe77f0a0000(80000:d000) Size: 0xd000 (53248) bytes total.
//   Small object heap
//            segment            begin        allocated        committed allocated size       committed size
//   generation 0:
//       7fdb8b254280     7fdbab000028     7fdbab0c8470     7fdbab0d1000 0xc8448 (820296)     0xd1000 (856064)
//
// What the lines mean, from dotnet/diagnostics EEHeapCommand.cs:
//   - A loader or code heap line, "KIND: BLOCK... Size: 0x.. (..) bytes total":
//     each BLOCK is ADDR(RESERVED:COMMITTED), hex, COMMITTED being the
//     readable pages from ADDR on. It gives [ADDR, ADDR+COMMITTED)
//     MEM_COMMIT and [ADDR+COMMITTED, ADDR+RESERVED) MEM_RESERVE, usage KIND.
//     A bare ADDR (a block of size 0) gives nothing. Size must equal the sum
//     of the COMMITTED values, and a "Total size: Size: ..." line the sum of
//     its section's heaps (an error otherwise: the columns would not mean
//     what we think).
//   - A GC segment row, "SEGMENT BEGIN ALLOCATED COMMITTED [ALLOC_SIZE]
//     [COMMIT_SIZE]" (sizes "0x.. (..)"; an empty one is omitted, so with one
//     size it is COMMIT_SIZE when ALLOCATED == BEGIN): COMMITTED is the end of
//     the segment's committed memory and COMMIT_SIZE its length (ClrMD's
//     CommittedMemory), giving [COMMITTED - COMMIT_SIZE, COMMITTED)
//     MEM_COMMIT, usage "GCHeap" and the heap ("GCHeap gen0", "GCHeap LOH",
//     "GCHeap POH", "GCHeap NonGC", "... heap N" with server GC). The reserved
//     rest of a segment is not printed. "GC Committed Heap Size: Size: 0x.."
//     must equal the sum of COMMIT_SIZE.
//   - Structure (dividers, "System Domain: ADDR", "generation 0:", the
//     segment header, totals, "No unique loader heaps found.") is passed
//     over; lines before the first "Loader Heap:" / "Number of GC Heaps:"
//     (the debugger's "Loading core dump: ..." line, prompts) and unknown
//     lines are counted as skipped.
// Not in eeheap: thread stacks, the handle table, the GC's bookkeeping and
// the reserved rest of GC regions; images.
#ifndef PAGEBLAME_REGIONS_SOS_EEHEAP_PARSER_H_
#define PAGEBLAME_REGIONS_SOS_EEHEAP_PARSER_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "processor/regions/region.h"
#include "processor/regions/text_lines.h"

namespace pageblame::regions {

class SosEeheapParser {
 public:
  static constexpr absl::string_view kFormat = "sos-eeheap";

  // "Loader Heap:", "Number of GC Heaps: N", or a heap line with a block
  // "ADDR(RESERVED:COMMITTED)" and "Size:": the detection signature.
  static bool IsSignature(absl::string_view line);

  static absl::StatusOr<RegionTable> Parse(const TextLines& text);
};

}  // namespace pageblame::regions

#endif  // PAGEBLAME_REGIONS_SOS_EEHEAP_PARSER_H_
