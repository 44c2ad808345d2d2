// residency.c — memory with known resident pages, for the residency
// snapshots of `pageblame record` (issue 28): the kernel's /proc/PID/smaps,
// read while the program waits, is the oracle, and the program says which
// pages it touched.
//
//   usage: residency DIR NAME
//
// Each region comes from its own function (DWARF stacks name them):
//   map_every4th   64 MiB anonymous, every 4th page written (4096 pages),
//                  then MADV_DONTNEED of its second half: 2048 pages stay
//   big_stack      a thread made with a 64 MiB stack (glibc maps it) that
//                  writes 1 MiB of it (256 pages) and waits
//   map_file       an 8 MiB file (DIR/NAME.file, written first, so its pages
//                  are in the page cache) mapped read-only, its first 2 MiB
//                  read (512 pages; the kernel's fault-around maps the cached
//                  pages next to them too, so resident >= touched)
//   map_cow        4 MiB anonymous, all written (1024 pages), then fork():
//                  the child writes the first half again (512 pages copied
//                  on write); both processes count all 1024 as resident
// It writes DIR/NAME.PID.tsv (one line per region: name, pid, start, end,
// touched pages; the child's cow region included), prints the same, then
// writes DIR/NAME.ready ("PID CHILDPID\n") and blocks opening the FIFO
// DIR/NAME.go for reading: nothing of the program runs while a test reads
// /proc/PID/smaps and the recorder takes a snapshot. A writer on NAME.go
// releases it; then the thread and the child end, the file is removed and
// the program exits 0.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096UL
#define MIB (1UL << 20)

struct region {
  const char* name;
  long pid;
  unsigned long start, end, touched;
};

static struct region g_regions[8];
static int g_count;

static void die(const char* what) {
  fprintf(stderr, "residency: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void add(const char* name, long pid, void* start, unsigned long len, unsigned long touched) {
  g_regions[g_count++] = (struct region){name, pid, (unsigned long)start, (unsigned long)start + len, touched};
}

// Writes one byte in every `step`-th page of [p, p+len); returns the pages.
static unsigned long touch(char* p, unsigned long len, unsigned long step) {
  unsigned long pages = 0;
  for (unsigned long off = 0; off < len; off += step * PAGE, ++pages) ((volatile char*)p)[off] = 1;
  return pages;
}

__attribute__((noinline)) static void map_every4th(void) {
  const unsigned long len = 64 * MIB;
  char* p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) die("mmap");
  const unsigned long pages = touch(p, len, 4);
  if (madvise(p + len / 2, len / 2, MADV_DONTNEED) != 0) die("madvise");
  add("every4th", getpid(), p, len, pages / 2);
}

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static int g_stack_ready, g_release;
static void* g_stack_base;
static size_t g_stack_size;

static void* stack_user(void* arg) {
  (void)arg;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) die("pthread_getattr_np");
  pthread_attr_getstack(&attr, &g_stack_base, &g_stack_size);
  pthread_attr_destroy(&attr);
  // 1 MiB of this frame, one byte per page (a thread's stack is a plain
  // mapping: no order is needed).
  char frame[MIB];
  touch(frame, MIB, 1);
  pthread_mutex_lock(&g_lock);
  g_stack_ready = 1;
  pthread_cond_broadcast(&g_cond);
  while (!g_release) pthread_cond_wait(&g_cond, &g_lock);
  pthread_mutex_unlock(&g_lock);
  return NULL;
}

__attribute__((noinline)) static pthread_t big_stack(void) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * MIB);
  pthread_t t;
  if ((errno = pthread_create(&t, &attr, stack_user, NULL)) != 0) die("pthread_create");
  pthread_attr_destroy(&attr);
  pthread_mutex_lock(&g_lock);
  while (!g_stack_ready) pthread_cond_wait(&g_cond, &g_lock);
  pthread_mutex_unlock(&g_lock);
  // glibc's stack mapping: the guard page (PROT_NONE) below the stack, the
  // thread's descriptor and TLS at its top; the region is the usable stack.
  add("stack", getpid(), g_stack_base, g_stack_size, MIB / PAGE);
  return t;
}

