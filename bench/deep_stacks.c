// Every memory syscall from its own call stack: for each of 2^LEVELS paths,
// Down() recurses LEVELS deep, calling itself from one of two call sites as
// the path's bits say (so the return addresses differ), and at the bottom
// maps and unmaps a page. 2^LEVELS paths make 2^(LEVELS+1) calls, each with
// a distinct stack (mmap and munmap differ in their leaf frames), sharing
// their outer frames as a JIT-heavy service's stacks do. Built with frame
// pointers (bench/stacks.sh). Usage: deep_stacks LEVELS
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

static volatile int sink;

__attribute__((noinline)) static int Down(int level, uint32_t path) {
  if (level == 0) {
    void* p = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) exit(1);
    munmap(p, 4096);
    return sink;
  }
  // Two calls the compiler cannot merge: each result is used differently.
  if (path & 1) return Down(level - 1, path >> 1) + 1;
  return Down(level - 1, path >> 1) * 3;
}

int main(int argc, char** argv) {
  const int levels = argc > 1 ? atoi(argv[1]) : 20;
  if (levels < 1 || levels > 30) return 2;
  int r = 0;
  for (uint32_t path = 0; path < (1u << levels); path++) r += Down(levels, path);
  sink = r;
  return 0;
}
