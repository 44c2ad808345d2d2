// churn.c — the benchmark workload: THREADS threads, each doing ITERS memory
// syscalls (mmap, munmap, mremap grow-in-place / shrink / move, brk) from a
// call depth of 10..40, then one /proc/self/maps snapshot so a benchmark run
// can also check that `pageblame maps` reproduces the end state.
//
//   usage: churn OUTDIR NAME THREADS ITERS [SEED]
//   e.g.   bench/out/churn bench/out churn 4 100000   (under perf trace record)
//
// Built -O1 -fno-omit-frame-pointer (bench/run.sh) so perf's frame-pointer
// unwinder sees every level. -O1 does not enable sibling-call optimisation
// (-foptimize-sibling-calls is -O2), and the walkers still do work after
// their recursive call, so the recursion really leaves one frame per level.
//
// Each thread also grows a glibc-style arena: one PROT_NONE
// reservation at ARENA(t) + 512 MiB, made usable one mprotect(RW) at a time
// from its top, and shrunk the way glibc's shrink_heap does it: madvise
// DONTNEED of the top pages, or (every fourth shrink) a MAP_FIXED PROT_NONE
// mmap over them, as CoreCLR and HotSpot decommit. About a fifth of all
// calls are arena calls, so replay's prot splitting is in the measured mix.
//
// Stacks: op_X <- run_op <- walk_a/walk_b x depth <- worker <- start_thread.
// With 8 op functions, 31 depths and 3 walk patterns (all a, all b, a/b
// alternating) the trace has about 8*31*3 = 744 unique call chains, each
// repeated many times — the shape of a busy service's allocator traffic.
//
// Syscalls go through traces/src/sys.h's inline `syscall` instruction so the
// sample IP is in the op_X function itself (Debian's libc has no frame
// pointers; see sys.h). No malloc and no stdio once the threads run: glibc's
// malloc could move the break under the brk helper below.
//
// Address layout: thread t owns a 1 GiB arena at ARENA(t), cut into NSLOTS
// slots of SLOT_PAGES pages. A slot holds at most one region, always at the
// slot's base and at most MAX_PAGES long, so there is always free room after
// it for an in-place mremap grow. mmap uses the slot base as a hint (no
// MAP_FIXED) and checks that the kernel honoured it. Moves use
// MREMAP_MAYMOVE|MREMAP_FIXED into an empty slot of the same thread.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "../traces/src/sys.h"

#define ARENA(t) (0x200000000000UL + (unsigned long)(t) * 0x40000000UL)
#define NSLOTS 256
#define SLOT_PAGES 64
#define MAX_PAGES 40
#define MAX_THREADS 64
#define HEAP_MAX_PAGES 4096
#define MIN_DEPTH 10
#define MAX_DEPTH 40
#define HEAP_ARENA(t) (ARENA(t) + 0x20000000UL)
#define HEAP_ARENA_PAGES 16384  // 64 MiB, glibc's HEAP_MAX_SIZE

enum Op {
  OP_MMAP_ANON,
  OP_MMAP_FILE,
  OP_MUNMAP,
  OP_MUNMAP_TAIL,
  OP_MREMAP_GROW,
  OP_MREMAP_SHRINK,
  OP_MREMAP_MOVE,
  OP_BRK,
  OP_ARENA_GROW,
  OP_ARENA_SHRINK,
};

struct Thread {
  int index;
  unsigned long iters;
  unsigned long rng;
  unsigned long pages[NSLOTS];  // 0: slot empty
  unsigned long arena_top;      // pages of the arena made RW from its base
  unsigned long shrinks;
  long failures;
};

// What one iteration does, chosen before descending so the leaf does no
// decision making that would differ between stacks of the same shape.
struct Call {
  struct Thread* t;
  enum Op op;
  int slot;
  int other;  // OP_MREMAP_MOVE: the empty target slot
  long pages; // size or size change, in pages (OP_BRK: signed)
  int pattern;  // 0: walk_a only, 1: walk_b only, 2: alternate
};

static int g_file_fd = -1;
static pthread_mutex_t g_brk_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long g_brk_base, g_brk_cur;
static long g_failures;

static unsigned long next_rand(unsigned long* s) {  // xorshift64
  unsigned long x = *s;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *s = x;
}

static unsigned long slot_base(const struct Thread* t, int slot) {
  return ARENA(t->index) + (unsigned long)slot * SLOT_PAGES * PG;
}

static void fail(struct Thread* t, const char* what, long got) {
  char msg[256];
  size_t pos = 0;
  msg[0] = 0;
  str_append(msg, sizeof(msg), &pos, "churn: ");
  str_append(msg, sizeof(msg), &pos, what);
  str_append(msg, sizeof(msg), &pos, " (got ");
  str_append_hex(msg, sizeof(msg), &pos, (unsigned long)got);
  str_append(msg, sizeof(msg), &pos, ")\n");
  if (t->failures++ < 5) write_str(2, msg);
}

