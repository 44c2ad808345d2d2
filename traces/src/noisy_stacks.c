// A burst of N mmap/munmap pairs, each made below 16 KiB of fresh random
// stack bytes: perf's DWARF stack copies of them do not compress, so a
// `perf record -z` batch of them fills COMPRESSED records to the brim, the
// case where perf loses the end of a recording unless drained
// (processor/recorder/perf_control.h). Usage: noisy_stacks N
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

static uint64_t state = 88172645463325252ull;

// xorshift64: fast, and the same bytes every run.
static uint64_t Next(void) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

__attribute__((noinline)) static void* Map(size_t len) {
  return mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

__attribute__((noinline)) static void* MapBelowNoise(size_t len) {
  volatile uint64_t noise[2048];
  for (int i = 0; i < 2048; i++) noise[i] = Next();
  void* p = Map(len);
  return noise[0] == 42 ? MAP_FAILED : p;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 2000;
  for (int i = 0; i < n; i++) {
    void* p = MapBelowNoise(4096);
    if (p == MAP_FAILED) return 1;
    munmap(p, 4096);
  }
  return 0;
}
