#include "processor/heap/heap_snapshot.h"

#include <tuple>

namespace pageblame::heap {
namespace {

// Unknown stays unknown: a sum with an unknown part is unknown.
void AddOptional(std::optional<uint64_t>* to, const std::optional<uint64_t>& v) {
  if (to->has_value() && v.has_value()) *to = **to + *v;
  else to->reset();
}

}  // namespace

const char* AllocatorName(Allocator a) {
  switch (a) {
    case Allocator::kGlibc: return "glibc";
    case Allocator::kJemalloc: return "jemalloc";
    case Allocator::kTcmalloc: return "tcmalloc";
    case Allocator::kMimalloc: return "mimalloc";
    case Allocator::kMusl: return "musl";
    case Allocator::kUnknown: return "unknown";
  }
  return "unknown";
}

const char* LayoutSourceName(LayoutSource s) {
  switch (s) {
    case LayoutSource::kNone: return "none";
    case LayoutSource::kDwarf: return "dwarf";
    case LayoutSource::kTable: return "table";
  }
  return "none";
}

void HeapFigures::Add(const HeapFigures& o) {
  system_bytes += o.system_bytes;
  in_use_bytes += o.in_use_bytes;
  free_bytes += o.free_bytes;
  tcache_bytes += o.tcache_bytes;
  fastbin_bytes += o.fastbin_bytes;
  top_bytes += o.top_bytes;
  free_chunks += o.free_chunks;
  releasable_bytes += o.releasable_bytes;
  AddOptional(&free_resident_bytes, o.free_resident_bytes);
  AddOptional(&releasable_resident_bytes, o.releasable_resident_bytes);
}

bool HeapFigures::operator==(const HeapFigures& o) const {
  auto tie = [](const HeapFigures& f) {
    return std::tie(f.system_bytes, f.in_use_bytes, f.free_bytes, f.tcache_bytes, f.fastbin_bytes, f.top_bytes,
                    f.free_chunks, f.releasable_bytes, f.free_resident_bytes, f.releasable_resident_bytes);
  };
  return tie(*this) == tie(o);
}

bool ArenaStats::operator==(const ArenaStats& o) const {
  auto tie = [](const ArenaStats& a) {
    return std::tie(a.address, a.main, a.figures, a.binned_chunks, a.fastbin_chunks, a.tcache_chunks, a.chunks, a.heaps,
                    a.attached_threads, a.damage, a.torn);
  };
  return tie(*this) == tie(o);
}

HeapFigures HeapSnapshot::Totals() const {
  HeapFigures t;
  // An empty sum of resident bytes is known (0) only if residency is known.
  if (!arenas.empty()) {
    t.free_resident_bytes = 0;
    t.releasable_resident_bytes = 0;
  }
  for (const ArenaStats& a : arenas) t.Add(a.figures);
  return t;
}

std::optional<uint64_t> HeapSnapshot::ArenaLimit() const {
  if (arena_max != 0) return arena_max;
  if (cpus) return *cpus * 8;
  return std::nullopt;
}

bool HeapSnapshot::operator==(const HeapSnapshot& o) const {
  auto tie = [](const HeapSnapshot& s) {
    return std::tie(s.pid, s.allocator, s.note, s.glibc_version, s.layout, s.layout_from, s.time, s.attempts,
                    s.arenas, s.mmapped_count, s.mmapped_bytes, s.arena_max, s.arena_test, s.threads, s.cpus,
                    s.free_ranges);
  };
  return tie(*this) == tie(o);
}

}  // namespace pageblame::heap
