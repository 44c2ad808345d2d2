// coremaps.c — a process with a few distinctive regions, for the ELF core
// file tests (processor/regions/core_file_parser_test.cc, tests/cli tests).
//
//   coremaps OUTDIR     (run by traces/make-core.sh)
//
// Maps, at fixed hints (MAP_FIXED_NOREPLACE, so nothing else is replaced):
//   0x7e5500000000  5 pages anon rw, written             (a committed region)
//   0x7e5500100000  16 pages PROT_NONE                   (a reserve)
//   0x7e5500200000  8 pages PROT_NONE, pages 2..4 made rw (reserve, commit, reserve:
//                                                          the kernel splits it in three)
//   0x7e5500300000  OUTDIR/coremaps.data, 3 pages, read-only shared (file-backed)
//   0x7e5500400000  the same file at offset 1 page, 2 pages, private rw, written
//   0x7e5500500000  1 page anon rwx
// then writes /proc/self/maps to OUTDIR/coremaps.PID.maps (no allocation after
// that: the maps file and a core taken now agree), creates
// OUTDIR/coremaps.PID.ready, and waits for SIGTERM.
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PG 4096UL
#define BASE 0x7e5500000000UL

static void die(const char* what) {
  perror(what);
  exit(1);
}

static char* map_at(unsigned long addr, size_t len, int prot, int flags, int fd, off_t off) {
  void* p = mmap((void*)addr, len, prot, flags | MAP_FIXED_NOREPLACE, fd, off);
  if (p == MAP_FAILED || p != (void*)addr) die("mmap");
  return p;
}

static void copy_file(const char* from, const char* to) {
  static char buf[1 << 16];
  int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (in < 0 || out < 0) die("open maps");
  for (ssize_t n; (n = read(in, buf, sizeof buf)) > 0;) {
    if (write(out, buf, (size_t)n) != n) die("write maps");
  }
  close(in);
  close(out);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: coremaps OUTDIR\n");
    return 2;
  }
  const char* dir = argv[1];
  char data[4096], maps[4096], ready[4096];
  snprintf(data, sizeof data, "%s/coremaps.data", dir);
  snprintf(maps, sizeof maps, "%s/coremaps.%d.maps", dir, (int)getpid());
  snprintf(ready, sizeof ready, "%s/coremaps.%d.ready", dir, (int)getpid());

  int anon = MAP_PRIVATE | MAP_ANONYMOUS;
  memset(map_at(BASE, 5 * PG, PROT_READ | PROT_WRITE, anon, -1, 0), 0xa5, 5 * PG);
  map_at(BASE + 0x100000, 16 * PG, PROT_NONE, anon | MAP_NORESERVE, -1, 0);
  char* split = map_at(BASE + 0x200000, 8 * PG, PROT_NONE, anon | MAP_NORESERVE, -1, 0);
  if (mprotect(split + 2 * PG, 3 * PG, PROT_READ | PROT_WRITE) != 0) die("mprotect");
  memset(split + 2 * PG, 0x5a, 3 * PG);

  int fd = open(data, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || ftruncate(fd, 3 * PG) != 0) die("data file");
  map_at(BASE + 0x300000, 3 * PG, PROT_READ, MAP_SHARED, fd, 0);
  memset(map_at(BASE + 0x400000, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, PG), 0x3c, 2 * PG);
  close(fd);
  map_at(BASE + 0x500000, PG, PROT_READ | PROT_WRITE | PROT_EXEC, anon, -1, 0)[0] = 1;

  // The signal set and its handler are made before the snapshot: nothing
  // below maps memory.
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigprocmask(SIG_BLOCK, &term, NULL);
  copy_file("/proc/self/maps", maps);
  int r = open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (r < 0) die("ready");
  close(r);
  int sig;
  sigwait(&term, &sig);
  return 0;
}
