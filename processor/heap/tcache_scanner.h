// TcacheScanner: finds every thread's tcache (glibc >= 2.26: a per-thread
// cache of up to tcache_count free chunks per size, which the arena counts
// as in use) and marks its chunks free.
//
// How the tcaches are found (docs/heap.md, "tcache"): each thread's
// tcache_perthread_struct is itself a malloc'd chunk, made by tcache_init()
// in the thread's arena on its first malloc (for the first thread of an
// arena, the first chunk of its heap). So every in-use chunk of exactly
// that struct's chunk size (0x290 on 2.30+, 0x250 before) is a candidate,
// and a candidate is taken for a tcache when its lists check out: each
// entries[i] list, followed through the (safe-linked, 2.32+) next pointers,
// holds exactly counts[i] chunks, each an in-use chunk of the size of bin i
// (i * 16 + 32) not met before, whose key word is the process's tcache_key
// (2.34+), or the struct's own address (2.29-2.33). A candidate none of
// whose lists holds a checked chunk is user data that happens to have the
// size (an all-zero one is an empty tcache: it adds nothing either way).
// A taken tcache with one bad list is damage, named in the arena holding it.
// The thread-pointer alternative (each thread's `tcache` TLS variable at
// fs_base + offset) needs every thread's fs_base, which a live process
// gives only to ptrace (stopping it), and the TLS offset, which needs
// link_map internals; the scan needs neither and reads a core the same way.
//
//   TcacheScanner s(&memory, layout, key);
//   TcacheScanner::Result r = s.Scan(&walks);  // walks' tcache_* and chunk states updated
//
// Work: one read of each candidate struct (the walk keeps a record of every
// chunk of that size) and, where the walk did not keep them, of a listed
// chunk's two words; each step lands on a chunk not met before, so the
// total is bounded by the number of chunks.
#ifndef PAGEBLAME_HEAP_TCACHE_SCANNER_H_
#define PAGEBLAME_HEAP_TCACHE_SCANNER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "processor/heap/arena_walk.h"
#include "processor/heap/glibc_layout.h"
#include "processor/heap/target_memory.h"

namespace pageblame::heap {

class TcacheScanner {
 public:
  struct Result {
    std::vector<uint64_t> structs;   // the tcache_perthread_structs taken (their chunks' user addresses)
    std::optional<uint64_t> key;     // the tcache_key used (found or inferred)
    std::string raw;                 // the structs' bytes as read (compared on a re-read)
  };
  // `key`: tcache_key's value when known (2.34+). Without it, the key of
  // the first listed chunk is taken if `key_ok` accepts it (the walker
  // checks that libc's data holds that value).
  TcacheScanner(TargetMemory* memory, const GlibcLayout& layout, std::optional<uint64_t> key,
                std::function<bool(uint64_t)> key_ok)
      : memory_(memory), layout_(layout), key_(key), key_ok_(std::move(key_ok)) {}

  Result Scan(std::vector<ArenaWalk>* walks);
  // The chunk size of a tcache_perthread_struct: request2size(sizeof).
  uint64_t StructChunkSize() const;

 private:
  struct Located {
    ArenaWalk* walk = nullptr;
    WalkedChunk* chunk = nullptr;
  };
  Located Find(std::vector<ArenaWalk>* walks, uint64_t chunk);
  // Checks one list; appends its chunks to `taken`. "" if it checks out,
  // else what is wrong.
  std::string CheckList(std::vector<ArenaWalk>* walks, uint64_t mem, uint32_t bin, uint64_t first, uint32_t count,
                        std::vector<Located>* taken);
  void TryCandidate(std::vector<ArenaWalk>* walks, ArenaWalk* home, const WalkedChunk& c, Result* r);

  TargetMemory* memory_;
  const GlibcLayout& layout_;
  std::optional<uint64_t> key_;
  std::function<bool(uint64_t)> key_ok_;
};

}  // namespace pageblame::heap

#endif  // PAGEBLAME_HEAP_TCACHE_SCANNER_H_
