// attach.c — a process that is already running when perf attaches to it
// (`perf trace record -p PID`), for the "pages that existed before the trace"
// rule of docs/design.md. Built with -O0 -g -fno-omit-frame-pointer.
//
//   usage: attach OUTDIR NAME
//
// Phase 1 (before perf attaches): maps regions A..E at fixed hints, grows brk,
// starts a worker thread that blocks on a pipe, writes OUTDIR/NAME.<pid>.pre.maps
// (its address space before the trace), then waits for SIGUSR1 in sigwait().
// record.sh waits for the .pre.maps file, attaches perf, then sends SIGUSR1.
// Phase 2 (traced): changes the pre-existing regions (partial munmap, MAP_FIXED
// over, mremap grow-by-move and shrink), grows and shrinks brk, maps new memory;
// the pre-existing worker thread (perf attached to it too) maps and unmaps.
// Last act: OUTDIR/NAME.<pid>.maps, then exit_group.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sys.h"

#define RW (PROT_READ | PROT_WRITE)
#define ANON (MAP_PRIVATE | MAP_ANONYMOUS)
#define A(k) (0x200000000000UL + (unsigned long)(k) * 0x10000000UL)

static int g_failures;
static int g_pipe[2];

static void check(int ok, const char* where, const char* what, long got) {
  if (ok) return;
  char msg[512];
  size_t pos = 0;
  msg[0] = 0;
  str_append(msg, sizeof(msg), &pos, "attach: ");
  str_append(msg, sizeof(msg), &pos, where);
  str_append(msg, sizeof(msg), &pos, ": ");
  str_append(msg, sizeof(msg), &pos, what);
  str_append(msg, sizeof(msg), &pos, " (got ");
  str_append_hex(msg, sizeof(msg), &pos, (unsigned long)got);
  str_append(msg, sizeof(msg), &pos, ")\n");
  write_str(2, msg);
  ++g_failures;
}

static long map_at(unsigned long addr, unsigned long len, int prot) {
  long p = RAW_MMAP(addr, len, prot, ANON, -1, 0);
  check(p == (long)addr, "map_at", "hint not honoured", p);
  return p;
}

// Phase 1: everything here happens before perf attaches ("before trace").
static long g_brk_before;
__attribute__((noinline)) static void setup_before_attach(void) {
  map_at(A(0), 8 * PG, RW);         // A: partly unmapped, partly MAP_FIXED over
  map_at(A(1), 4 * PG, RW);         // B: grown by a forced move
  map_at(A(1) + 4 * PG, PG, PROT_NONE);  // guard after B forces the move
  map_at(A(2), 6 * PG, RW);         // C: shrunk in place
  map_at(A(3), 4 * PG, RW);         // D: worker thread unmaps its head
  map_at(A(4), 2 * PG, PROT_READ);  // E: never touched during the trace
  long cur = RAW_BRK(0);
  g_brk_before = RAW_BRK(cur + 4 * PG);
  check(g_brk_before == cur + 4 * (long)PG, __func__, "brk grow", g_brk_before);
}

// Phase 2, main thread.
__attribute__((noinline)) static void change_after_attach(void) {
  check(RAW_MUNMAP(A(0) + 2 * PG, 2 * PG) == 0, __func__, "munmap middle of A", 0);
  long fixed = RAW_MMAP(A(0) + 5 * PG, 2 * PG, PROT_READ, ANON | MAP_FIXED, -1, 0);
  check(fixed == (long)(A(0) + 5 * PG), __func__, "MAP_FIXED over A", fixed);
  long moved = RAW_MREMAP(A(1), 4 * PG, 8 * PG, MREMAP_MAYMOVE, 0);
  check(moved > 0 && moved != (long)A(1), __func__, "B must move", moved);
  long shrunk = RAW_MREMAP(A(2), 6 * PG, 2 * PG, 0, 0);
  check(shrunk == (long)A(2), __func__, "shrink C", shrunk);
  // The first brk of the trace is a grow: the old break is only known from
  // what existed before.
  long grown = RAW_BRK(g_brk_before + 8 * PG);
  check(grown == g_brk_before + 8 * (long)PG, __func__, "brk grow", grown);
  long shrink = RAW_BRK(g_brk_before + 6 * PG);
  check(shrink == g_brk_before + 6 * (long)PG, __func__, "brk shrink", shrink);
  long fresh = RAW_MMAP(0, 5 * PG, RW, ANON, -1, 0);
  check(fresh > 0, __func__, "new mmap", fresh);
  map_at(A(5), 3 * PG, RW);
}

// Phase 2, worker thread (existed before the attach).
__attribute__((noinline)) static void worker_after_attach(void) {
  check(RAW_MUNMAP(A(3), PG) == 0, "worker_after_attach", "munmap head of D", 0);
  long own = RAW_MMAP(A(6), 2 * PG, RW, ANON, -1, 0);
  check(own == (long)A(6), "worker_after_attach", "worker mmap", own);
}

static void* worker(void* unused) {
  (void)unused;
  char byte;
  // Blocks until main is released; perf attaches to this thread meanwhile.
  long n = RAW_READ(g_pipe[0], &byte, 1);
  check(n == 1, "worker", "pipe read", n);
  worker_after_attach();
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    write_str(2, "usage: attach OUTDIR NAME\n");
    return 2;
  }
  const char* outdir = argv[1];
  const char* name = argv[2];
  // Block SIGUSR1 before creating the thread so only sigwait() consumes it.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  check(pipe(g_pipe) == 0, "main", "pipe", 0);
  pthread_t tid;
  check(pthread_create(&tid, NULL, worker, NULL) == 0, "main", "pthread_create", 0);
  setup_before_attach();

  static char path[4096];
  long pid = RAW_GETPID();
  maps_path(path, sizeof(path), outdir, name, pid, ".pre.maps");
  check(dump_maps_to(path) == 0, "main", "pre maps dump", 0);

  int sig = 0;
  sigwait(&set, &sig);  // record.sh attaches perf, then sends SIGUSR1

  change_after_attach();
  char byte = 1;
  RAW_WRITE(g_pipe[1], &byte, 1);
  pthread_join(tid, NULL);

  maps_path(path, sizeof(path), outdir, name, pid, ".maps");
  long rc = dump_maps_to(path);
  check(rc == 0, "main", "maps dump", rc);
  sys_exit_group(g_failures ? 1 : 0);
}
