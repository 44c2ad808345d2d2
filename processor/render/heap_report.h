// `pageblame heap`: a HeapSnapshot (heap/heap_snapshot.h) as text and as
// JSON. Nothing is computed here but sums and formatting.
//
//   std::string t = HeapText(snapshot, "pid 1234");
//   Json j = HeapJson(snapshot);   // the contract of docs/heap.md
//
// Text: the first line answers "leak or glibc?" — "1.2 GiB in 47 arenas:
// 140 MiB in use, 1.0 GiB free held by glibc (910 MiB resident);
// malloc_trim(0) would return 880 MiB (850 MiB resident)" — then one row
// per arena, the mmapped chunks, threads and arenas against glibc's arena
// limit, and each damaged or torn arena with what was wrong.
// JSON: {"pid", "allocator", "snapshot_time", "arenas": [{"address", "kind",
// "system_bytes", "in_use_bytes", "free_bytes", "tcache_bytes",
// "fastbin_bytes", "top_bytes", "free_chunks", "free_resident_bytes",
// "releasable_bytes", "releasable_resident_bytes", "binned_chunks",
// "fastbin_chunks", "tcache_chunks", "chunks", "damage", "torn"}], "mmapped_chunks":
// {"count", "bytes"}, "total": {the byte and chunk fields}, "glibc":
// {"version", "layout", "layout_from"}, "threads", "arena_limit",
// "attempts", "note"}; unknown values are null.
#ifndef PAGEBLAME_RENDER_HEAP_REPORT_H_
#define PAGEBLAME_RENDER_HEAP_REPORT_H_

#include <string>

#include "nlohmann/json.hpp"
#include "processor/heap/heap_snapshot.h"

namespace pageblame::render {

std::string HeapText(const heap::HeapSnapshot& s, const std::string& target);
nlohmann::ordered_json HeapJson(const heap::HeapSnapshot& s);

}  // namespace pageblame::render

#endif  // PAGEBLAME_RENDER_HEAP_REPORT_H_