// ---- the leaves: each issues its syscall from its own frame -------------

// After an mmap at a slot's hint: the slot now holds c->pages, or the hint
// was not honoured (then undo it; every hint is checked). Called after the
// syscall, so the leaves' stacks stay their own.
static void mapped_at_hint(struct Call* c, unsigned long want, long p, const char* what) {
  if (p != (long)want) {
    fail(c->t, what, p);
    if (p > 0) RAW_MUNMAP(p, c->pages * PG);
    return;
  }
  c->t->pages[c->slot] = c->pages;
}

__attribute__((noinline)) static void op_mmap_anon(struct Call* c) {
  unsigned long want = slot_base(c->t, c->slot);
  int prot = (c->pages & 1) ? PROT_READ : PROT_READ | PROT_WRITE;
  long p = RAW_MMAP(want, c->pages * PG, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  mapped_at_hint(c, want, p, "mmap hint not honoured");
}

__attribute__((noinline)) static void op_mmap_file(struct Call* c) {
  unsigned long want = slot_base(c->t, c->slot);
  // Past the end of the file is fine to map (only touching it would fault).
  long p = RAW_MMAP(want, c->pages * PG, PROT_READ, MAP_PRIVATE, g_file_fd, 0);
  mapped_at_hint(c, want, p, "file mmap hint not honoured");
}

__attribute__((noinline)) static void op_munmap(struct Call* c) {
  long r = RAW_MUNMAP(slot_base(c->t, c->slot), c->t->pages[c->slot] * PG);
  if (r != 0) fail(c->t, "munmap", r);
  c->t->pages[c->slot] = 0;
}

__attribute__((noinline)) static void op_munmap_tail(struct Call* c) {
  unsigned long have = c->t->pages[c->slot];
  unsigned long base = slot_base(c->t, c->slot);
  long r = RAW_MUNMAP(base + (have - c->pages) * PG, c->pages * PG);
  if (r != 0) fail(c->t, "munmap tail", r);
  c->t->pages[c->slot] = have - c->pages;
}

__attribute__((noinline)) static void op_mremap_grow(struct Call* c) {
  unsigned long have = c->t->pages[c->slot];
  unsigned long base = slot_base(c->t, c->slot);
  long r = RAW_MREMAP(base, have * PG, (have + c->pages) * PG, 0, 0);
  if (r != (long)base) {
    fail(c->t, "mremap grow in place", r);
    return;
  }
  c->t->pages[c->slot] = have + c->pages;
}

__attribute__((noinline)) static void op_mremap_shrink(struct Call* c) {
  unsigned long have = c->t->pages[c->slot];
  unsigned long base = slot_base(c->t, c->slot);
  long r = RAW_MREMAP(base, have * PG, (have - c->pages) * PG, 0, 0);
  if (r != (long)base) {
    fail(c->t, "mremap shrink", r);
    return;
  }
  c->t->pages[c->slot] = have - c->pages;
}

__attribute__((noinline)) static void op_mremap_move(struct Call* c) {
  unsigned long have = c->t->pages[c->slot];
  unsigned long from = slot_base(c->t, c->slot), to = slot_base(c->t, c->other);
  // Moves and grows by c->pages at once (both may be 0 extra pages).
  long r = RAW_MREMAP(from, have * PG, (have + c->pages) * PG,
                      MREMAP_MAYMOVE | MREMAP_FIXED, to);
  if (r != (long)to) {
    fail(c->t, "mremap move", r);
    return;
  }
  c->t->pages[c->other] = have + c->pages;
  c->t->pages[c->slot] = 0;
}

// The one brk helper: threads share the break, so every change goes through
// this mutex and stays within [g_brk_base, g_brk_base + HEAP_MAX_PAGES).
__attribute__((noinline)) static void op_brk(struct Call* c) {
  pthread_mutex_lock(&g_brk_lock);
  long target = (long)g_brk_cur + c->pages * (long)PG;
  if (target < (long)g_brk_base) target = (long)g_brk_base;
  if (target > (long)(g_brk_base + HEAP_MAX_PAGES * PG)) {
    target = (long)(g_brk_base + HEAP_MAX_PAGES * PG);
  }
  long r = RAW_BRK(target);
  if (r != target) {
    fail(c->t, "brk", r);
  } else {
    g_brk_cur = (unsigned long)r;
  }
  pthread_mutex_unlock(&g_brk_lock);
}

// glibc's grow_heap: the next pages of the reservation become RW.
__attribute__((noinline)) static void op_arena_grow(struct Call* c) {
  unsigned long top = HEAP_ARENA(c->t->index) + c->t->arena_top * PG;
  long r = RAW_MPROTECT(top, c->pages * PG, PROT_READ | PROT_WRITE);
  if (r != 0) {
    fail(c->t, "arena mprotect", r);
    return;
  }
  c->t->arena_top += c->pages;
}

// glibc's shrink_heap (madvise), or a runtime's decommit (MAP_FIXED NONE).
__attribute__((noinline)) static void op_arena_shrink(struct Call* c) {
  unsigned long top = HEAP_ARENA(c->t->index) + (c->t->arena_top - c->pages) * PG;
  long r;
  if (c->t->shrinks++ % 4 == 3) {
    r = RAW_MMAP(top, c->pages * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    r = r == (long)top ? 0 : r;
  } else {
    r = RAW_MADVISE(top, c->pages * PG, MADV_DONTNEED);
    if (r == 0) r = RAW_MPROTECT(top, c->pages * PG, PROT_NONE);
  }
  if (r != 0) {
    fail(c->t, "arena shrink", r);
    return;
  }
  c->t->arena_top -= c->pages;
}

static void run_op(struct Call* c) {
  switch (c->op) {
    case OP_MMAP_ANON: op_mmap_anon(c); break;
    case OP_MMAP_FILE: op_mmap_file(c); break;
    case OP_MUNMAP: op_munmap(c); break;
    case OP_MUNMAP_TAIL: op_munmap_tail(c); break;
    case OP_MREMAP_GROW: op_mremap_grow(c); break;
    case OP_MREMAP_SHRINK: op_mremap_shrink(c); break;
    case OP_MREMAP_MOVE: op_mremap_move(c); break;
    case OP_BRK: op_brk(c); break;
    case OP_ARENA_GROW: op_arena_grow(c); break;
    case OP_ARENA_SHRINK: op_arena_shrink(c); break;
  }
}

// ---- the recursion that makes the stacks deep ----------------------------

static int walk_b(int depth, struct Call* c);

// Returns depth+1 through every level: work after the call keeps the
// compiler from turning the recursion into a jump.
__attribute__((noinline)) static int walk_a(int depth, struct Call* c) {
  if (depth == 0) {
    run_op(c);
    return 1;
  }
  int r = (c->pattern == 0) ? walk_a(depth - 1, c) : walk_b(depth - 1, c);
  return r + 1;
}

__attribute__((noinline)) static int walk_b(int depth, struct Call* c) {
  if (depth == 0) {
    run_op(c);
    return 1;
  }
  int r = (c->pattern == 1) ? walk_b(depth - 1, c) : walk_a(depth - 1, c);
  return r + 1;
}

// ---- choosing what to do --------------------------------------------------

static int find_slot(struct Thread* t, int want_full) {
  for (int tries = 0; tries < 8; ++tries) {
    int s = (int)(next_rand(&t->rng) % NSLOTS);
    if ((t->pages[s] != 0) == want_full) return s;
  }
  return -1;
}

// An arena call: grow by 1 page (small mallocs, as glibc does) more often
// than shrink by a few, within the reservation.
static void choose_arena(struct Thread* t, struct Call* c) {
  const int grow = t->arena_top == 0 || next_rand(&t->rng) % 4 != 0;
  if (grow && t->arena_top < HEAP_ARENA_PAGES) {
    c->op = OP_ARENA_GROW;
    c->pages = 1;
  } else {
    c->op = OP_ARENA_SHRINK;
    c->pages = 1 + (long)(next_rand(&t->rng) % (t->arena_top < 4 ? t->arena_top : 4));
  }
}

// Fills c with a valid operation for the thread's current slots.
static void choose(struct Thread* t, struct Call* c) {
  c->t = t;
  c->pattern = (int)(next_rand(&t->rng) % 3);
  if (next_rand(&t->rng) % 5 == 0) {
    choose_arena(t, c);
    return;
  }
  unsigned long r = next_rand(&t->rng) % 100;
  if (r < 8) {  // brk: grow a little more often than shrink
    c->op = OP_BRK;
    c->pages = (long)(next_rand(&t->rng) % 17) - 7;
    if (c->pages == 0) c->pages = 1;
    return;
  }
  int full = find_slot(t, 1);
  int empty = find_slot(t, 0);
  if (full < 0 || (empty >= 0 && r < 36)) {
    if (empty < 0) empty = 0;  // unreachable in practice: 8 misses both ways
    c->slot = empty;
    c->op = (r % 4 == 0) ? OP_MMAP_FILE : OP_MMAP_ANON;
    c->pages = 1 + (long)(next_rand(&t->rng) % 24);
    if (t->pages[empty] != 0) {  // pathological fallback
      c->op = OP_MUNMAP;
    }
    return;
  }
  c->slot = full;
  unsigned long have = t->pages[full];
  if (r < 56) {
    c->op = OP_MUNMAP;
  } else if (r < 66 && have > 1) {
    c->op = OP_MUNMAP_TAIL;
    c->pages = 1 + (long)(next_rand(&t->rng) % (have - 1));
  } else if (r < 78 && have < MAX_PAGES) {
    c->op = OP_MREMAP_GROW;
    c->pages = 1 + (long)(next_rand(&t->rng) % (MAX_PAGES - have));
  } else if (r < 86 && have > 1) {
    c->op = OP_MREMAP_SHRINK;
    c->pages = 1 + (long)(next_rand(&t->rng) % (have - 1));
  } else if (empty >= 0) {
    c->op = OP_MREMAP_MOVE;
    c->other = empty;
    c->pages = (have < MAX_PAGES) ? (long)(next_rand(&t->rng) % (MAX_PAGES - have + 1)) : 0;
  } else {
    c->op = OP_MUNMAP;
  }
}

// Workers start together once main has created them all: pthread_create
// mallocs (the new thread's TLS), and glibc's malloc aborts if a worker has
// moved the break under it.
static pthread_barrier_t g_start;

static void* worker(void* arg) {
  struct Thread* t = arg;
  struct Call c;
  pthread_barrier_wait(&g_start);
  // The arena's reservation, as glibc's new_heap makes it.
  unsigned long want = HEAP_ARENA(t->index);
  long p = RAW_MMAP(want, HEAP_ARENA_PAGES * PG, PROT_NONE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p != (long)want) fail(t, "arena reservation hint not honoured", p);
  for (unsigned long i = 0; i < t->iters; ++i) {
    choose(t, &c);
    int depth = MIN_DEPTH + (int)(next_rand(&t->rng) % (MAX_DEPTH - MIN_DEPTH + 1));
    walk_a(depth - 1, &c);  // walk_a itself is level 1
  }
  return NULL;
}

static struct Thread g_threads[MAX_THREADS];
static char g_path[4096];

static unsigned long parse_ulong(const char* s, const char* what) {
  char* end;
  unsigned long v = strtoul(s, &end, 10);
  if (*s == 0 || *end != 0) {
    write_str(2, "churn: bad ");
    write_str(2, what);
    write_str(2, "\n");
    sys_exit_group(2);
  }
  return v;
}

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    write_str(2, "usage: churn OUTDIR NAME THREADS ITERS [SEED]\n");
    return 2;
  }
  const char* outdir = argv[1];
  const char* name = argv[2];
  unsigned long nthreads = parse_ulong(argv[3], "THREADS");
  unsigned long iters = parse_ulong(argv[4], "ITERS");
  unsigned long seed = argc == 6 ? parse_ulong(argv[5], "SEED") : 1;
  if (nthreads < 1 || nthreads > MAX_THREADS) {
    write_str(2, "churn: THREADS must be 1..64\n");
    return 2;
  }
  g_file_fd = (int)RAW_OPEN("/proc/self/exe", O_RDONLY | O_CLOEXEC, 0);
  if (g_file_fd < 0) {
    write_str(2, "churn: cannot open /proc/self/exe\n");
    return 1;
  }
  g_brk_base = g_brk_cur = (unsigned long)RAW_BRK(0);

  pthread_t ids[MAX_THREADS];
  pthread_barrier_init(&g_start, NULL, (unsigned)nthreads + 1);
  for (unsigned long i = 0; i < nthreads; ++i) {
    g_threads[i].index = (int)i;
    g_threads[i].iters = iters;
    g_threads[i].rng = (seed * 0x9E3779B97F4A7C15UL) ^ (i + 1) * 0xBF58476D1CE4E5B9UL;
    if (g_threads[i].rng == 0) g_threads[i].rng = 1;
    if (pthread_create(&ids[i], NULL, worker, &g_threads[i]) != 0) {
      write_str(2, "churn: pthread_create failed\n");
      return 1;
    }
  }
  pthread_barrier_wait(&g_start);
  for (unsigned long i = 0; i < nthreads; ++i) {
    pthread_join(ids[i], NULL);
    g_failures += g_threads[i].failures;
  }
  if (g_failures) {
    write_str(2, "churn: some operations failed (see above)\n");
  }
  // The last act: the end state, then exit_group (no atexit handlers that
  // could free or map anything after the snapshot).
  maps_path(g_path, sizeof(g_path), outdir, name, RAW_GETPID(), ".maps");
  long r = dump_maps_to(g_path);
  if (r < 0) {
    write_str(2, "churn: cannot write the maps file\n");
    sys_exit_group(1);
  }
  sys_exit_group(g_failures ? 1 : 0);
}
