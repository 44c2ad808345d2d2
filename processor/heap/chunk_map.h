// ChunkMap: where every chunk of an arena's heaps starts, one bit per 16
// bytes of heap, and a whole record (WalkedChunk) only for the chunks
// added with one: the chunk walk keeps records for the chunks a free list
// may hold (arena_walker.h), so a heap of millions of small chunks costs
// ~2 bits per 16 bytes plus ~40 bytes per free chunk, not 40 bytes a chunk.
// A chunk without a record still has its size (to the next start) and, when
// Find asks for it, gets a record made from that (in use, or a fencepost
// below MINSIZE; no first words), kept so that marks on it stay.
//
//   ChunkMap m;
//   m.Add(0x1000, 0x40, /*first=*/true);                 // a heap's first chunk
//   m.AddRecord(WalkedChunk(0x1040, 0x20, ChunkState::kInUse, 1, true, fd, bk), false);
//   if (WalkedChunk* c = m.Find(0x1040)) c->set_state(ChunkState::kBinned);
//   m.ForEachNoted([](const WalkedChunk& c) { ... });     // records, address order
//
// Chunks must be added in address order, each at or after the end of the
// one before (a chunk that is not is dropped: the map stays sorted). A run
// of chunks that follow each other is a stretch; a heap's first chunk and
// the chunk after a large one start a new stretch, so a large chunk costs
// no bits. Find is O(1) in a stretch (a rank count per 64 bits). Records
// live in blocks that never move, so what Find returns stays valid.
#ifndef PAGEBLAME_HEAP_CHUNK_MAP_H_
#define PAGEBLAME_HEAP_CHUNK_MAP_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace pageblame::heap {

// glibc malloc's chunk constants on x86-64 (malloc.c: SIZE_SZ 8,
// MALLOC_ALIGNMENT 16, MINSIZE 32, the three flag bits of a size field).
inline constexpr uint64_t kSizeSz = 8;
inline constexpr uint64_t kChunkHeader = 16;
inline constexpr uint64_t kMinSize = 32;
inline constexpr uint64_t kAlign = 16;
inline constexpr uint64_t kPrevInuse = 1, kIsMmapped = 2, kNonMainArena = 4, kSizeBits = 7;
// sizeof (struct malloc_chunk): prev_size, size, fd, bk, fd_nextsize, bk_nextsize.
inline constexpr uint64_t kMallocChunkSize = 48;

enum class ChunkState : uint8_t { kInUse, kBinned, kFast, kTcache, kFence };

class WalkedChunk {
 public:
  WalkedChunk() = default;
  // `words`: fd and key were read with the header.
  WalkedChunk(uint64_t addr, uint64_t size, ChunkState state, uint8_t flags, bool free_bit, uint64_t fd,
              uint64_t key, bool words = true)
      : fd(fd), key(key), addr_(addr), size_(size), state_(state), flags_(flags), free_bit_(free_bit),
        words_(words) {}

  uint64_t addr() const { return addr_; }  // the chunk (its prev_size field), 16-aligned
  uint64_t size() const { return size_; }  // chunksize(): flags cleared
  ChunkState state() const { return state_; }
  uint8_t flags() const { return flags_; }       // the flag bits of its size field
  bool free_bit() const { return free_bit_; }    // the next chunk's PREV_INUSE is clear: glibc takes it for free
  bool seen() const { return seen_; }            // already met on a free list (cycle detection)
  bool words() const { return words_; }
  void set_state(ChunkState s) { state_ = s; }
  void set_seen(bool s) { seen_ = s; }

  // Its first two user words, read with its header (same page, same read):
  // a free chunk's fd and bk, a tcache entry's next and key. The free-list
  // walks use them instead of reading each member again at random.
  uint64_t fd = 0, key = 0;

 private:
  uint64_t addr_ = 0, size_ = 0;
  ChunkState state_ = ChunkState::kInUse;
  uint8_t flags_ = 0;
  bool free_bit_ = false, seen_ = false, words_ = false;
};

class ChunkMap {
 public:
  // A chunk after this size ends its stretch (its bits would cost more than
  // a stretch's record).
  static constexpr uint64_t kLargeChunk = 16 * 1024;

  // `first`: the first chunk of a heap.
  void Add(uint64_t addr, uint64_t size, bool first);
  void AddRecord(const WalkedChunk& c, bool first);
  // Chunks added (and kept).
  size_t size() const { return count_; }
  // The chunk starting at `addr`, or nullptr. The pointer stays valid.
  WalkedChunk* Find(uint64_t addr);

  // f(addr, size) for every chunk, in address order.
  template <typename F>
  void ForEachChunk(F f) const {
    for (const Stretch& s : stretches_) {
      uint64_t prev = s.start;
      for (uint64_t b = NextBit(s.bit + 1, s.bit + Bits(s)); b < s.bit + Bits(s); b = NextBit(b + 1, s.bit + Bits(s))) {
        const uint64_t addr = s.start + (b - s.bit) * kAlign;
        f(prev, addr - prev);
        prev = addr;
      }
      f(prev, s.end - prev);
    }
  }
  // f(const WalkedChunk&) for every chunk with a record (added with one or
  // made by Find), in address order.
  template <typename F>
  void ForEachNoted(F f) const {
    auto found = found_.begin();
    for (uint64_t i = 0; i < records_; ++i) {
      const WalkedChunk& c = Record(i);
      for (; found != found_.end() && found->first < c.addr(); ++found) f(found->second);
      f(c);
    }
    for (; found != found_.end(); ++found) f(found->second);
  }

 private:
  struct Stretch {
    uint64_t start = 0, last = 0, end = 0;  // its first chunk, its last chunk, the last one's end
    uint64_t bit = 0;                       // the bit of `start`
  };
  static constexpr uint64_t kRankBits = 512;
  static constexpr uint64_t kRecordBlock = 4096;  // records per block

  static uint64_t Bits(const Stretch& s) { return (s.last - s.start) / kAlign + 1; }
  // Sets the chunk's start bit; false if it is dropped (out of order).
  bool Place(uint64_t addr, uint64_t size, bool first, uint64_t* bit);
  // The first set bit of starts_ in [from, to), else `to`.
  uint64_t NextBit(uint64_t from, uint64_t to) const;
  // The stretch holding the chunk start `addr`, or nullptr.
  const Stretch* StretchOf(uint64_t addr);
  // Records before bit `bit` (a bit of noted_).
  uint64_t Rank(uint64_t bit) const;
  const WalkedChunk& Record(uint64_t i) const { return blocks_[i / kRecordBlock][i % kRecordBlock]; }
  WalkedChunk& Record(uint64_t i) { return blocks_[i / kRecordBlock][i % kRecordBlock]; }

  std::vector<Stretch> stretches_;
  std::vector<uint64_t> starts_, noted_;  // a bit per 16 bytes of each stretch: a chunk starts; it has a record
  std::vector<uint64_t> rank_;            // records before each kRankBits bits
  std::vector<uint16_t> word_rank_;       // records before each word of noted_, from its block's start
  // The records, address order: blocks made with room for kRecordBlock, so
  // that adding one moves none.
  std::vector<std::vector<WalkedChunk>> blocks_;
  uint64_t records_ = 0;
  std::map<uint64_t, WalkedChunk> found_;  // records Find made
  size_t count_ = 0;
  bool cut_ = true;  // the next chunk starts a new stretch
  size_t last_stretch_ = 0;  // the one StretchOf found last
};

}  // namespace pageblame::heap

#endif  // PAGEBLAME_HEAP_CHUNK_MAP_H_
