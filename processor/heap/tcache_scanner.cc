#include "processor/heap/tcache_scanner.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "processor/base/format.h"
#include "processor/heap/arena_walker.h"

namespace pageblame::heap {

uint64_t TcacheScanner::StructChunkSize() const { return TcacheStructChunkSize(layout_); }

TcacheScanner::Located TcacheScanner::Find(std::vector<ArenaWalk>* walks, uint64_t chunk) {
  for (ArenaWalk& w : *walks) {
    if (!w.InHeaps(chunk, kMinSize)) continue;
    return {&w, w.ChunkAt(chunk)};
  }
  return {};
}

std::string TcacheScanner::CheckList(std::vector<ArenaWalk>* walks, uint64_t mem, uint32_t bin, uint64_t e,
                                     uint32_t count, std::vector<Located>* taken) {
  const uint64_t size = uint64_t{bin} * kAlign + kMinSize;  // tidx2usize + header, as csize2tidx inverts
  for (uint32_t n = 0; n <= count; ++n) {
    if (e == 0) return n == count ? "" : absl::StrCat(n, " chunks where its count says ", count);
    if (n == count) return absl::StrCat("more chunks than its count ", count);
    if (e % kAlign != 0) return absl::StrCat("misaligned entry ", Hex(e));
    Located l = Find(walks, e - kChunkHeader);
    if (l.chunk == nullptr) return absl::StrCat("entry ", Hex(e), " is not a chunk of an arena");
    if (l.chunk->state() != ChunkState::kInUse || l.chunk->free_bit() || l.chunk->seen())
      return absl::StrCat("entry ", Hex(e), " is free or met twice");
    if (l.chunk->size() != size) return absl::StrCat("entry ", Hex(e), " has size ", Hex(l.chunk->size()));
    uint64_t next = l.chunk->fd, key = l.chunk->key;
    if ((!l.chunk->words() || layout_.tcache_entry_key != 8) &&
        (!memory_->ReadWord(e, &next) || !memory_->ReadWord(e + layout_.tcache_entry_key, &key)))
      return absl::StrCat("cannot read entry ", Hex(e));
    if (layout_.tcache_key == TcacheKey::kPerthread && key != mem)
      return absl::StrCat("entry ", Hex(e), " has key ", Hex(key), ", not its tcache");
    if (layout_.tcache_key == TcacheKey::kRandom) {
      if (!key_.has_value() && key_ok_ && key_ok_(key)) key_ = key;
      if (!key_.has_value() || key != *key_) return absl::StrCat("entry ", Hex(e), " lacks the tcache key");
    }
    l.chunk->set_seen(true);  // until the candidate is decided
    taken->push_back(l);
    e = layout_.safe_linking ? (e >> 12) ^ next : next;  // REVEAL_PTR of &e->next == e
  }
  return "";
}

void TcacheScanner::TryCandidate(std::vector<ArenaWalk>* walks, ArenaWalk* home, const WalkedChunk& c, Result* r) {
  const uint64_t mem = c.addr() + kChunkHeader;
  std::string bytes(layout_.tcache_struct_size, '\0');
  if (!memory_->Read(mem, bytes.data(), bytes.size())) return;
  std::vector<Located> taken;
  std::string problem;
  uint32_t good_lists = 0;
  for (uint32_t i = 0; i < layout_.tcache_bins; ++i) {
    uint32_t count = 0;
    std::memcpy(&count, bytes.data() + i * layout_.tcache_count_bytes, layout_.tcache_count_bytes);
    uint64_t first = 0;
    std::memcpy(&first, bytes.data() + layout_.tcache_entries + i * 8, 8);
    if (first == 0 && count == 0) continue;
    const size_t before = taken.size();
    const std::string why = CheckList(walks, mem, i, first, count, &taken);
    if (why.empty()) {
      ++good_lists;
    } else {
      for (size_t k = before; k < taken.size(); ++k) taken[k].chunk->set_seen(false);
      taken.resize(before);
      if (problem.empty()) problem = absl::StrCat("the tcache at ", Hex(mem), ": bin ", i, ": ", why);
    }
  }
  for (Located& l : taken) l.chunk->set_seen(false);
  // No list checked out: not a tcache, unless it is an empty one.
  if (good_lists == 0 && !problem.empty()) return;
  if (!problem.empty()) home->Damage(problem);
  r->structs.push_back(mem);
  r->raw += bytes;
  for (Located& l : taken) {
    l.chunk->set_state(ChunkState::kTcache);
    l.walk->tcache_bytes += l.chunk->size();
    ++l.walk->tcache_count;
  }
}

TcacheScanner::Result TcacheScanner::Scan(std::vector<ArenaWalk>* walks) {
  Result r;
  if (layout_.tcache_struct_size == 0) return r;
  const uint64_t size = StructChunkSize();
  for (ArenaWalk& w : *walks) {
    // Candidates are copied first: TryCandidate marks chunks of any arena.
    std::vector<WalkedChunk> candidates;
    w.ForEachNoted([&](const WalkedChunk& c) {
      if (c.size() == size && c.state() == ChunkState::kInUse && !c.free_bit()) candidates.push_back(c);
    });
    for (const WalkedChunk& c : candidates) TryCandidate(walks, &w, c, &r);
  }
  r.key = key_;
  return r;
}

}  // namespace pageblame::heap
