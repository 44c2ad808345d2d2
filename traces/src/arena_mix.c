// arena_mix.c — a glibc heap with every kind of free memory glibc keeps,
// for the heap walker's tests (issue 39): glibc's own malloc_info and
// mallinfo2, written by the program at its pause, and the RSS drop of its
// own malloc_trim(0) are the oracle.
//
//   usage: arena_mix DIR [THREADS [busy]]
//
// The main thread and THREADS workers (default 3; each gets its own arena,
// up to glibc's limit of 8 x cores) each run mix() in their arena:
//   keep_small     2000 blocks of 40..240 bytes, kept
//   keep_64k       8 blocks of 64 KiB, kept (below the mmap threshold)
//   churn_8m       an 8 MiB block allocated, half written, freed, 4 times:
//                  the first is mmapped, its free raises glibc's dynamic mmap
//                  threshold, and the later ones come from the arena and
//                  stay there when freed (the retention users take for a leak)
//   fragment       4096 blocks of 1000 bytes, 1 in 64 kept: free runs of
//                  ~62 KiB between kept blocks, whole pages malloc_trim frees
//   keep_mmapped   one 40 MiB block (always mmapped), 1 MiB of it written
//   leftovers      20 blocks each of 24 and 100 bytes freed: 7 of each size
//                  stay in the thread's tcache, 13 go to the fastbins
// Then the workers wait (a condition variable: no malloc), and the main
// thread writes DIR/info.xml (malloc_info), DIR/mallinfo2.txt ("name value"
// per field) and DIR/ready (its pid), through a FILE opened at the start
// with a static buffer, so that writing them changes nothing in the heap.
// With "busy", one more thread starts after those files are written and
// allocates and frees blocks of every size in its own arena without pause
// until the program ends (a heap that changes while it is read).
// It then waits for a line on standard input; calls malloc_trim(0) between
// two reads of /proc/self/smaps_rollup (no malloc) and writes DIR/trim.txt
// ("rss_before rss_after anonymous_before anonymous_after" in bytes, then
// its return value: Rss may also grow by the library pages the kernel maps
// around malloc_trim's own code the first time it runs, 64 KiB a fault);
// waits for a second line, and exits 0.
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KIB 1024UL
#define MIB (1024UL * 1024UL)

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static int g_ready, g_release;
static char g_outbuf[1 << 16];
// Every block passes through here, so that no compiler drops a malloc/free
// pair whose memory is only written (GCC does, at -O1).
static void* volatile g_sink;
static void* keep(void* p) {
  g_sink = p;
  return p;
}

static void* keep_small(void) {
  void** kept = malloc(2000 * sizeof(void*));
  for (int i = 0; i < 2000; ++i) {
    kept[i] = keep(malloc(40 + (i % 11) * 20));
    memset(kept[i], i, 40);
  }
  return kept;
}

static void keep_64k(void** out) {
  for (int i = 0; i < 8; ++i) {
    out[i] = keep(malloc(64 * KIB));
    memset(out[i], 1, 64 * KIB);
  }
}

static void churn_8m(void) {
  for (int i = 0; i < 4; ++i) {
    char* p = keep(malloc(8 * MIB));
    memset(p, 2, 4 * MIB);
    free(p);
  }
}

static void** fragment(void) {
  void** all = malloc(4096 * sizeof(void*));
  void** kept = malloc(64 * sizeof(void*));
  for (int i = 0; i < 4096; ++i) {
    all[i] = keep(malloc(1000));
    memset(all[i], 3, 1000);
  }
  for (int i = 0; i < 4096; ++i) {
    if (i % 64 == 63) kept[i / 64] = all[i];
    else free(all[i]);
  }
  free(all);
  return kept;
}

static void* keep_mmapped(void) {
  char* p = keep(malloc(40 * MIB));
  memset(p, 4, 1 * MIB);
  return p;
}

static void leftovers(void) {
  void* a[20];
  void* b[20];
  for (int i = 0; i < 20; ++i) {
    a[i] = keep(malloc(24));
    b[i] = keep(malloc(100));
  }
  void* guard = keep(malloc(200));  // the last ones are not next to top
  memset(guard, 5, 200);
  for (int i = 0; i < 20; ++i) {
    free(a[i]);
    free(b[i]);
  }
}

static void mix(int with_mmapped) {
  static __thread void* big[8];
  keep_small();
  keep_64k(big);
  churn_8m();
  fragment();
  if (with_mmapped) keep_mmapped();
  leftovers();
}

