// rules.c — exercises every replay rule of docs/design.md ("Replay rules"),
// each from its own named function, so a recorded trace has one known stack
// per rule. Built with -O0 -g -fno-omit-frame-pointer (see traces/record.sh).
//
//   usage: rules OUTDIR NAME                 (the traced program)
//          rules --exec-child OUTDIR NAME    (what the fork+exec child runs)
//          rules --storm OUTDIR NAME N       (N mmap calls: the lost-events fixture)
//
// Every process it creates writes its own /proc/self/maps as its LAST act to
// OUTDIR/NAME.<pid>.maps, then calls exit_group: the file is the process's end
// state, which `pageblame maps` must reproduce page for page.
//
// Most scenarios work at fixed *hint* addresses (B(k) below, never MAP_FIXED
// unless the rule is about MAP_FIXED) so that neighbours are known: an
// in-place mremap grow needs free space after the region, a forced move needs
// a guard after it. Each check() that fails prints to stderr and makes the
// exit status 1; record.sh refuses a run with failures.
//
// Syscalls go through sys.h's inline `syscall` instruction, so the leaf frame
// of every recorded stack is the do_* function itself (see sys.h for why).
// do_mmap_via_libc and do_sbrk_libc deliberately go through libc instead, to
// give the trace realistic libc-leaf stacks.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sys.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

#define RW (PROT_READ | PROT_WRITE)
#define ANON (MAP_PRIVATE | MAP_ANONYMOUS)
// Scenario k's own 256 MiB neighbourhood, far from where the kernel places
// anything by itself (libraries and kernel-chosen mmaps live near 0x7f...).
#define B(k) (0x100000000000UL + (unsigned long)(k) * 0x10000000UL)

static const char* g_outdir;
static const char* g_name;
static int g_failures;