__attribute__((noinline)) static void map_file(const char* path) {
  const unsigned long len = 8 * MIB;
  const int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) die(path);
  static char chunk[64 * 1024];
  memset(chunk, 'r', sizeof(chunk));
  for (unsigned long off = 0; off < len; off += sizeof(chunk)) {
    if (write(fd, chunk, sizeof(chunk)) != (ssize_t)sizeof(chunk)) die("write");
  }
  char* p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) die("mmap file");
  close(fd);
  unsigned long pages = 0, sum = 0;
  for (unsigned long off = 0; off < 2 * MIB; off += PAGE, ++pages) sum += ((volatile char*)p)[off];
  if (sum != pages * 'r') die("file contents");
  add("file", getpid(), p, len, pages);
}

// Returns the child's pid. The child writes half the region, says so on
// `ready`, and waits for a byte on `go`.
__attribute__((noinline)) static pid_t map_cow(int ready, int go) {
  const unsigned long len = 4 * MIB;
  char* p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) die("mmap cow");
  const unsigned long pages = touch(p, len, 1);
  const pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    for (unsigned long off = 0; off < len / 2; off += PAGE) ((volatile char*)p)[off] = 2;
    char c = 1;
    if (write(ready, &c, 1) != 1) _exit(1);
    if (read(go, &c, 1) < 0) _exit(1);
    _exit(0);
  }
  add("cow", getpid(), p, len, pages);
  // The child's copy: the same addresses, every page resident (half its
  // own copies, half still shared with this process).
  add("cow", child, p, len, pages);
  return child;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: residency DIR NAME\n");
    return 2;
  }
  const char* dir = argv[1];
  const char* name = argv[2];
  char path[4096], file_path[4096];
  snprintf(file_path, sizeof(file_path), "%s/%s.file", dir, name);

  map_every4th();
  pthread_t thread = big_stack();
  map_file(file_path);
  int ready[2], go[2];
  if (pipe(ready) != 0 || pipe(go) != 0) die("pipe");
  const pid_t child = map_cow(ready[1], go[0]);
  char c;
  if (read(ready[0], &c, 1) != 1) die("child");

  snprintf(path, sizeof(path), "%s/%s.%d.tsv", dir, name, (int)getpid());
  FILE* tsv = fopen(path, "w");
  if (tsv == NULL) die(path);
  for (int i = 0; i < g_count; ++i) {
    const struct region* r = &g_regions[i];
    fprintf(tsv, "%s\t%ld\t0x%lx\t0x%lx\t%lu\n", r->name, r->pid, r->start, r->end, r->touched);
    printf("residency: %s pid %ld [0x%lx, 0x%lx): %lu pages touched\n", r->name, r->pid, r->start, r->end,
           r->touched);
  }
  if (fclose(tsv) != 0) die(path);
  fflush(stdout);

  char go_path[4096];
  snprintf(go_path, sizeof(go_path), "%s/%s.go", dir, name);
  unlink(go_path);
  if (mkfifo(go_path, 0600) != 0) die(go_path);
  snprintf(path, sizeof(path), "%s/%s.ready", dir, name);
  char line[64];
  const int n = snprintf(line, sizeof(line), "%d %d\n", (int)getpid(), (int)child);
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || write(fd, line, n) != n || close(fd) != 0) die(path);

  // The pause: blocks until a writer opens the FIFO, then until it closes it.
  const int wait_fd = open(go_path, O_RDONLY | O_CLOEXEC);
  if (wait_fd < 0) die(go_path);
  while (read(wait_fd, &c, 1) > 0) {
  }
  close(wait_fd);
  unlink(go_path);

  pthread_mutex_lock(&g_lock);
  g_release = 1;
  pthread_cond_broadcast(&g_cond);
  pthread_mutex_unlock(&g_lock);
  pthread_join(thread, NULL);
  if (write(go[1], &c, 1) != 1) die("release child");
  int status;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) die("child exit");
  unlink(file_path);
  return 0;
}
