#include "processor/heap/chunk_map.h"

#include <algorithm>

namespace pageblame::heap {

bool ChunkMap::Place(uint64_t addr, uint64_t size, bool first, uint64_t* bit) {
  if (addr % kAlign != 0 || size < kAlign || addr + size < addr) return false;
  const bool follows = !stretches_.empty() && addr == stretches_.back().end;
  if (!stretches_.empty() && addr < stretches_.back().end) return false;
  if (first || cut_ || !follows) {
    const uint64_t next = stretches_.empty() ? 0 : stretches_.back().bit + Bits(stretches_.back());
    stretches_.push_back({addr, addr, addr + size, next});
  } else {
    stretches_.back().last = addr;
    stretches_.back().end = addr + size;
  }
  const Stretch& s = stretches_.back();
  *bit = s.bit + (addr - s.start) / kAlign;
  const size_t words = *bit / 64 + 1;
  if (words > starts_.size()) {
    starts_.resize(std::max(words, starts_.size() * 2));
    noted_.resize(starts_.size());
  }
  starts_[*bit / 64] |= uint64_t{1} << (*bit % 64);
  cut_ = size >= kLargeChunk;
  ++count_;
  return true;
}

void ChunkMap::Add(uint64_t addr, uint64_t size, bool first) {
  uint64_t bit = 0;
  Place(addr, size, first, &bit);
}

void ChunkMap::AddRecord(const WalkedChunk& c, bool first) {
  uint64_t bit = 0;
  if (!Place(c.addr(), c.size(), first, &bit)) return;
  noted_[bit / 64] |= uint64_t{1} << (bit % 64);
  // The words up to this one: the records before them (none lie in between).
  for (uint64_t w = word_rank_.size(); w <= bit / 64; ++w) {
    if (w % (kRankBits / 64) == 0) rank_.push_back(records_);
    word_rank_.push_back(static_cast<uint16_t>(records_ - rank_.back()));
  }
  if (records_ % kRecordBlock == 0) blocks_.emplace_back().reserve(kRecordBlock);
  blocks_.back().push_back(c);
  ++records_;
}

uint64_t ChunkMap::NextBit(uint64_t from, uint64_t to) const {
  while (from < to) {
    const uint64_t word = starts_[from / 64] >> (from % 64);
    if (word != 0) return std::min(to, from + __builtin_ctzll(word));
    from = (from / 64 + 1) * 64;
  }
  return to;
}

const ChunkMap::Stretch* ChunkMap::StretchOf(uint64_t addr) {
  if (last_stretch_ < stretches_.size()) {
    const Stretch& s = stretches_[last_stretch_];
    if (addr >= s.start && addr <= s.last) return &s;
  }
  auto it = std::upper_bound(stretches_.begin(), stretches_.end(), addr,
                             [](uint64_t a, const Stretch& s) { return a < s.start; });
  if (it == stretches_.begin()) return nullptr;
  --it;
  if (addr > it->last) return nullptr;
  last_stretch_ = static_cast<size_t>(it - stretches_.begin());
  return &*it;
}

uint64_t ChunkMap::Rank(uint64_t bit) const {
  return rank_[bit / kRankBits] + word_rank_[bit / 64] +
         __builtin_popcountll(noted_[bit / 64] & ((uint64_t{1} << (bit % 64)) - 1));
}

WalkedChunk* ChunkMap::Find(uint64_t addr) {
  const Stretch* s = StretchOf(addr);
  if (s == nullptr || (addr - s->start) % kAlign != 0) return nullptr;
  const uint64_t bit = s->bit + (addr - s->start) / kAlign;
  const uint64_t mask = uint64_t{1} << (bit % 64);
  if ((starts_[bit / 64] & mask) == 0) return nullptr;
  if ((noted_[bit / 64] & mask) != 0) return &Record(Rank(bit));
  auto [it, made] = found_.try_emplace(addr);
  if (made) {
    const uint64_t last = s->bit + Bits(*s);
    const uint64_t next = NextBit(bit + 1, last);
    const uint64_t size = next < last ? (next - bit) * kAlign : s->end - addr;
    it->second = WalkedChunk(addr, size, size < kMinSize ? ChunkState::kFence : ChunkState::kInUse, 0, false, 0, 0,
                             /*words=*/false);
  }
  return &it->second;
}

}  // namespace pageblame::heap