static void* worker(void* arg) {
  mix((long)arg == 0);
  pthread_mutex_lock(&g_lock);
  ++g_ready;
  pthread_cond_broadcast(&g_cond);
  while (!g_release) pthread_cond_wait(&g_cond, &g_lock);
  pthread_mutex_unlock(&g_lock);
  return NULL;
}

// A field of /proc/self/smaps_rollup ("Rss:", "Anonymous:"), in bytes;
// read without malloc.
static unsigned long rollup_bytes(const char* field) {
  char buf[4096];
  int fd = open("/proc/self/smaps_rollup", O_RDONLY);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  char* at = strstr(buf, field);
  return at ? strtoul(at + strlen(field), NULL, 10) * KIB : 0;
}

static void write_file(const char* dir, const char* name, const char* text) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write(fd, text, strlen(text)) < 0) exit(1);
  close(fd);
}

static void* churn(void* arg) {
  void* slot[64] = {0};
  unsigned long n = 0;
  while (!__atomic_load_n(&g_release, __ATOMIC_RELAXED)) {
    const int i = (int)(n % 64);
    free(slot[i]);
    slot[i] = keep(malloc(16 + (n * 7919) % 8192));
    ++n;
  }
  for (int i = 0; i < 64; ++i) free(slot[i]);
  return NULL;
}

static void wait_line(void) {
  char c;
  while (read(0, &c, 1) == 1 && c != '\n') {}
}

static void report(FILE* info, FILE* numbers) {
  malloc_info(0, info);
  fflush(info);
  struct mallinfo2 m = mallinfo2();
  fprintf(numbers, "arena %zu\nordblks %zu\nsmblks %zu\nhblks %zu\nhblkhd %zu\nfsmblks %zu\nuordblks %zu\n"
          "fordblks %zu\nkeepcost %zu\n", m.arena, m.ordblks, m.smblks, m.hblks, m.hblkhd, m.fsmblks,
          m.uordblks, m.fordblks, m.keepcost);
  fflush(numbers);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: arena_mix DIR [THREADS]\n");
    return 2;
  }
  const char* dir = argv[1];
  const long threads = argc > 2 ? strtol(argv[2], NULL, 10) : 3;
  char path[4096];
  snprintf(path, sizeof(path), "%s/info.xml", dir);
  FILE* info = fopen(path, "w");
  snprintf(path, sizeof(path), "%s/mallinfo2.txt", dir);
  FILE* numbers = fopen(path, "w");
  if (!info || !numbers) return 1;
  setvbuf(info, g_outbuf, _IOFBF, sizeof(g_outbuf) / 2);
  setvbuf(numbers, g_outbuf + sizeof(g_outbuf) / 2, _IOFBF, sizeof(g_outbuf) / 2);
  pthread_t t[64];
  for (long i = 0; i < threads && i < 64; ++i) {
    // One at a time: each thread's first malloc makes its own arena.
    pthread_create(&t[i], NULL, worker, (void*)i);
    pthread_mutex_lock(&g_lock);
    while (g_ready < i + 1) pthread_cond_wait(&g_cond, &g_lock);
    pthread_mutex_unlock(&g_lock);
  }
  mix(1);
  report(info, numbers);
  char text[256];
  pthread_t busy;
  const int with_busy = argc > 3 && strcmp(argv[3], "busy") == 0;
  if (with_busy) pthread_create(&busy, NULL, churn, NULL);
  snprintf(text, sizeof(text), "%d\n", (int)getpid());
  write_file(dir, "ready", text);
  wait_line();
  const unsigned long before = rollup_bytes("\nRss:"), anon_before = rollup_bytes("\nAnonymous:");
  const int r = malloc_trim(0);
  const unsigned long after = rollup_bytes("\nRss:"), anon_after = rollup_bytes("\nAnonymous:");
  snprintf(text, sizeof(text), "%lu %lu %lu %lu %d\n", before, after, anon_before, anon_after, r);
  write_file(dir, "trim.txt", text);
  wait_line();
  pthread_mutex_lock(&g_lock);
  g_release = 1;
  pthread_cond_broadcast(&g_cond);
  pthread_mutex_unlock(&g_lock);
  for (long i = 0; i < threads && i < 64; ++i) pthread_join(t[i], NULL);
  if (with_busy) pthread_join(busy, NULL);
  return 0;
}