static void check(int ok, const char* where, const char* what, long got) {
  if (ok) return;
  char msg[512];
  size_t pos = 0;
  msg[0] = 0;
  str_append(msg, sizeof(msg), &pos, "rules: ");
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

// Rule: mmap creates [ret, ret+len), len rounded up to pages.
__attribute__((noinline)) static unsigned long do_mmap_anon(void) {
  long p = RAW_MMAP(0, 16 * PG, RW, ANON, -1, 0);
  check(p > 0, __func__, "16-page anonymous mmap failed", p);
  touch((unsigned long)p, 16 * PG, 1);
  // 5000 bytes: the kernel rounds the length up to 2 pages.
  long q = RAW_MMAP(0, 5000, PROT_READ, ANON, -1, 0);
  check(q > 0, __func__, "5000-byte mmap failed", q);
  // Shared anonymous memory shows up in maps as "/dev/zero (deleted)".
  long s = RAW_MMAP(0, 2 * PG, RW, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  check(s > 0, __func__, "shared anonymous mmap failed", s);
  touch((unsigned long)s, 2 * PG, 2);
  return (unsigned long)p;
}

// Rule: a non-fixed address is only a hint; the result is what counts.
__attribute__((noinline)) static void do_mmap_hint(void) {
  long p = RAW_MMAP(B(1), 4 * PG, RW, ANON, -1, 0);
  check(p == (long)B(1), __func__, "hint not honoured", p);
}

// Same rule through libc's wrapper: the stack's leaf is libc's __mmap. With
// frame-pointer unwinding the wrapper's caller (mmap_via_libc_shim) is
// skipped, so the chain reads __mmap <- do_mmap_via_libc <- main.
__attribute__((noinline)) static void* mmap_via_libc_shim(size_t len) {
  return mmap(NULL, len, RW, ANON, -1, 0);
}
__attribute__((noinline)) static void do_mmap_via_libc(void) {
  void* p = mmap_via_libc_shim(3 * PG);
  check(p != MAP_FAILED, __func__, "libc mmap failed", (long)p);
}

// Rule: file-backed mappings (private read-only, shared read-write at an
// offset, private at an offset) of a small file; the fd is closed after.
static char g_data_path[4096];
__attribute__((noinline)) static void do_mmap_file(void) {
  size_t pos = 0;
  g_data_path[0] = 0;
  str_append(g_data_path, sizeof(g_data_path), &pos, "/tmp/pageblame-rules.");
  str_append_dec(g_data_path, sizeof(g_data_path), &pos, (unsigned long)RAW_GETPID());
  str_append(g_data_path, sizeof(g_data_path), &pos, ".dat");
  long fd = RAW_OPEN(g_data_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  check(fd >= 0, __func__, "cannot create data file", fd);
  static char page[PG];
  for (int i = 0; i < 2; ++i) {
    memset(page, 'a' + i, sizeof(page));
    RAW_WRITE(fd, page, PG);
  }
  RAW_WRITE(fd, page, 100);  // 2 pages + 100 bytes: the mapping is 3 pages
  long whole = RAW_MMAP(0, 2 * PG + 100, PROT_READ, MAP_PRIVATE, fd, 0);
  check(whole > 0, __func__, "private file mmap failed", whole);
  long shared = RAW_MMAP(0, PG, RW, MAP_SHARED, fd, PG);
  check(shared > 0, __func__, "shared file mmap failed", shared);
  long tail = RAW_MMAP(0, PG, PROT_READ, MAP_PRIVATE, fd, 2 * PG);
  check(tail > 0, __func__, "offset file mmap failed", tail);
  RAW_CLOSE(fd);
}

// Rule: MAP_FIXED replaces whatever was there — inside one region, and across
// a region's end into a hole.
__attribute__((noinline)) static void do_map_fixed_over(void) {
  long r = RAW_MMAP(B(2), 8 * PG, RW, ANON, -1, 0);
  check(r == (long)B(2), __func__, "base mmap not at hint", r);
  touch(B(2), 8 * PG, 3);
  long mid = RAW_MMAP(B(2) + 2 * PG, 3 * PG, PROT_READ, ANON | MAP_FIXED, -1, 0);
  check(mid == (long)(B(2) + 2 * PG), __func__, "MAP_FIXED in the middle", mid);
  long over = RAW_MMAP(B(2) + 6 * PG, 4 * PG, RW, ANON | MAP_FIXED, -1, 0);
  check(over == (long)(B(2) + 6 * PG), __func__, "MAP_FIXED over the end", over);
  // Reserve-then-commit, as GCs and JITs do: a PROT_NONE reservation, then
  // MAP_FIXED commits of part of it.
  long res = RAW_MMAP(B(2) + 64 * PG, 32 * PG, PROT_NONE,
                      ANON | MAP_NORESERVE, -1, 0);
  check(res == (long)(B(2) + 64 * PG), __func__, "reservation not at hint", res);
  long commit = RAW_MMAP(B(2) + 72 * PG, 8 * PG, RW, ANON | MAP_FIXED, -1, 0);
  check(commit == (long)(B(2) + 72 * PG), __func__, "commit", commit);
}

// Rule: MAP_FIXED_NOREPLACE succeeds on free space and fails with EEXIST
// (changing nothing) over an existing mapping.
__attribute__((noinline)) static void do_map_fixed_noreplace(void) {
  long a = RAW_MMAP(B(3), 2 * PG, RW, ANON | MAP_FIXED_NOREPLACE, -1, 0);
  check(a == (long)B(3), __func__, "NOREPLACE on free space", a);
  long b = RAW_MMAP(B(3) + PG, 2 * PG, PROT_READ, ANON | MAP_FIXED_NOREPLACE, -1, 0);
  check(b == -17 /*EEXIST*/, __func__, "NOREPLACE over a mapping must fail", b);
}

// Rule: munmap removes any part of any region, splitting regions.
__attribute__((noinline)) static void do_partial_munmap(void) {
  long r = RAW_MMAP(B(4), 10 * PG, RW, ANON, -1, 0);
  check(r == (long)B(4), __func__, "base mmap", r);
  long s = RAW_MMAP(B(4) + 16 * PG, 4 * PG, PROT_READ, ANON | MAP_FIXED_NOREPLACE, -1, 0);
  check(s == (long)(B(4) + 16 * PG), __func__, "second region", s);
  check(RAW_MUNMAP(B(4) + 3 * PG, 2 * PG) == 0, __func__, "middle", 0);  // split
  check(RAW_MUNMAP(B(4), PG) == 0, __func__, "head", 0);
  check(RAW_MUNMAP(B(4) + 9 * PG, PG) == 0, __func__, "tail", 0);
  // Length not a page multiple: rounds up to one page (page 5).
  check(RAW_MUNMAP(B(4) + 5 * PG, 100) == 0, __func__, "100 bytes", 0);
  // One call across r's last page, the hole and s's first two pages.
  check(RAW_MUNMAP(B(4) + 8 * PG, 10 * PG) == 0, __func__, "across a hole", 0);
  // Left: r pages 1-2 and 6-7, s pages 18-19.
}

// Rule: unmapping nothing is fine (returns 0, changes nothing).
__attribute__((noinline)) static void do_munmap_nothing(void) {
  long rc = RAW_MUNMAP(B(5), 4 * PG);
  check(rc == 0, __func__, "munmap of an empty range", rc);
}

// Rule: a call whose exit says failure changes nothing.
__attribute__((noinline)) static void do_failed_mmap(unsigned long victim) {
  long a = RAW_MMAP(0, PG, PROT_READ, MAP_PRIVATE, -1, 0);  // no MAP_ANONYMOUS
  check(a == -9 /*EBADF*/, __func__, "bad fd", a);
  long b = RAW_MMAP(0, 0, PROT_READ, ANON, -1, 0);
  check(b == -22 /*EINVAL*/, __func__, "zero length", b);
  long c = RAW_MMAP(0, 1UL << 50, PROT_READ, ANON, -1, 0);
  check(c == -12 /*ENOMEM*/, __func__, "too large", c);
  // A MAP_FIXED that fails (bad fd) must not remove what is at its address:
  // the kernel checks the fd before touching the address space.
  long d = RAW_MMAP(victim, 4 * PG, PROT_READ, MAP_PRIVATE | MAP_FIXED, 12345, 0);
  check(d == -9 /*EBADF*/, __func__, "failed MAP_FIXED", d);
}

__attribute__((noinline)) static void do_failed_munmap(unsigned long victim) {
  long a = RAW_MUNMAP(victim + 1, PG);  // unaligned address
  check(a == -22 /*EINVAL*/, __func__, "unaligned munmap", a);
}

// Rule: brk — growth creates pages, shrink removes them, pages grown by
// different calls keep their own stacks.
__attribute__((noinline)) static long brk_grow_more(long to) { return RAW_BRK(to); }
__attribute__((noinline)) static void do_brk_grow_shrink(void) {
  long cur = RAW_BRK(0);  // query: not the initial break (ld.so asked first)
  check(cur > 0, __func__, "brk(0)", cur);
  long a = RAW_BRK(cur + 4 * PG);
  check(a == cur + 4 * (long)PG, __func__, "grow 4 pages", a);
  touch((unsigned long)cur, 4 * PG, 4);
  long b = brk_grow_more(cur + 12 * PG);  // pages 4-11: brk_grow_more's stack
  check(b == cur + 12 * (long)PG, __func__, "grow 8 more", b);
  long c = RAW_BRK(cur + 10 * PG);  // shrink: pages 10-11 go away
  check(c == cur + 10 * (long)PG, __func__, "shrink 2", c);
  // A break that is not page aligned: the mapping ends at the next page.
  long d = RAW_BRK(cur + 11 * PG + 100);
  check(d == cur + 11 * (long)PG + 100, __func__, "unaligned grow", d);
  // brk never returns an errno: a refused request returns the old break.
  long e = RAW_BRK(1);
  check(e == d, __func__, "refused brk returns the current break", e);
  long f = RAW_BRK(cur + 11 * PG + 200);  // same page: no page change
  check(f == cur + 11 * (long)PG + 200, __func__, "grow within a page", f);
}

// The same rule through libc: sbrk() calls brk(0) once, then brk(new).
// With libc built without frame pointers the chain usually stops at __brk.
__attribute__((noinline)) static void do_sbrk_libc(void) {
  void* old = sbrk(3 * PG);
  check(old != (void*)-1, __func__, "sbrk", (long)old);
}

// Rule: mremap grow in place creates the new tail (origin: this mremap).
__attribute__((noinline)) static void do_mremap_grow_inplace(void) {
  long r = RAW_MMAP(B(6), 2 * PG, RW, ANON, -1, 0);
  check(r == (long)B(6), __func__, "base", r);
  touch(B(6), 2 * PG, 6);
  long g = RAW_MREMAP(B(6), 2 * PG, 6 * PG, 0, 0);
  check(g == (long)B(6), __func__, "grow in place", g);
  // MREMAP_MAYMOVE with room after the region still grows in place.
  long r2 = RAW_MMAP(B(6) + 64 * PG, 2 * PG, RW, ANON, -1, 0);
  check(r2 == (long)(B(6) + 64 * PG), __func__, "second base", r2);
  long g2 = RAW_MREMAP(r2, 2 * PG, 4 * PG, MREMAP_MAYMOVE, 0);
  check(g2 == r2, __func__, "MAYMOVE grow stays in place", g2);
}

// Rule: mremap shrink in place drops the tail.
__attribute__((noinline)) static void do_mremap_shrink(void) {
  long r = RAW_MMAP(B(7), 6 * PG, RW, ANON, -1, 0);
  check(r == (long)B(7), __func__, "base", r);
  long s = RAW_MREMAP(B(7), 6 * PG, 3 * PG, 0, 0);
  check(s == (long)B(7), __func__, "shrink", s);
}

// Rule: a move (MREMAP_MAYMOVE) moves the pages; they keep their history.
__attribute__((noinline)) static unsigned long do_mremap_maymove(void) {
  long r = RAW_MMAP(B(8), 2 * PG, RW, ANON, -1, 0);
  check(r == (long)B(8), __func__, "base", r);
  touch(B(8), 2 * PG, 8);
  // A guard right after the region forces the grow to move.
  long guard = RAW_MMAP(B(8) + 2 * PG, PG, PROT_NONE, ANON | MAP_FIXED_NOREPLACE, -1, 0);
  check(guard == (long)(B(8) + 2 * PG), __func__, "guard", guard);
  long m = RAW_MREMAP(B(8), 2 * PG, 8 * PG, MREMAP_MAYMOVE, 0);
  check(m > 0 && m != (long)B(8), __func__, "must move", m);
  check(((volatile char*)m)[0] == 8, __func__, "moved data", m);
  return (unsigned long)m;
}

// Rule: MREMAP_FIXED moves to the target and unmaps what was there.
__attribute__((noinline)) static void do_mremap_fixed(void) {
  long src = RAW_MMAP(B(10), 4 * PG, RW, ANON, -1, 0);
  check(src == (long)B(10), __func__, "src", src);
  touch(B(10), 4 * PG, 10);
  long dst = RAW_MMAP(B(11), 8 * PG, PROT_READ, ANON, -1, 0);
  check(dst == (long)B(11), __func__, "dst", dst);
  long m = RAW_MREMAP(B(10), 4 * PG, 4 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, B(11) + 2 * PG);
  check(m == (long)(B(11) + 2 * PG), __func__, "onto the middle of dst", m);
  // Moving the middle of a region splits the source.
  long src2 = RAW_MMAP(B(12), 6 * PG, RW, ANON, -1, 0);
  check(src2 == (long)B(12), __func__, "src2", src2);
  long m2 = RAW_MREMAP(B(12) + 2 * PG, 2 * PG, 2 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, B(13));
  check(m2 == (long)B(13), __func__, "middle moved", m2);
  // Move and grow: 2 pages keep their history, 3 new pages are this mremap's.
  long src3 = RAW_MMAP(B(14), 2 * PG, RW, ANON, -1, 0);
  check(src3 == (long)B(14), __func__, "src3", src3);
  long m3 = RAW_MREMAP(B(14), 2 * PG, 5 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, B(14) + 32 * PG);
  check(m3 == (long)(B(14) + 32 * PG), __func__, "move and grow", m3);
}

// Rule: MREMAP_DONTUNMAP leaves the source mapped (its pages become empty).
__attribute__((noinline)) static void do_mremap_dontunmap(void) {
  long src = RAW_MMAP(B(15), 4 * PG, RW, ANON, -1, 0);
  check(src == (long)B(15), __func__, "src", src);
  touch(B(15), 4 * PG, 15);
  long m = RAW_MREMAP(B(15), 4 * PG, 4 * PG, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, 0);
  check(m > 0 && m != (long)B(15), __func__, "DONTUNMAP move", m);
  long src2 = RAW_MMAP(B(16), 2 * PG, RW, ANON, -1, 0);
  check(src2 == (long)B(16), __func__, "src2", src2);
  long m2 = RAW_MREMAP(B(16), 2 * PG, 2 * PG,
                       MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, B(16) + 16 * PG);
  check(m2 == (long)(B(16) + 16 * PG), __func__, "DONTUNMAP|FIXED", m2);
}

// Rule: failed mremaps change nothing.
__attribute__((noinline)) static void do_failed_mremap(void) {
  long a = RAW_MREMAP(B(17), PG, 2 * PG, 0, 0);  // nothing mapped there
  check(a == -14 /*EFAULT*/, __func__, "mremap of nothing", a);
  long r = RAW_MMAP(B(18), 2 * PG, RW, ANON, -1, 0);
  check(r == (long)B(18), __func__, "base", r);
  long guard = RAW_MMAP(B(18) + 2 * PG, PG, PROT_NONE, ANON | MAP_FIXED_NOREPLACE, -1, 0);
  check(guard == (long)(B(18) + 2 * PG), __func__, "guard", guard);
  long b = RAW_MREMAP(B(18), 2 * PG, 4 * PG, 0, 0);  // no room, may not move
  check(b == -12 /*ENOMEM*/, __func__, "blocked in-place grow", b);
  long c = RAW_MREMAP(B(18), 2 * PG, 4 * PG, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, 0);
  // DONTUNMAP requires old_len == new_len (mm/mremap.c): EINVAL.
  check(c == -22 /*EINVAL*/, __func__, "DONTUNMAP with new size", c);
}

// Rule: threads share their process's space; enter/exit pair per tid while
// two threads' calls interleave. Worker 1 also mallocs, which makes glibc
// create a thread arena (a 64 MiB-aligned reservation trimmed with munmap).
struct worker_arg {
  int index;
  unsigned long shared_region;  // made by main; worker 0 unmaps a page of it
  pthread_barrier_t* barrier;
};

__attribute__((noinline)) static void thread_mmap_burst(int index) {
  // 20 map+unmap pairs, 10 kept: interleaves with the other worker.
  for (int i = 0; i < 20; ++i) {
    long p = RAW_MMAP(0, (unsigned long)(index + 1) * PG, RW, ANON, -1, 0);
    check(p > 0, __func__, "burst mmap", p);
    if (i % 2) RAW_MUNMAP(p, (unsigned long)(index + 1) * PG);
    sched_yield();
  }
}

static void* thread_worker(void* opaque) {
  struct worker_arg* arg = (struct worker_arg*)opaque;
  pthread_barrier_wait(arg->barrier);
  thread_mmap_burst(arg->index);
  long own = RAW_MMAP(B(20 + arg->index), 4 * PG, RW, ANON, -1, 0);
  check(own == (long)B(20 + arg->index), __func__, "own region", own);
  long g = RAW_MREMAP(own, 4 * PG, 6 * PG, 0, 0);
  check(g == own, __func__, "grow own region", g);
  if (arg->index == 0) {
    long rc = RAW_MUNMAP(arg->shared_region + 2 * PG, PG);  // main's region
    check(rc == 0, __func__, "unmap a page of main's region", rc);
  } else {
    void* volatile heap = malloc(1000);  // thread arena
    check(heap != NULL, __func__, "malloc in thread", 0);
  }
  return NULL;
}

__attribute__((noinline)) static void do_threads(void) {
  long shared = RAW_MMAP(B(19), 4 * PG, RW, ANON, -1, 0);
  check(shared == (long)B(19), __func__, "shared region", shared);
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, 2);
  pthread_t tids[2];
  struct worker_arg args[2];
  for (int i = 0; i < 2; ++i) {
    args[i].index = i;
    args[i].shared_region = (unsigned long)shared;
    args[i].barrier = &barrier;
    int rc = pthread_create(&tids[i], NULL, thread_worker, &args[i]);
    check(rc == 0, __func__, "pthread_create", rc);
  }
  for (int i = 0; i < 2; ++i) pthread_join(tids[i], NULL);
  pthread_barrier_destroy(&barrier);
}

// Rule: fork copies the parent's space at that moment; the child then changes
// its own copy (unmaps part of an inherited region, moves another, grows its
// heap, maps its own memory) and dumps its own maps.
__attribute__((noinline)) static void child_work(unsigned long inherited,
                                                 unsigned long moved) {
  long own = RAW_MMAP(B(24), 3 * PG, RW, ANON, -1, 0);
  check(own == (long)B(24), __func__, "child's own region", own);
  check(RAW_MUNMAP(inherited, 2 * PG) == 0, __func__, "unmap inherited pages", 0);
  long m = RAW_MREMAP(moved, 8 * PG, 8 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, B(25));
  check(m == (long)B(25), __func__, "move inherited region", m);
  long cur = RAW_BRK(0);
  long grown = RAW_BRK(cur + 2 * PG);
  check(grown == cur + 2 * (long)PG, __func__, "child brk", grown);
}

__attribute__((noinline)) static void do_fork_child(unsigned long inherited,
                                                    unsigned long moved) {
  pid_t pid = fork();
  check(pid >= 0, __func__, "fork", pid);
  if (pid == 0) {
    child_work(inherited, moved);
    static char path[4096];
    maps_path(path, sizeof(path), g_outdir, g_name, RAW_GETPID(), ".maps");
    long rc = dump_maps_to(path);
    check(rc == 0, __func__, "child maps dump", rc);
    sys_exit_group(g_failures ? 1 : 0);
  }
  // The parent changes its own copy after the fork: the child keeps these
  // pages, the parent loses them.
  check(RAW_MUNMAP(inherited + 4 * PG, 2 * PG) == 0, __func__, "parent unmap", 0);
  int status = 0;
  waitpid(pid, &status, 0);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 0, __func__, "child status", status);
}

// Rule: exec starts an empty space. The child re-executes this binary with
// --exec-child; that image maps a little and dumps its maps.
static char g_self_exe[4096];
__attribute__((noinline)) static void do_fork_exec(void) {
  // The real path, not /proc/self/exe, so the child's comm is "rules".
  long n = sc6(SYS_readlink, (long)"/proc/self/exe", (long)g_self_exe,
               sizeof(g_self_exe) - 1, 0, 0, 0);
  check(n > 0, __func__, "readlink /proc/self/exe", n);
  g_self_exe[n > 0 ? n : 0] = 0;
  pid_t pid = fork();
  check(pid >= 0, __func__, "fork", pid);
  if (pid == 0) {
    // Mapped in the forked copy, then discarded by the exec.
    RAW_MMAP(B(26), 2 * PG, RW, ANON, -1, 0);
    char* const argv[] = {(char*)"rules", (char*)"--exec-child", (char*)g_outdir,
                          (char*)g_name, NULL};
    execv(g_self_exe, argv);
    sys_exit_group(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 0, __func__, "exec child status",
        status);
}

__attribute__((noinline)) static void exec_child_work(void) {
  long a = RAW_MMAP(B(27), 4 * PG, RW, ANON, -1, 0);
  check(a == (long)B(27), __func__, "exec child mmap", a);
  check(RAW_MUNMAP(B(27) + PG, PG) == 0, __func__, "exec child munmap", 0);
  check(RAW_MMAP(B(26), PG, PROT_READ, ANON, -1, 0) == (long)B(26), __func__,
        "B(26) is free again after exec", 0);
}

// Not a replay rule but its precondition: a burst of calls faster than perf
// drains a deliberately tiny buffer (`perf record -m 1`) makes the kernel drop
// samples, and perf writes PERF_RECORD_LOST / LOST_SAMPLES. Every 8th mapping
// is kept, so the lost events change the end state.
__attribute__((noinline)) static void do_mmap_storm(long n) {
  for (long i = 0; i < n; ++i) {
    long p = RAW_MMAP(0, PG, RW, ANON, -1, 0);
    if (i % 8) RAW_MUNMAP(p, PG);
  }
}

static void dump_and_exit(void) {
  static char path[4096];
  maps_path(path, sizeof(path), g_outdir, g_name, RAW_GETPID(), ".maps");
  long rc = dump_maps_to(path);
  check(rc == 0, __func__, "maps dump", rc);
  sys_exit_group(g_failures ? 1 : 0);
}

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "--exec-child") == 0) {
    g_outdir = argv[2];
    g_name = argv[3];
    exec_child_work();
    dump_and_exit();
  }
  if (argc == 5 && strcmp(argv[1], "--storm") == 0) {
    g_outdir = argv[2];
    g_name = argv[3];
    do_mmap_storm(strtol(argv[4], NULL, 10));
    dump_and_exit();
  }
  if (argc != 3) {
    write_str(2, "usage: rules OUTDIR NAME | --exec-child OUTDIR NAME | --storm OUTDIR NAME N\n");
    return 2;
  }
  g_outdir = argv[1];
  g_name = argv[2];

  unsigned long anon = do_mmap_anon();
  do_mmap_hint();
  do_mmap_via_libc();
  do_mmap_file();
  do_map_fixed_over();
  do_map_fixed_noreplace();
  do_partial_munmap();
  do_munmap_nothing();
  do_failed_mmap(B(1));
  do_failed_munmap(B(1));
  do_brk_grow_shrink();
  do_sbrk_libc();
  do_mremap_grow_inplace();
  do_mremap_shrink();
  unsigned long moved = do_mremap_maymove();
  do_mremap_fixed();
  do_mremap_dontunmap();
  do_failed_mremap();
  do_threads();
  do_fork_child(anon, moved);
  do_fork_exec();
  dump_and_exit();
}
