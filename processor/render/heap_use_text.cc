#include "processor/render/heap_use_text.h"

#include "processor/base/format.h"

namespace pageblame::render {

const char kArenaFootnote[] =
    "\n  * malloc arena pages (malloc*, heap*): credited to the call that made them usable; later mallocs reuse\n"
    "    their chunks without a syscall, so \"in use\" is what any caller's live chunks hold on them (docs/heap.md)\n";

std::string ArenaKindText(std::optional<analysis::RegionKind> k) {
  if (!k) return "-";
  std::string name(analysis::KindName(*k));
  return analysis::ArenaKind(k) ? name + "*" : name;
}

bool HeldByGlibc(const analysis::HeapUse& u) {
  const uint64_t split = u.in_use + u.free;
  return split > 0 && u.in_use * 10 < split;
}

std::string InUseText(const std::optional<analysis::HeapUse>& u, std::optional<analysis::RegionKind> k) {
  if (!analysis::ArenaKind(k)) return "";
  if (!u) return "?";
  if (HeldByGlibc(*u)) return "freed; held by glibc";
  return HumanBytes(u->in_use);
}

void HeapUseJson(const std::optional<analysis::HeapUse>& u, std::optional<analysis::RegionKind> k,
                 nlohmann::ordered_json* j, bool label) {
  if (!analysis::ArenaKind(k)) return;
  (*j)["in_use_bytes"] = u ? nlohmann::ordered_json(u->in_use) : nlohmann::ordered_json(nullptr);
  (*j)["free_bytes"] = u ? nlohmann::ordered_json(u->free) : nlohmann::ordered_json(nullptr);
  if (label) (*j)["held_by_glibc"] = u ? nlohmann::ordered_json(HeldByGlibc(*u)) : nlohmann::ordered_json(nullptr);
}

}  // namespace pageblame::render
