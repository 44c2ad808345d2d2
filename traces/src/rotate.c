// rotate.c — a service's day in a few seconds, for `record --max-size`
// (issue 42): blocks kept from its first second, then mmap/munmap churn
// through deep stacks, blocks kept half way and at the end. The churn's
// stacks carry fresh random bytes (as noisy_stacks.c), so perf's DWARF
// stack copies hardly compress and perf writes many times a small
// --max-size; what the recording must still name after that are the kept
// blocks, made long before the churn's chunks were folded and removed.
//
//   usage: rotate DIR SECONDS [PAUSE_US]
//
// PAUSE_US: the pause after each churn call pair (default 600: ~1500 pairs
// a second, a busy service); 0 churns as fast as the machine goes, a
// benchmark loop (bench/lost.sh: perf's lost events under --max-size).
//
// Every memory call is a raw syscall in a named (noinline) function (sys.h),
// so both frame-pointer and DWARF stacks name it as their leaf. Last acts:
// DIR/rotate.PID.tsv (truth.h: each kept block with the function that made
// it, checked against /proc/self/maps), then DIR/rotate.PID.maps, then
// exit_group.
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>

#include "truth.h"

#define RW (PROT_READ | PROT_WRITE)
#define ANON (MAP_PRIVATE | MAP_ANONYMOUS)
#define KB 1024UL
#define CHURN_DEPTH 12

static int g_failures;
static uint64_t g_state = 88172645463325252ull;

static uint64_t next_random(void) {
  g_state ^= g_state << 13;
  g_state ^= g_state >> 7;
  g_state ^= g_state << 17;
  return g_state;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fail(const char* where) {
  write_str(2, "rotate: ");
  write_str(2, where);
  write_str(2, ": mmap failed\n");
  ++g_failures;
}

// A kept block: mapped, touched, and written down with the function that made it.
static unsigned long keep(long addr, unsigned long len, const char* origin, const char* what) {
  if (addr < 0) {
    fail(origin);
    return 0;
  }
  for (unsigned long off = 0; off < len; off += PG) ((volatile char*)addr)[off] = 1;
  truth_add((unsigned long)addr, (unsigned long)addr + len, "rw-", origin, "-", "raw", what);
  return (unsigned long)addr;
}

__attribute__((noinline)) static void early_cache(void) {
  keep(RAW_MMAP(0, 2048 * KB, RW, ANON, -1, 0), 2048 * KB, __func__, "kept from the first second");
}

__attribute__((noinline)) static void early_table(void) {
  keep(RAW_MMAP(0, 64 * KB, RW, ANON, -1, 0), 64 * KB, __func__, "kept from the first second");
}

__attribute__((noinline)) static void midway_buffer(void) {
  keep(RAW_MMAP(0, 512 * KB, RW, ANON, -1, 0), 512 * KB, __func__, "kept half way");
}

__attribute__((noinline)) static void final_block(void) {
  keep(RAW_MMAP(0, 128 * KB, RW, ANON, -1, 0), 128 * KB, __func__, "kept at the end");
}

// The churn's leaf: 2 KiB of fresh random bytes on the stack under the
// call, a short-lived mapping.
__attribute__((noinline)) static int churn_map(void) {
  volatile uint64_t noise[256];
  for (int i = 0; i < 256; i++) noise[i] = next_random();
  const long p = RAW_MMAP(0, 4 * PG, RW, ANON, -1, 0);
  if (p < 0) return -1;
  ((volatile char*)p)[0] = (char)noise[0];
  RAW_MUNMAP(p, 4 * PG);
  return 0;
}

__attribute__((noinline)) static int churn_deeper(int depth) {
  volatile int frame = depth;  // keeps the frame
  const int r = depth == 0 ? churn_map() : churn_deeper(depth - 1);
  return r + frame - depth;
}

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    write_str(2, "usage: rotate DIR SECONDS [PAUSE_US]\n");
    return 2;
  }
  const double seconds = atof(argv[2]);
  char* end = 0;
  const long pause_us = argc == 4 ? strtol(argv[3], &end, 10) : 600;
  if ((argc == 4 && (end == argv[3] || *end != '\0')) || pause_us < 0 || pause_us >= 1000000) {
    write_str(2, "rotate: PAUSE_US: expected 0 to 999999\n");
    return 2;
  }
  // A pause asked for is slept as asked: the kernel's default 50 us of
  // timer slack would make every pause below it the same.
  if (argc == 4) prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  const double start = now_seconds();
  early_cache();
  early_table();
  // By default about 1500 call pairs a second: a busy service, not a
  // benchmark loop (perf keeps up, even while it cuts chunks).
  const struct timespec pause = {0, pause_us * 1000};
  int midway = 0;
  while (now_seconds() - start < seconds) {
    if (churn_deeper(CHURN_DEPTH) != 0) fail("churn_map");
    if (!midway && now_seconds() - start >= seconds / 2) {
      midway_buffer();
      midway = 1;
    }
    if (pause_us > 0) nanosleep(&pause, 0);
  }
  final_block();
  const long pid = RAW_GETPID();
  if (truth_write(argv[1], "rotate", pid) != 0) ++g_failures;
  char path[4096];
  maps_path(path, sizeof(path), argv[1], "rotate", pid, ".maps");
  if (dump_maps_to(path) != 0) ++g_failures;
  sys_exit_group(g_failures ? 1 : 0);
  return 0;
}
