// alloc.c — memory that a C program gets through glibc, from named functions:
// malloc's mmap path, realloc's mremap path, calloc, pthread stacks, and one
// allocation through an always_inline helper. Every syscall is issued inside
// glibc (no frame pointers in Debian's libc): frame-pointer stacks stop in the
// libc wrapper, DWARF stacks reach the named function (and, for the inlined
// helper, perf prints it as "inline_big_buffer (inlined)" from the DWARF inline
// info of make_inline_buffer). Built -O2 -g -fno-omit-frame-pointer
// -fno-optimize-sibling-calls (no tail calls: each named function stays on
// the stack below libc).
//
//   usage: alloc MAPSDIR TRUTHDIR NAME
//
// Last acts as in commit.c: TRUTHDIR/NAME.PID.tsv (truth.h), the maps dump,
// exit_group. All addresses are kernel-chosen; the truth file has them.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "truth.h"

#define MB (1UL << 20)

static int g_failures;

static void check(int ok, const char* where, const char* what, long got) {
  if (ok) return;
  char msg[512];
  size_t pos = 0;
  msg[0] = 0;
  str_append(msg, sizeof(msg), &pos, "alloc: ");
  str_append(msg, sizeof(msg), &pos, where);
  str_append(msg, sizeof(msg), &pos, ": ");
  str_append(msg, sizeof(msg), &pos, what);
  str_append(msg, sizeof(msg), &pos, " (got ");
  str_append_hex(msg, sizeof(msg), &pos, (unsigned long)got);
  str_append(msg, sizeof(msg), &pos, ")\n");
  write_str(2, msg);
  ++g_failures;
}

// The mapping of a chunk that malloc served with mmap (malloc/malloc.c:
// sysmalloc_mmap): the chunk header sits 16 bytes before the user pointer,
// prev_size holds the alignment correction, size has IS_MMAPPED (0x2) set and
// is the whole mapping's length.
static void mmapped_chunk(void* user, const char* fn, const char* what) {
  unsigned long chunk = (unsigned long)user - 16;
  unsigned long prev = ((unsigned long*)chunk)[0];
  unsigned long size = ((unsigned long*)chunk)[1];
  check((size & 2) != 0, "mmapped_chunk", "chunk not mmapped", (long)size);
  truth_add(chunk - prev, chunk + (size & ~7UL), "rw-", fn, "-", "libc", what);
}

static void* g_blocks[8];
__attribute__((noinline)) void cache_block(void) {
  for (int i = 0; i < 8; ++i) {
    g_blocks[i] = malloc((2 + (unsigned long)(i % 4)) * MB + (unsigned long)i * 100);
    check(g_blocks[i] != NULL, __func__, "malloc", 0);
    memset(g_blocks[i], i, 64);
  }
}

static void* g_log;
__attribute__((noinline)) void grow_log(void) {
  char* p = malloc(MB);
  check(p != NULL, __func__, "malloc", 0);
  memset(p, 'L', MB);
  for (unsigned long n = 2 * MB; n <= 16 * MB; n *= 2) {
    p = realloc(p, n);  // an mmapped chunk grows by mremap(MREMAP_MAYMOVE)
    check(p != NULL, __func__, "realloc", (long)n);
    p[n - 1] = 'L';
  }
  g_log = p;
}

static void* g_table;
__attribute__((noinline)) void zeroed_table(void) {
  g_table = calloc(3 * MB, 8);
  check(g_table != NULL, __func__, "calloc", 0);
  ((volatile char*)g_table)[0] = 1;
}

// Each worker notes its stack block (glibc nptl/allocatestack.c: one mmap of
// the whole block, guard at the low end) and returns.
struct stack_info {
  unsigned long low, top, guard;
};
static struct stack_info g_stacks[2];
static void* stack_note(void* opaque) {
  struct stack_info* s = opaque;
  pthread_attr_t attr;
  void* addr;
  size_t size, guard;
  check(pthread_getattr_np(pthread_self(), &attr) == 0, "stack_note", "getattr", 0);
  pthread_attr_getstack(&attr, &addr, &size);
  pthread_attr_getguardsize(&attr, &guard);
  pthread_attr_destroy(&attr);
  s->low = (unsigned long)addr;  // above the guard
  s->top = (unsigned long)addr + size;
  s->guard = guard;
  return NULL;
}

__attribute__((noinline)) void spawn_workers(void) {
  pthread_t t[2];
  for (int i = 0; i < 2; ++i) {
    int rc = pthread_create(&t[i], NULL, stack_note, &g_stacks[i]);
    check(rc == 0, __func__, "pthread_create", rc);
  }
  // Joined stacks stay mapped (glibc keeps them in its stack cache).
  for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
}

static inline __attribute__((always_inline)) void* inline_big_buffer(size_t n) {
  char* p = malloc(n);
  check(p != NULL, "inline_big_buffer", "malloc", 0);
  memset(p, 'I', 4096);
  return p;
}

static void* g_inline;
__attribute__((noinline)) void make_inline_buffer(void) {
  g_inline = inline_big_buffer(6 * MB + 12345);
  ((volatile char*)g_inline)[1] = 'i';
}

int main(int argc, char** argv) {
  if (argc != 4) {
    write_str(2, "usage: alloc MAPSDIR TRUTHDIR NAME\n");
    return 2;
  }
  cache_block();
  grow_log();
  zeroed_table();
  spawn_workers();
  make_inline_buffer();

  for (int i = 0; i < 8; ++i) mmapped_chunk(g_blocks[i], "cache_block", "malloc 2-5 MiB (mmap)");
  mmapped_chunk(g_log, "grow_log", "malloc 1 MiB, realloc to 16 MiB (mremap MAYMOVE)");
  mmapped_chunk(g_table, "zeroed_table", "calloc 24 MiB (mmap)");
  mmapped_chunk(g_inline, "inline_big_buffer", "malloc in an always_inline helper of make_inline_buffer");
  for (int i = 0; i < 2; ++i) {
    struct stack_info* s = &g_stacks[i];
    // glibc 2.36 maps the block PROT_NONE and mprotects all but the guard RW
    // (nptl/allocatestack.c: setup_stack_prot): the stack is committed.
    truth_add(s->low - s->guard, s->low, "---", "spawn_workers", "-", "libc",
              "thread stack guard (pthread_create)");
    truth_add(s->low, s->top, "rw-", "spawn_workers", "spawn_workers", "libc",
              "thread stack (pthread_create: mmap PROT_NONE, mprotect RW)");
  }
  long pid = RAW_GETPID();
  long bad = truth_write(argv[2], argv[3], pid);
  check(bad == 0, "main", "truth rows vs /proc/self/maps", bad);
  static char path[4096];
  maps_path(path, sizeof(path), argv[1], argv[3], pid, ".maps");
  long rc = dump_maps_to(path);
  check(rc == 0, "main", "maps dump", rc);
  sys_exit_group(g_failures ? 1 : 0);
}
