// libFuzzer target: the glibc heap walker over an arbitrary memory image
// (issue 39). The input is
//   byte 0: the glibc minor version (28 + byte % 13: the built-in layouts)
//   byte 1: bit 0 set: a thread arena (its heap_info first, the arena after
//           it), else main_arena with a brk heap
//   then:   main_arena: its malloc_state (in a mapping named like libc, as
//           the walker finds it), then the brk heap's bytes;
//           a thread arena: the heap's bytes from its heap_info on
// and the walker reads it through BufferMemory: main_arena's and mp_'s
// signature scan, every arena walk, the tcache scan (the key inferred),
// the trim model. Whatever the bytes, it must end (bounded work), and what
// it reports must hold: chunks and their records sorted inside the heaps,
// releasable pages inside the heaps, counts within what the image can hold.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "processor/heap/arena_locator.h"
#include "processor/heap/arena_walker.h"
#include "processor/heap/buffer_memory.h"
#include "processor/heap/glibc_layout.h"
#include "processor/heap/tcache_scanner.h"
#include "processor/heap/trim_model.h"

namespace {

using namespace pageblame::heap;

constexpr uint64_t kLibcData = 0x7f0000010000, kBrk = 0x560000000000, kThreadHeap = 0x7f0004000000;
constexpr char kLibc[] = "/usr/lib/x86_64-linux-gnu/libc.so.6";

[[noreturn]] void Fail(const char* what, uint64_t v) {
  std::fprintf(stderr, "heap_walk: %s: 0x%llx\n", what, static_cast<unsigned long long>(v));
  std::abort();
}

void Check(const ArenaWalk& w, uint64_t image) {
  uint64_t last = 0, count = 0;
  w.chunks.ForEachChunk([&](uint64_t addr, uint64_t size) {
    if (addr < last || !w.InHeaps(addr, size)) Fail("chunk out of order or outside the heaps", addr);
    last = addr + size;
    ++count;
  });
  if (count != w.chunks.size()) Fail("chunks walked and chunks kept differ", count);
  last = 0;
  w.ForEachNoted([&](const WalkedChunk& c) {
    if (c.addr() < last || !w.InHeaps(c.addr(), c.size())) Fail("record out of order or outside the heaps", c.addr());
    last = c.addr() + c.size();
  });
  if (w.binned_count + w.fast_count + w.tcache_count > image / 16 + 1) Fail("more free chunks than fit", w.binned_count);
  for (const pageblame::residency::PageRange& r : TrimModel::Releasable(w, 4096, 0)) {
    if (r.size() % 4096 != 0 || r.end <= r.start) Fail("releasable range not whole pages", r.start);
    if (!w.InHeaps(r.start, r.size()) && !w.heaps.empty()) Fail("releasable range outside the heaps", r.start);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const GlibcLayout l = *BuiltinLayout(2, 28 + data[0] % 13);
  const bool thread = data[1] & 1;
  const std::string rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  BufferMemory m(1);
  uint64_t arena = 0, sbrk = 0;
  if (!thread) {
    const std::string state = rest.substr(0, l.state_size);
    m.AddMapping({kBrk, kBrk + (uint64_t{1} << 24), true, true, false, 0, "[heap]"},
                 rest.size() > l.state_size ? rest.substr(l.state_size) : "");
    m.AddMapping({kLibcData, kLibcData + 0x4000, true, true, false, 0, kLibc}, state);
    arena = kLibcData;
    sbrk = kBrk;
  } else {
    m.AddMapping({kLibcData, kLibcData + 0x4000, true, true, false, 0, kLibc}, "");
    m.AddMapping({kThreadHeap, kThreadHeap + (uint64_t{64} << 20), true, true, false, 0, ""}, rest);
    arena = kThreadHeap + l.heap_info_size;
  }
  ArenaWalker walker(&m, l, {sbrk, uint64_t{64} << 20});
  std::vector<ArenaWalk> walks = {walker.Walk(arena, !thread)};
  TcacheScanner scanner(&m, l, std::nullopt, [&](uint64_t k) { return ArenaLocator::DataHolds(&m, kLibc, k); });
  scanner.Scan(&walks);
  for (const ArenaWalk& w : walks) Check(w, size);
  if (!thread) {
    absl::StatusOr<uint64_t> found = ArenaLocator::FindMainArena(&m, l, kLibc);
    if (found.ok()) ArenaLocator::FindMallocPar(&m, l, kLibc, *found).IgnoreError();
  }
  return 0;
}
