// leaknative.c — the native library dotnet-leak P/Invokes into. It maps
// memory with the mmap syscall directly (no malloc), so the creating stack
// of those pages is: mmap <- leak_native_* <- P/Invoke stub <- the C# method.
// It also writes glibc's own account of its heap (malloc_info) for the
// heap walker's .NET test.
// Built by the project (dotnet-leak.csproj) with
//   gcc -g -O2 -fno-omit-frame-pointer -shared -fPIC
#define _GNU_SOURCE
#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

// A fresh private anonymous read-write mapping of len bytes, every page
// written (so it is resident), or NULL.
__attribute__((noinline, visibility("default")))
void *leak_native_mmap(size_t len) {
  void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  memset(p, 0x5a, len);
  return p;
}

// Reserve then commit, as runtimes do: a PROT_NONE mapping of reserve bytes,
// then mprotect of its first commit bytes to read-write (written). The
// rest stays reserved (---p). Returns the reservation's start or NULL.
__attribute__((noinline, visibility("default")))
void *leak_native_reserve_commit(size_t reserve, size_t commit) {
  void *p = mmap(NULL, reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return NULL;
  if (mprotect(p, commit, PROT_READ | PROT_WRITE) != 0) return NULL;
  memset(p, 0xa5, commit);
  return p;
}

// A marker in the trace: madvise of zero bytes changes nothing and succeeds,
// and its address says which moment it marks (the trace has its time).
__attribute__((noinline, visibility("default")))
int leak_native_marker(unsigned long id) {
  return madvise((void *)(id << 12), 0, MADV_NORMAL);
}

// glibc's malloc_info XML, written at a chosen moment without touching the
// heap it describes: the FILE is opened early (leak_native_info_open, whose
// own malloc happens then) with a static buffer, so that the later write
// (leak_native_info_write) mallocs nothing. Each returns 0, or -1.
static FILE *g_info;
static char g_info_buf[1 << 16];

__attribute__((noinline, visibility("default")))
int leak_native_info_open(const char *path) {
  g_info = fopen(path, "w");
  if (!g_info) return -1;
  return setvbuf(g_info, g_info_buf, _IOFBF, sizeof(g_info_buf)) == 0 ? 0 : -1;
}

__attribute__((noinline, visibility("default")))
int leak_native_info_write(void) {
  if (!g_info || malloc_info(0, g_info) != 0) return -1;
  return fflush(g_info) == 0 ? 0 : -1;
}
