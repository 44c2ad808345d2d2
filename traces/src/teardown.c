// teardown.c — a program that gives its memory back before it exits, as node's
// isolate teardown, C++ static destructors and Python's shutdown do: at the
// end of a trace started under perf, little is left to ask about. It writes
// its /proc/self/maps twice: at its peak (NAME.PID.peak.maps, after
// build_working_set) and as its last act (NAME.PID.maps), so tests can check
// `pageblame maps --at peak` against the first and the end against the
// second. Raw syscalls (sys.h) name these functions even in fp stacks.
//
//   usage: teardown MAPSDIR NAME
#include <sys/mman.h>

#include "sys.h"

#define MIB (1024UL * 1024UL)
#define REGIONS 12

static void* g_regions[REGIONS];
static unsigned long g_sizes[REGIONS];
static long g_initial_break;

__attribute__((noinline)) static void build_working_set(void) {
  for (int i = 0; i < REGIONS; ++i) {
    g_sizes[i] = (unsigned long)(i + 1) * MIB;
    long r = RAW_MMAP(0, g_sizes[i], PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r < 0) sys_exit_group(3);
    g_regions[i] = (void*)r;
    ((volatile char*)r)[0] = 1;
  }
  g_initial_break = RAW_BRK(0);
  if (RAW_BRK(g_initial_break + 4 * MIB) < g_initial_break + (long)(4 * MIB)) sys_exit_group(4);
}

// Two calls a few microseconds apart: `--at` between them must see one.
__attribute__((noinline)) static void two_quick_maps(void) {
  long a = RAW_MMAP(0, 3 * PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  long b = RAW_MMAP(0, 5 * PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (a < 0 || b < 0) sys_exit_group(5);
}

__attribute__((noinline)) static void tear_down(void) {
  for (int i = 0; i < REGIONS; ++i) RAW_MUNMAP(g_regions[i], g_sizes[i]);
  RAW_BRK(g_initial_break);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    write_str(2, "usage: teardown MAPSDIR NAME\n");
    return 2;
  }
  static char path[4096];
  const long pid = RAW_GETPID();
  build_working_set();
  two_quick_maps();
  maps_path(path, sizeof(path), argv[1], argv[2], pid, ".peak.maps");
  if (dump_maps_to(path) != 0) sys_exit_group(6);
  tear_down();
  maps_path(path, sizeof(path), argv[1], argv[2], pid, ".maps");
  if (dump_maps_to(path) != 0) sys_exit_group(7);
  sys_exit_group(0);
}
