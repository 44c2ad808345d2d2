// commit.c — reserve/commit patterns of managed runtimes and glibc, for the
// "Reserve vs commit" rule of docs/design.md and for mprotect/pkey_mprotect/
// madvise replay. Each pattern runs in its own named (noinline) function and,
// except where the pattern is glibc's own (the thread arena), issues its
// syscalls with sys.h's inline `syscall` instruction, so even frame-pointer
// stacks name the function as their leaf. Built -O0 -g -fno-omit-frame-pointer.
//
//   usage: commit MAPSDIR TRUTHDIR NAME
//
// Last acts: TRUTHDIR/NAME.PID.tsv (truth.h: every range it made, with the
// prot, origin function and commit function it must have at the end, checked
// against /proc/self/maps before writing), then MAPSDIR/NAME.PID.maps, then
// exit_group. Scenarios work at fixed hints C(k) (checked), so the addresses
// below are stable across recordings; only the arena is kernel-placed.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "truth.h"

#define RW (PROT_READ | PROT_WRITE)
#define ANON (MAP_PRIVATE | MAP_ANONYMOUS)
#define MB (1UL << 20)
#define C(k) (0x300000000000UL + (unsigned long)(k) * 0x10000000UL)
#ifndef MADV_FREE
#define MADV_FREE 8
#endif

static int g_failures;

