// Malloc arena bytes in use and free (analysis/heap_split.h) as attribute and
// growth print them: the "in use" column of the first screen, the mark on
// arena rows and its footnote, the JSON keys.
//
//   row.kind = ArenaKindText(st.kind());        // "malloc*"
//   row.in_use = InUseText(st.heap, st.kind());  // "1.2 MiB", "freed; held by glibc", "?" or ""
//   HeapUseJson(st.heap, st.kind(), &j);         // "in_use_bytes", "free_bytes"
//   HeapUseJson(st.heap, st.kind(), &j, true);   // and "held_by_glibc" (the report's)
#ifndef PAGEBLAME_RENDER_HEAP_USE_TEXT_H_
#define PAGEBLAME_RENDER_HEAP_USE_TEXT_H_

#include <optional>
#include <string>

#include "nlohmann/json.hpp"
#include "processor/analysis/heap_split.h"
#include "processor/analysis/region_kind.h"

namespace pageblame::render {

// The kind's name, with "*" on malloc arena kinds (malloc, heap); "-" for none.
std::string ArenaKindText(std::optional<analysis::RegionKind> k);
// The footnote that "*" refers to: a blank line, then two lines of at
// most 120 characters.
extern const char kArenaFootnote[];
// "" for a kind outside the arenas; "?" without a heap snapshot; "freed;
// held by glibc" when less than a tenth of its arena bytes is in use (the
// retention of memory freed, not a leak); else the in-use bytes.
std::string InUseText(const std::optional<analysis::HeapUse>& u, std::optional<analysis::RegionKind> k);
// InUseText's rule alone: a split whose bytes are less than a tenth in use
// (the HTML report draws the label from it: one rule for every answer).
bool HeldByGlibc(const analysis::HeapUse& u);
// On an object of an arena kind: "in_use_bytes" and "free_bytes" (null
// without a heap snapshot), with `label` also "held_by_glibc" (HeldByGlibc;
// null without a snapshot); nothing for other kinds.
void HeapUseJson(const std::optional<analysis::HeapUse>& u, std::optional<analysis::RegionKind> k,
                 nlohmann::ordered_json* j, bool label = false);

}  // namespace pageblame::render

#endif  // PAGEBLAME_RENDER_HEAP_USE_TEXT_H_
