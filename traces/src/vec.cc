// vec.cc — C++ allocations from named functions: std::vector growth (each
// reallocation is operator new -> malloc -> mmap, the old buffer freed ->
// munmap) and new[] of large arrays. Built -O2 -g -fno-omit-frame-pointer
// -fno-optimize-sibling-calls; recorded with DWARF stacks (libstdc++ and libc
// have no frame pointers).
//
//   usage: vec MAPSDIR TRUTHDIR NAME
//
// Last acts as in commit.c: TRUTHDIR/NAME.PID.tsv (truth.h), the maps dump,
// exit_group (no destructors run: the buffers are alive at the end).
#include <cstdint>
#include <cstring>
#include <vector>

#include <unistd.h>

#include "truth.h"

namespace {
int g_failures;
void check(bool ok, const char* what) {
  if (ok) return;
  write_str(2, "vec: ");
  write_str(2, what);
  write_str(2, "\n");
  ++g_failures;
}

// malloc/malloc.c: an mmapped chunk's header is 16 bytes before the pointer.
void mmapped_chunk(const void* user, const char* fn, const char* what) {
  auto chunk = reinterpret_cast<unsigned long>(user) - 16;
  unsigned long prev = reinterpret_cast<unsigned long*>(chunk)[0];
  unsigned long size = reinterpret_cast<unsigned long*>(chunk)[1];
  check((size & 2) != 0, "chunk not mmapped");
  truth_add(chunk - prev, chunk + (size & ~7UL), "rw-", fn, "-", "libc", what);
}
}  // namespace

std::vector<uint64_t>* g_vec;
double* g_arrays[3];

// 8 Mi elements by push_back: capacity doubles, the last buffers (1, 2, 4,
// 8 Mi elements x 8 bytes) come from mmap; the final one is alive at the end.
__attribute__((noinline)) void grow_vector() {
  g_vec = new std::vector<uint64_t>();
  for (uint64_t i = 0; i < (uint64_t{8} << 20); ++i) g_vec->push_back(i);
}

// The first array (8 MiB) comes from the brk heap: grow_vector freed mmapped
// buffers of up to 16 MiB, and glibc's dynamic mmap threshold rose to that
// size (malloc/malloc.c, free: mp_.mmap_threshold = chunksize). The other two
// (40 and 48 MiB) are above DEFAULT_MMAP_THRESHOLD_MAX (32 MiB): mmap.
unsigned long g_brk_before, g_brk_after;
__attribute__((noinline)) void make_arrays() {
  g_brk_before = reinterpret_cast<unsigned long>(sbrk(0));
  for (int i = 0; i < 3; ++i) {
    g_arrays[i] = new double[(i == 0 ? 8 : 32 + 8 * i) << 17];
    std::memset(g_arrays[i], 0, 4096);
    if (i == 0) g_brk_after = reinterpret_cast<unsigned long>(sbrk(0));
  }
}

int main(int argc, char** argv) {
  if (argc != 4) {
    write_str(2, "usage: vec MAPSDIR TRUTHDIR NAME\n");
    return 2;
  }
  grow_vector();
  make_arrays();
  mmapped_chunk(g_vec->data(), "grow_vector", "std::vector<uint64_t> of 8 Mi elements (64 MiB)");
  auto page_up = [](unsigned long x) { return (x + PG - 1) & ~(PG - 1); };
  check(g_brk_after > g_brk_before, "the 8 MiB array grew the brk heap");
  truth_add(page_up(g_brk_before), page_up(g_brk_after), "rw-", "make_arrays", "-", "libc",
            "[heap] pages grown (brk) for new double[1 Mi] (glibc's raised mmap threshold)");
  for (int i = 1; i < 3; ++i)
    mmapped_chunk(g_arrays[i], "make_arrays", "new double[] (40/48 MiB, mmap)");
  long pid = RAW_GETPID();
  long bad = truth_write(argv[2], argv[3], pid);
  check(bad == 0, "truth rows vs /proc/self/maps");
  static char path[4096];
  maps_path(path, sizeof(path), argv[1], argv[3], pid, ".maps");
  check(dump_maps_to(path) == 0, "maps dump");
  sys_exit_group(g_failures ? 1 : 0);
}