static void check(int ok, const char* where, const char* what, long got) {
  if (ok) return;
  char msg[512];
  size_t pos = 0;
  msg[0] = 0;
  str_append(msg, sizeof(msg), &pos, "commit: ");
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

// ---- CoreCLR-like (gc/unix/gcenv.unix.cpp: VirtualReserve = mmap PROT_NONE
// MAP_NORESERVE + madvise DONTDUMP, VirtualCommit = mprotect RW, VirtualDecommit
// / VirtualReset = madvise DONTNEED + mprotect NONE). 64 MiB at C(0).
#define CLR C(0)

__attribute__((noinline)) static void clr_reserve(void) {
  long r = RAW_MMAP(CLR, 64 * MB, PROT_NONE, ANON | MAP_NORESERVE, -1, 0);
  check(r == (long)CLR, __func__, "reservation not at hint", r);
  // Keep the upper half out of core dumps: the kernel splits the one
  // reservation into two PROT_NONE VMAs at +32 MiB (VM_DONTDUMP differs).
  long d = RAW_MADVISE(CLR + 32 * MB, 32 * MB, MADV_DONTDUMP);
  check(d == 0, __func__, "madvise DONTDUMP", d);
}

__attribute__((noinline)) static void clr_commit_gen0(void) {
  long rc = RAW_MPROTECT(CLR, 4 * MB, RW);
  check(rc == 0, __func__, "mprotect RW", rc);
  touch(CLR, 4 * MB, 1);
}

// One mprotect across the two PROT_NONE VMAs that clr_reserve's madvise made.
__attribute__((noinline)) static void clr_commit_loh(void) {
  long rc = RAW_MPROTECT(CLR + 30 * MB, 4 * MB, RW);
  check(rc == 0, __func__, "mprotect RW across +32 MiB", rc);
  touch(CLR + 30 * MB, 4 * MB, 2);
}

__attribute__((noinline)) static void clr_decommit(void) {
  long a = RAW_MADVISE(CLR + 2 * MB, 2 * MB, MADV_DONTNEED);
  check(a == 0, __func__, "madvise DONTNEED", a);
  long b = RAW_MPROTECT(CLR + 2 * MB, 2 * MB, PROT_NONE);
  check(b == 0, __func__, "mprotect NONE", b);
}

__attribute__((noinline)) static void clr_recommit(void) {
  long rc = RAW_MPROTECT(CLR + 3 * MB, MB, RW);
  check(rc == 0, __func__, "mprotect RW again", rc);
  touch(CLR + 3 * MB, MB, 3);
}

static void clr_truth(void) {
  const char* f = "clr_reserve";
  truth_add(CLR, CLR + 2 * MB, "rw-", f, "clr_commit_gen0", "raw", "CLR gen0 (mprotect RW)");
  truth_add(CLR + 2 * MB, CLR + 3 * MB, "---", f, "-", "raw",
            "CLR gen0 decommitted (madvise DONTNEED + mprotect NONE)");
  truth_add(CLR + 3 * MB, CLR + 4 * MB, "rw-", f, "clr_recommit", "raw",
            "CLR gen0 decommitted then committed again");
  truth_add(CLR + 4 * MB, CLR + 30 * MB, "---", f, "-", "raw", "CLR reserved, never committed");
  truth_add(CLR + 30 * MB, CLR + 34 * MB, "rw-", f, "clr_commit_loh", "raw",
            "CLR LOH: one mprotect over two PROT_NONE VMAs (DONTDUMP split at +32 MiB)");
  truth_add(CLR + 34 * MB, CLR + 64 * MB, "---", f, "-", "raw",
            "CLR reserved (DONTDUMP), never committed");
}

// ---- HotSpot-like (os_linux.cpp: reserve = mmap PROT_NONE MAP_NORESERVE,
// commit = mmap MAP_FIXED RW over the reservation, uncommit = mmap MAP_FIXED
// MAP_NORESERVE PROT_NONE). Two adjacent reservations at C(1) (young 16 MiB,
// old 48 MiB: the kernel merges them into one VMA; replay keeps two origins).
#define HS C(1)

__attribute__((noinline)) static void hs_reserve(void) {
  long y = RAW_MMAP(HS, 16 * MB, PROT_NONE, ANON | MAP_NORESERVE, -1, 0);
  check(y == (long)HS, __func__, "young reservation not at hint", y);
  long o = RAW_MMAP(HS + 16 * MB, 48 * MB, PROT_NONE, ANON | MAP_NORESERVE, -1, 0);
  check(o == (long)(HS + 16 * MB), __func__, "old reservation not right after", o);
}

__attribute__((noinline)) static void hs_commit_young(void) {
  long r = RAW_MMAP(HS, 4 * MB, RW, ANON | MAP_FIXED, -1, 0);
  check(r == (long)HS, __func__, "MAP_FIXED commit", r);
  touch(HS, 4 * MB, 4);
}

// Lands across both reservations: the end of young's and the start of old's.
__attribute__((noinline)) static void hs_commit_old(void) {
  long r = RAW_MMAP(HS + 14 * MB, 6 * MB, RW, ANON | MAP_FIXED, -1, 0);
  check(r == (long)(HS + 14 * MB), __func__, "MAP_FIXED commit across two reservations", r);
  touch(HS + 14 * MB, 6 * MB, 5);
}

__attribute__((noinline)) static void hs_uncommit(void) {
  long r = RAW_MMAP(HS + 2 * MB, MB, PROT_NONE, ANON | MAP_FIXED | MAP_NORESERVE, -1, 0);
  check(r == (long)(HS + 2 * MB), __func__, "MAP_FIXED PROT_NONE over committed", r);
}

// "Judged page by page": one MAP_FIXED RW over 1 MiB of committed (accessible)
// pages and 1 MiB of PROT_NONE pages. The accessible ones are replaced (origin:
// this mmap, commit null); the PROT_NONE ones are committed (origin stays).
__attribute__((noinline)) static void hs_fixed_mixed(void) {
  long r = RAW_MMAP(HS + 19 * MB, 2 * MB, RW, ANON | MAP_FIXED, -1, 0);
  check(r == (long)(HS + 19 * MB), __func__, "MAP_FIXED over RW + NONE", r);
  touch(HS + 19 * MB, 2 * MB, 6);
}

static void hs_truth(void) {
  const char* f = "hs_reserve";
  truth_add(HS, HS + 2 * MB, "rw-", f, "hs_commit_young", "raw", "HS young (MAP_FIXED RW)");
  truth_add(HS + 2 * MB, HS + 3 * MB, "---", f, "-", "raw",
            "HS young uncommitted (MAP_FIXED MAP_NORESERVE PROT_NONE)");
  truth_add(HS + 3 * MB, HS + 4 * MB, "rw-", f, "hs_commit_young", "raw", "HS young (MAP_FIXED RW)");
  truth_add(HS + 4 * MB, HS + 14 * MB, "---", f, "-", "raw", "HS young reservation, never committed");
  truth_add(HS + 14 * MB, HS + 16 * MB, "rw-", f, "hs_commit_old", "raw",
            "HS commit across two reservations: young's tail");
  truth_add(HS + 16 * MB, HS + 19 * MB, "rw-", f, "hs_commit_old", "raw",
            "HS commit across two reservations: old's head");
  truth_add(HS + 19 * MB, HS + 20 * MB, "rw-", "hs_fixed_mixed", "-", "raw",
            "MAP_FIXED RW over accessible pages: replaced");
  truth_add(HS + 20 * MB, HS + 21 * MB, "rw-", f, "hs_fixed_mixed", "raw",
            "MAP_FIXED RW onto PROT_NONE pages: committed");
  truth_add(HS + 21 * MB, HS + 64 * MB, "---", f, "-", "raw", "HS old reservation, never committed");
}

// ---- glibc thread arena (malloc/arena.c new_heap: mmap 128 MiB PROT_NONE
// MAP_NORESERVE, munmap to a 64 MiB-aligned heap, mprotect RW of the first
// part; grow_heap: one mprotect per growth). Through libc: only DWARF stacks
// reach arena_worker.
#define HEAP_MAX (64 * MB)
static unsigned long g_arena_heap, g_arena_rw;

static void* arena_worker(void* unused) {
  (void)unused;
  void* first = NULL;
  for (int i = 0; i < 600; ++i) {
    void* p = malloc(1000);
    check(p != NULL, "arena_worker", "malloc", 0);
    if (!first) first = p;
    ((volatile char*)p)[0] = 1;
  }
  g_arena_heap = (unsigned long)first & ~(HEAP_MAX - 1);
  // malloc/arena.c struct _heap_info: ar_ptr, prev, size, mprotect_size, ...
  g_arena_rw = ((unsigned long*)g_arena_heap)[3];
  return NULL;
}

__attribute__((noinline)) static void run_arena_thread(void) {
  pthread_t t;
  int rc = pthread_create(&t, NULL, arena_worker, NULL);
  check(rc == 0, __func__, "pthread_create", rc);
  pthread_join(t, NULL);
}

static void arena_truth(void) {
  check(g_arena_rw > 0 && g_arena_rw < HEAP_MAX, "arena_truth", "mprotect_size", (long)g_arena_rw);
  truth_add(g_arena_heap, g_arena_heap + g_arena_rw, "rw-", "arena_worker", "arena_worker", "libc",
            "glibc thread arena heap, committed by new_heap/grow_heap mprotects");
  truth_add(g_arena_heap + g_arena_rw, g_arena_heap + HEAP_MAX, "---", "arena_worker", "-", "libc",
            "glibc thread arena heap, reserved");
}

// ---- Single patterns.
#define GUARD C(2)
__attribute__((noinline)) static void guard_page(void) {
  long r = RAW_MMAP(GUARD, 4 * PG, RW, ANON, -1, 0);
  check(r == (long)GUARD, __func__, "mmap", r);
  long rc = RAW_MPROTECT(GUARD, PG, PROT_NONE);
  check(rc == 0, __func__, "mprotect NONE of the first page", rc);
}

#define PKEY C(3)
__attribute__((noinline)) static void pkey_reserve(void) {
  long r = RAW_MMAP(PKEY, 8 * PG, PROT_NONE, ANON | MAP_NORESERVE, -1, 0);
  check(r == (long)PKEY, __func__, "reservation", r);
}
__attribute__((noinline)) static void pkey_commit(void) {
  pkey_reserve();
  // pkey -1: no protection key, the same as mprotect (mm/mprotect.c).
  long rc = RAW_PKEY_MPROTECT(PKEY + 2 * PG, 4 * PG, RW, -1);
  check(rc == 0, __func__, "pkey_mprotect RW", rc);
  touch(PKEY + 2 * PG, 4 * PG, 7);
}

#define FREE C(4)
__attribute__((noinline)) static void madv_free(void) {
  long r = RAW_MMAP(FREE, 8 * PG, RW, ANON, -1, 0);
  check(r == (long)FREE, __func__, "mmap", r);
  touch(FREE, 8 * PG, 8);
  long rc = RAW_MADVISE(FREE + 2 * PG, 4 * PG, MADV_FREE);
  check(rc == 0, __func__, "MADV_FREE", rc);
}

#define RO C(5)
__attribute__((noinline)) static void make_readonly(void) {
  long r = RAW_MMAP(RO, 4 * PG, RW, ANON, -1, 0);
  check(r == (long)RO, __func__, "mmap", r);
  touch(RO, 4 * PG, 9);
  long a = RAW_MPROTECT(RO + PG, 2 * PG, PROT_READ);  // RW -> R: not a commit
  check(a == 0, __func__, "mprotect R", a);
  long b = RAW_MPROTECT(RO + 2 * PG, PG, RW);  // R -> RW: not a commit either
  check(b == 0, __func__, "mprotect RW again", b);
}

// mprotect over a mapped prefix and a hole: mm/mprotect.c do_mprotect_pkey
// applies the new prot VMA by VMA and returns -ENOMEM at the hole, so the
// prefix keeps the change. The truth takes the prot of that range from the
// maps (prot NULL). Also: failures that change nothing, and a madvise over a
// hole (applied to the mapped part, -ENOMEM).
#define PART C(6)
__attribute__((noinline)) static void mprotect_partial(void) {
  long r = RAW_MMAP(PART, 4 * PG, RW, ANON, -1, 0);
  check(r == (long)PART, __func__, "mmap", r);
  long a = RAW_MPROTECT(PART + 2 * PG, 4 * PG, PROT_READ);
  check(a == -12 /*ENOMEM*/, __func__, "mprotect into a hole", a);
  long b = RAW_MPROTECT(PART + 8 * PG, PG, PROT_READ);
  check(b == -12 /*ENOMEM*/, __func__, "mprotect of nothing", b);
  long c = RAW_MPROTECT(PART + 1, PG, PROT_READ);
  check(c == -22 /*EINVAL*/, __func__, "unaligned mprotect", c);
  long d = RAW_MADVISE(PART, 8 * PG, MADV_DONTNEED);
  check(d == -12 /*ENOMEM*/, __func__, "madvise into a hole", d);
}

static void single_truth(void) {
  truth_add(GUARD, GUARD + PG, "---", "guard_page", "-", "raw", "guard page (mprotect NONE)");
  truth_add(GUARD + PG, GUARD + 4 * PG, "rw-", "guard_page", "-", "raw", "guarded region");
  truth_add(PKEY, PKEY + 2 * PG, "---", "pkey_reserve", "-", "raw", "pkey reservation head");
  truth_add(PKEY + 2 * PG, PKEY + 6 * PG, "rw-", "pkey_reserve", "pkey_commit", "raw",
            "pkey_mprotect(pkey -1) RW");
  truth_add(PKEY + 6 * PG, PKEY + 8 * PG, "---", "pkey_reserve", "-", "raw", "pkey reservation tail");
  truth_add(FREE, FREE + 8 * PG, "rw-", "madv_free", "-", "raw", "MADV_FREE on pages 2-5: no prot change");
  truth_add(RO, RO + PG, "rw-", "make_readonly", "-", "raw", "untouched by the mprotects");
  truth_add(RO + PG, RO + 2 * PG, "r--", "make_readonly", "-", "raw", "mprotect RW->R");
  truth_add(RO + 2 * PG, RO + 4 * PG, "rw-", "make_readonly", "-", "raw",
            "page 2: RW->R->RW (no commit); page 3 untouched");
  truth_add(PART, PART + 2 * PG, "rw-", "mprotect_partial", "-", "raw", "before the failed mprotect's range");
  truth_add(PART + 2 * PG, PART + 4 * PG, NULL, "mprotect_partial", "-", "raw",
            "mapped prefix of an mprotect that returned -ENOMEM (prot from the maps)");
}

int main(int argc, char** argv) {
  if (argc != 4) {
    write_str(2, "usage: commit MAPSDIR TRUTHDIR NAME\n");
    return 2;
  }
  clr_reserve();
  clr_commit_gen0();
  clr_commit_loh();
  clr_decommit();
  clr_recommit();
  hs_reserve();
  hs_commit_young();
  hs_commit_old();
  hs_uncommit();
  hs_fixed_mixed();
  run_arena_thread();
  guard_page();
  pkey_commit();
  madv_free();
  make_readonly();
  mprotect_partial();

  clr_truth();
  hs_truth();
  arena_truth();
  single_truth();
  long pid = RAW_GETPID();
  long bad = truth_write(argv[2], argv[3], pid);
  check(bad == 0, "main", "truth rows vs /proc/self/maps", bad);
  static char path[4096];
  maps_path(path, sizeof(path), argv[1], argv[3], pid, ".maps");
  long rc = dump_maps_to(path);
  check(rc == 0, "main", "maps dump", rc);
  sys_exit_group(g_failures ? 1 : 0);
}
