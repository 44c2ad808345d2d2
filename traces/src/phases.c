// phases.c — memory that grows in two phases from different functions, for
// `pageblame growth`: the growth between the phases must name the second
// phase's functions with exactly their bytes. Each function issues its
// syscalls with sys.h's inline `syscall` instruction, so frame-pointer stacks
// name it as their leaf. Built -O0 -g -fno-omit-frame-pointer.
//
//   usage: phases MAPSDIR TRUTHDIR NAME
//
// Phase 1 ("warm-up"):
//   warm_up        4 x 1 MiB rw at P(0)..P(3)
//   reserve_arena  4 MiB PROT_NONE MAP_NORESERVE at P(4)
// then 200 ms of nothing (nanosleep: no memory syscall), the gap between
// the phases, then phase 2 ("steady state"):
//   grow_cache     3 x 2 MiB rw at P(10)..P(12) (kept), and 1 MiB at P(13)
//                  mapped, touched and unmapped again (made and gone)
//   commit_arena   mprotect rw of the first 1 MiB of P(4)
//   drop_warm      munmap of warm_up's P(0)
// So from the gap to the end: grow_cache +6 MiB (6,291,456 bytes, 1 MiB made
// and gone), warm_up -1 MiB, reserve_arena +0 mapped / +1 MiB committed
// (by commit: commit_arena +1 MiB, reserve_arena -1 MiB), everything else 0;
// total +5 MiB. Last acts, as in commit.c: TRUTHDIR/NAME.PID.tsv,
// MAPSDIR/NAME.PID.maps, exit_group.
#define _GNU_SOURCE
#include <sys/mman.h>
#include <time.h>

#include "truth.h"

#define RW (PROT_READ | PROT_WRITE)
#define ANON (MAP_PRIVATE | MAP_ANONYMOUS)
#define MB (1UL << 20)
#define P(k) (0x400000000000UL + (unsigned long)(k) * 0x10000000UL)

static int g_failures;

static void check(int ok, const char* where, const char* what, long got) {
  if (ok) return;
  char msg[512];
  size_t pos = 0;
  msg[0] = 0;
  str_append(msg, sizeof(msg), &pos, "phases: ");
  str_append(msg, sizeof(msg), &pos, where);
  str_append(msg, sizeof(msg), &pos, ": ");
  str_append(msg, sizeof(msg), &pos, what);
  str_append(msg, sizeof(msg), &pos, " (got ");
  str_append_hex(msg, sizeof(msg), &pos, (unsigned long)got);
  str_append(msg, sizeof(msg), &pos, ")\n");
  write_str(2, msg);
  ++g_failures;
}

static void touch(unsigned long addr, unsigned long len, char value) {
  for (unsigned long off = 0; off < len; off += PG) ((volatile char*)addr)[off] = value;
}

__attribute__((noinline)) static void warm_up(void) {
  for (int k = 0; k < 4; ++k) {
    long r = RAW_MMAP(P(k), MB, RW, ANON, -1, 0);
    check(r == (long)P(k), __func__, "not at hint", r);
    touch(P(k), MB, 1);
  }
}

__attribute__((noinline)) static void reserve_arena(void) {
  long r = RAW_MMAP(P(4), 4 * MB, PROT_NONE, ANON | MAP_NORESERVE, -1, 0);
  check(r == (long)P(4), __func__, "not at hint", r);
}

// The gap between the phases: no memory syscall for 200 ms.
__attribute__((noinline)) static void pause_between_phases(void) {
  struct timespec ts = {0, 200 * 1000 * 1000};
  long r = sc6(SYS_nanosleep, (long)&ts, 0, 0, 0, 0, 0);
  check(r == 0, __func__, "nanosleep", r);
}

__attribute__((noinline)) static void grow_cache(void) {
  for (int k = 10; k < 13; ++k) {
    long r = RAW_MMAP(P(k), 2 * MB, RW, ANON, -1, 0);
    check(r == (long)P(k), __func__, "not at hint", r);
    touch(P(k), 2 * MB, 2);
  }
  long r = RAW_MMAP(P(13), MB, RW, ANON, -1, 0);
  check(r == (long)P(13), __func__, "scratch not at hint", r);
  touch(P(13), MB, 3);
  r = RAW_MUNMAP(P(13), MB);
  check(r == 0, __func__, "munmap scratch", r);
}

__attribute__((noinline)) static void commit_arena(void) {
  long r = RAW_MPROTECT(P(4), MB, RW);
  check(r == 0, __func__, "mprotect", r);
  touch(P(4), MB, 4);
}

__attribute__((noinline)) static void drop_warm(void) {
  long r = RAW_MUNMAP(P(0), MB);
  check(r == 0, __func__, "munmap", r);
}

static void add_truth(void) {
  for (int k = 1; k < 4; ++k) truth_add(P(k), P(k) + MB, "rw-", "warm_up", "-", "raw", "phase 1, kept");
  truth_add(P(4), P(4) + MB, "rw-", "reserve_arena", "commit_arena", "raw", "committed in phase 2");
  truth_add(P(4) + MB, P(4) + 4 * MB, "---", "reserve_arena", "-", "raw", "still reserved");
  for (int k = 10; k < 13; ++k) truth_add(P(k), P(k) + 2 * MB, "rw-", "grow_cache", "-", "raw", "phase 2");
}

int main(int argc, char** argv) {
  if (argc != 4) {
    write_str(2, "usage: phases MAPSDIR TRUTHDIR NAME\n");
    return 2;
  }
  warm_up();
  reserve_arena();
  pause_between_phases();
  grow_cache();
  commit_arena();
  drop_warm();

  add_truth();
  long pid = RAW_GETPID();
  long bad = truth_write(argv[2], argv[3], pid);
  check(bad == 0, "main", "truth rows vs /proc/self/maps", bad);
  static char path[4096];
  maps_path(path, sizeof(path), argv[1], argv[3], pid, ".maps");
  long rc = dump_maps_to(path);
  check(rc == 0, "main", "maps dump", rc);
  sys_exit_group(g_failures ? 1 : 0);
}
