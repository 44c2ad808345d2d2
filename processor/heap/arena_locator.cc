#include "processor/heap/arena_locator.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "processor/heap/arena_walk.h"
#include "processor/heap/arena_walker.h"

namespace pageblame::heap {
namespace {

uint64_t WordAt(const std::string& b, uint64_t off) {
  uint64_t v = 0;
  if (off + 8 <= b.size()) std::memcpy(&v, b.data() + off, 8);
  return v;
}

bool Writable(const TargetMemory& m, uint64_t addr) {
  const TargetMapping* t = m.MappingAt(addr);
  return t != nullptr && t->write;
}

// How many of the arena candidate's bins point at themselves; -1 if a bin
// pointer is null or unaligned (no arena has that).
int SelfBins(const std::string& b, uint64_t at, uint64_t addr, const GlibcLayout& l) {
  int self = 0;
  for (uint32_t i = 1; i < l.nbins; ++i) {
    const uint64_t off = at + l.state_bins + uint64_t{i - 1} * 16;
    const uint64_t fd = WordAt(b, off), bk = WordAt(b, off + 8);
    const uint64_t bin = addr + l.state_bins + uint64_t{i - 1} * 16 - kChunkHeader;
    if (fd == 0 || bk == 0 || fd % 16 != 0 || bk % 16 != 0) return -1;
    self += fd == bin && bk == bin;
  }
  return self;
}

// The arena list from `addr` comes back to it within a bound.
bool ListReturns(TargetMemory* m, const GlibcLayout& l, uint64_t addr, uint64_t next) {
  for (int n = 0; n < 4096; ++n) {
    if (next == addr) return true;
    if (next == 0 || next % 8 != 0 || !m->ReadWord(next + l.state_next, &next)) return false;
  }
  return false;
}

// `top`: main_arena's top chunk, 0 when it has none yet.
bool LooksLikePar(const TargetMemory& m, const std::string& b, uint64_t at, const GlibcLayout& l, uint64_t top) {
  const uint64_t bins = WordAt(b, at + l.par_tcache_bins), max = WordAt(b, at + l.par_tcache_max_bytes);
  const uint64_t count = WordAt(b, at + l.par_tcache_count);
  if (bins == 0 || bins > 64 || max > 1032 || count > 65535) return false;
  // tcache_bins = csize2tidx (request2size (tcache_max_bytes)) + 1.
  const uint64_t csize = max + 8 + 15 < 32 ? 32 : (max + 8 + 15) & ~uint64_t{15};
  if ((csize - 17) / 16 + 1 != bins) return false;
  // int n_mmaps, n_mmaps_max, max_n_mmaps; size_t mmapped_mem, max_mmapped_mem.
  int32_t n_mmaps = 0, max_n_mmaps = 0;
  std::memcpy(&n_mmaps, b.data() + at + l.par_n_mmaps, 4);
  std::memcpy(&max_n_mmaps, b.data() + at + l.par_n_mmaps + 8, 4);
  const uint64_t mmapped = WordAt(b, at + l.par_mmapped_mem), max_mmapped = WordAt(b, at + l.par_mmapped_mem + 8);
  if (n_mmaps < 0 || n_mmaps > max_n_mmaps || mmapped % 4096 != 0 || mmapped > max_mmapped) return false;
  if ((n_mmaps == 0) != (mmapped == 0)) return false;
  if (WordAt(b, at + l.par_mmap_threshold) > (uint64_t{32} << 20)) return false;  // HEAP_MAX_SIZE / 2
  // The brk heap main_arena's top lies in starts at sbrk_base.
  const uint64_t sbrk = WordAt(b, at + l.par_sbrk_base);
  if (top != 0) return sbrk != 0 && sbrk <= top && top - sbrk < (uint64_t{1} << 46) && Writable(m, sbrk);
  return sbrk == 0 || Writable(m, sbrk);
}

}  // namespace

std::vector<ArenaLocator::Data> ArenaLocator::ReadData(TargetMemory* memory, const std::string& libc_path) {
  std::vector<Data> out;
  const std::vector<TargetMapping>& maps = memory->mappings();
  for (size_t i = 0; i < maps.size(); ++i) {
    if (maps[i].path != libc_path || !maps[i].write) continue;
    uint64_t end = maps[i].end;
    if (i + 1 < maps.size() && maps[i + 1].start == end && maps[i + 1].path.empty() && maps[i + 1].write)
      end = maps[i + 1].end;  // .bss past the file's bytes
    if (end - maps[i].start > (uint64_t{16} << 20)) continue;
    Data d{maps[i].start, std::string(end - maps[i].start, '\0')};
    if (memory->Read(d.start, d.bytes.data(), d.bytes.size())) out.push_back(std::move(d));
  }
  return out;
}

absl::StatusOr<uint64_t> ArenaLocator::FindMainArena(TargetMemory* memory, const GlibcLayout& l,
                                                     const std::string& libc_path) {
  std::vector<uint64_t> found;
  for (const Data& d : ReadData(memory, libc_path)) {
    for (uint64_t at = 0; at + l.state_size <= d.bytes.size(); at += 8) {
      const uint64_t addr = d.start + at;
      const int self = SelfBins(d.bytes, at, addr, l);
      if (self < 8) continue;
      const uint64_t top = WordAt(d.bytes, at + l.state_top);
      if (top != addr + l.state_bins - kChunkHeader && !Writable(*memory, top)) continue;
      if (!ListReturns(memory, l, addr, WordAt(d.bytes, at + l.state_next))) continue;
      found.push_back(addr);
    }
  }
  if (found.size() == 1) return found[0];
  return absl::NotFoundError(absl::StrCat("cannot find main_arena in ", libc_path, "'s data without its symbols (",
                                          found.size(), " candidates)"));
}

absl::StatusOr<uint64_t> ArenaLocator::FindMallocPar(TargetMemory* memory, const GlibcLayout& l,
                                                     const std::string& libc_path, uint64_t main_arena) {
  // main_arena's top, unless it is still initial_top or not in the brk area.
  uint64_t top = 0, flags = 0;
  memory->ReadWord(main_arena + l.state_top, &top);
  memory->ReadWord(main_arena + l.state_flags, &flags);
  if (top == main_arena + l.state_bins - kChunkHeader || (flags & 2) != 0) top = 0;
  std::vector<uint64_t> found;
  for (const Data& d : ReadData(memory, libc_path)) {
    for (uint64_t at = 0; at + l.par_size <= d.bytes.size(); at += 8) {
      if (LooksLikePar(*memory, d.bytes, at, l, top)) found.push_back(d.start + at);
    }
  }
  if (found.size() == 1) return found[0];
  return absl::NotFoundError(absl::StrCat("cannot find mp_ in ", libc_path, "'s data without its symbols (",
                                          found.size(), " candidates)"));
}

bool ArenaLocator::DataHolds(TargetMemory* memory, const std::string& libc_path, uint64_t value) {
  // A pointer into a mapping is not a random key.
  if (value == 0 || memory->MappingAt(value) != nullptr) return false;
  for (const Data& d : ReadData(memory, libc_path)) {
    for (uint64_t at = 0; at + 8 <= d.bytes.size(); at += 8) {
      if (WordAt(d.bytes, at) == value) return true;
    }
  }
  return false;
}

}  // namespace pageblame::heap
