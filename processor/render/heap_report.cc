#include "processor/render/heap_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "processor/base/format.h"
#include "processor/render/rss_text.h"
#include "processor/render/text_table.h"

namespace pageblame::render {
namespace {

using Json = nlohmann::ordered_json;

Json Optional(const std::optional<uint64_t>& v) { return v ? Json(*v) : Json(nullptr); }

void PutFigures(const heap::HeapFigures& f, Json* j) {
  (*j)["system_bytes"] = f.system_bytes;
  (*j)["in_use_bytes"] = f.in_use_bytes;
  (*j)["free_bytes"] = f.free_bytes;
  (*j)["tcache_bytes"] = f.tcache_bytes;
  (*j)["fastbin_bytes"] = f.fastbin_bytes;
  (*j)["top_bytes"] = f.top_bytes;
  (*j)["free_chunks"] = f.free_chunks;
  (*j)["free_resident_bytes"] = Optional(f.free_resident_bytes);
  (*j)["releasable_bytes"] = f.releasable_bytes;
  (*j)["releasable_resident_bytes"] = Optional(f.releasable_resident_bytes);
}

// " (12.0 MiB resident)" or "" when unknown.
std::string Resident(const std::optional<uint64_t>& v) {
  return v ? absl::StrCat(" (", HumanBytes(*v), " resident)") : "";
}

std::string Headline(const heap::HeapSnapshot& s) {
  const heap::HeapFigures t = s.Totals();
  return absl::StrCat(HumanBytes(t.system_bytes), " in ", s.arenas.size(), s.arenas.size() == 1 ? " arena" : " arenas",
                      ": ", HumanBytes(t.in_use_bytes), " in use, ", HumanBytes(t.free_bytes), " free held by glibc",
                      Resident(t.free_resident_bytes), "; malloc_trim(0) would return ", HumanBytes(t.releasable_bytes),
                      Resident(t.releasable_resident_bytes), "\n");
}

std::string ArenaTable(const heap::HeapSnapshot& s) {
  using Row = std::pair<std::string, heap::HeapFigures>;
  std::vector<Row> rows;
  for (const heap::ArenaStats& a : s.arenas)
    rows.push_back({absl::StrCat(absl::StrFormat("0x%x", a.address), a.main ? " main" : "",
                                 a.damage.empty() ? "" : " (damaged)", a.torn ? " (torn)" : ""),
                    a.figures});
  const Row total = {"total", s.Totals()};
  auto bytes = [](uint64_t heap::HeapFigures::*f) {
    return [f](const Row& r) { return HumanBytes(r.second.*f); };
  };
  std::vector<TableColumn<Row>> cols = {
      {"arena", Align::kLeft, [](const Row& r) { return r.first; }},
      {"system", Align::kRight, bytes(&heap::HeapFigures::system_bytes)},
      {"in use", Align::kRight, bytes(&heap::HeapFigures::in_use_bytes)},
      {"free", Align::kRight, bytes(&heap::HeapFigures::free_bytes)},
      {"free resident", Align::kRight, [](const Row& r) { return HumanRss(r.second.free_resident_bytes); }},
      {"tcache", Align::kRight, bytes(&heap::HeapFigures::tcache_bytes)},
      {"fastbins", Align::kRight, bytes(&heap::HeapFigures::fastbin_bytes)},
      {"top", Align::kRight, bytes(&heap::HeapFigures::top_bytes)},
      {"trim returns", Align::kRight, bytes(&heap::HeapFigures::releasable_bytes)},
      {"of it resident", Align::kRight, [](const Row& r) { return HumanRss(r.second.releasable_resident_bytes); }}};
  return RenderTable(cols, rows, &total, 160);
}

std::string Arenas(const heap::HeapSnapshot& s) {
  std::string out = absl::StrCat(s.threads ? absl::StrCat(*s.threads, " threads, ") : "", s.arenas.size(),
                                 s.arenas.size() == 1 ? " arena" : " arenas");
  if (s.arena_max != 0) {
    absl::StrAppend(&out, "; glibc's limit: ", s.arena_max, " (arena_max, set by M_ARENA_MAX or MALLOC_ARENA_MAX)");
  } else if (s.cpus) {
    absl::StrAppend(&out, "; glibc's limit: ", *s.ArenaLimit(), " (8 per core, ", *s.cpus, " cores)");
  } else {
    absl::StrAppend(&out, "; glibc's limit: 8 per core of the machine it ran on (arena_max not set)");
  }
  return out + "\n";
}

}  // namespace

std::string HeapText(const heap::HeapSnapshot& s, const std::string& target) {
  if (s.allocator != heap::Allocator::kGlibc) return absl::StrCat(target, ": ", s.note, "\n");
  std::string out = absl::StrCat(target, ": ", Headline(s));
  absl::StrAppend(&out, "  glibc ", s.glibc_version, ", layout from ", s.layout_from, "\n\n");
  absl::StrAppend(&out, ArenaTable(s), "\n");
  absl::StrAppend(&out, "mmapped chunks: ", s.mmapped_count, ", ", HumanBytes(s.mmapped_bytes),
                  " (outside the arenas; free() returns them at once)\n");
  absl::StrAppend(&out, Arenas(s));
  for (const heap::ArenaStats& a : s.arenas) {
    if (a.torn) {
      absl::StrAppendFormat(&out, "arena 0x%x changed during each of %d reads: its figures mix moments%s\n",
                            a.address, s.attempts,
                            a.damage.empty() ? "" : absl::StrCat(" (the last read saw: ", a.damage, ")"));
    } else if (!a.damage.empty()) {
      absl::StrAppendFormat(&out, "arena 0x%x is damaged: %s\n", a.address, a.damage);
    }
  }
  if (!s.note.empty()) absl::StrAppend(&out, s.note, "\n");
  if (!s.time) absl::StrAppend(&out, "(a core: which free pages were resident is not known)\n");
  return out;
}

Json HeapJson(const heap::HeapSnapshot& s) {
  Json j;
  j["pid"] = s.pid;
  j["allocator"] = heap::AllocatorName(s.allocator);
  j["snapshot_time"] = s.time ? Json(TimeSeconds(*s.time)) : Json(nullptr);
  j["arenas"] = Json::array();
  for (const heap::ArenaStats& a : s.arenas) {
    Json r;
    r["address"] = absl::StrFormat("0x%x", a.address);
    r["kind"] = a.main ? "main" : "thread";
    PutFigures(a.figures, &r);
    r["binned_chunks"] = a.binned_chunks;
    r["fastbin_chunks"] = a.fastbin_chunks;
    r["tcache_chunks"] = a.tcache_chunks;
    r["chunks"] = a.chunks;
    r["damage"] = a.damage.empty() ? Json(nullptr) : Json(a.damage);
    r["torn"] = a.torn;
    j["arenas"].push_back(r);
  }
  j["mmapped_chunks"] = {{"count", s.mmapped_count}, {"bytes", s.mmapped_bytes}};
  Json total;
  PutFigures(s.Totals(), &total);
  j["total"] = total;
  j["glibc"] = s.allocator == heap::Allocator::kGlibc
                   ? Json{{"version", s.glibc_version}, {"layout", heap::LayoutSourceName(s.layout)},
                          {"layout_from", s.layout_from}}
                   : Json(nullptr);
  j["threads"] = Optional(s.threads);
  j["arena_limit"] = Optional(s.ArenaLimit());
  j["attempts"] = s.attempts;
  j["note"] = s.note.empty() ? Json(nullptr) : Json(s.note);
  return j;
}

}  // namespace pageblame::render
