// truth.h — the ground-truth file a trace program writes about itself, just
// before its last act (the /proc/self/maps dump of sys.h).
//
// One row per address range the program made (it knows the addresses it got):
// the prot the range must have at the end, the function whose call created
// (reserved) it — `origin` — and the function whose call last made it
// accessible after it was PROT_NONE or decommitted — `commit`, "-" when the
// pages have been accessible since they were created (docs/design.md, "Reserve
// vs commit"). `via` says where the syscall instruction sits: "raw" (in the
// named function itself, sys.h: frame-pointer stacks name it as their leaf) or
// "libc" (inside glibc, which has no frame pointers: only DWARF unwinding
// reaches the named function). Format (traces/MANIFEST.md, "Truth files"):
//
//   start<TAB>end<TAB>prot<TAB>origin<TAB>commit<TAB>via<TAB>what
//   300000000000	300000200000	rw-	clr_reserve	clr_commit_gen0	raw	gen0 ...
//
// hex without 0x as in /proc/PID/maps, half-open [start, end), prot as the
// first three characters of the maps perms. Before writing, every row is
// checked against /proc/self/maps (each page mapped, with that prot); a row
// added with prot NULL takes its prot from the maps (it must be uniform): that
// is how a program records what the kernel did when it cannot know it, e.g.
// an mprotect that fails half way. Writing uses open/write/rename only (no
// malloc, no mmap): the address space is not changed by it.
#ifndef PAGEBLAME_TRACES_TRUTH_H_
#define PAGEBLAME_TRACES_TRUTH_H_

#include "sys.h"

struct truth_row {
  unsigned long start, end;
  char prot[4];
  const char* origin;
  const char* commit;
  const char* via;
  const char* what;
};

static struct truth_row g_truth[256];
static int g_ntruth;
static char g_truth_buf[1 << 16];
static char g_truth_path[4096];

static inline void truth_add(unsigned long start, unsigned long end, const char* prot,
                             const char* origin, const char* commit, const char* via,
                             const char* what) {
  if (g_ntruth >= (int)(sizeof(g_truth) / sizeof(g_truth[0]))) return;
  struct truth_row* r = &g_truth[g_ntruth++];
  r->start = start;
  r->end = end;
  r->prot[0] = 0;
  if (prot) {
    for (int i = 0; i < 3; ++i) r->prot[i] = prot[i];
    r->prot[3] = 0;
  }
  r->origin = origin;
  r->commit = commit ? commit : "-";
  r->via = via;
  r->what = what;
}

static inline unsigned long truth_parse_hex(const char** p) {
  unsigned long v = 0;
  for (;;) {
    char c = **p;
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return v;
    v = v * 16 + (unsigned long)d;
    ++*p;
  }
}

// The prot ("rw-") of every maps row that meets [start, end) must be the same
// and the rows must cover it without a gap. Fills prot; returns 0 or -1.
static inline int truth_maps_prot(const char* maps, size_t len, unsigned long start,
                                  unsigned long end, char prot[4]) {
  unsigned long covered = start;
  prot[0] = 0;
  const char* p = maps;
  const char* stop = maps + len;
  while (p < stop) {
    unsigned long s = truth_parse_hex(&p);
    ++p;  // '-'
    unsigned long e = truth_parse_hex(&p);
    ++p;  // ' '
    char perms[4] = {p[0], p[1], p[2], 0};
    while (p < stop && *p != '\n') ++p;
    ++p;
    if (e <= start || s >= end) continue;
    if (s > covered) return -1;  // a hole
    if (prot[0] && (prot[0] != perms[0] || prot[1] != perms[1] || prot[2] != perms[2])) return -1;
    for (int i = 0; i < 4; ++i) prot[i] = perms[i];
    covered = e;
  }
  return covered >= end ? 0 : -1;
}

// Checks every row against the current /proc/self/maps and writes
// TRUTHDIR/NAME.PID.tsv (via a temporary name). Returns the number of rows
// that did not match the maps (their prot column then says "?"), or -errno.
static inline long truth_write(const char* truthdir, const char* name, long pid) {
  long in = RAW_OPEN("/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);
  if (in < 0) return in;
  size_t used = 0;
  for (;;) {
    long n = RAW_READ(in, g_maps_buf + used, sizeof(g_maps_buf) - used);
    if (n <= 0) break;
    used += (size_t)n;
    if (used >= sizeof(g_maps_buf)) break;
  }
  RAW_CLOSE(in);
  long bad = 0;
  size_t pos = 0;
  g_truth_buf[0] = 0;
  str_append(g_truth_buf, sizeof(g_truth_buf), &pos,
             "start\tend\tprot\torigin\tcommit\tvia\twhat\n");
  for (int i = 0; i < g_ntruth; ++i) {
    struct truth_row* r = &g_truth[i];
    char got[4];
    int rc = truth_maps_prot(g_maps_buf, used, r->start, r->end, got);
    if (rc != 0 || (r->prot[0] && (got[0] != r->prot[0] || got[1] != r->prot[1] ||
                                   got[2] != r->prot[2]))) {
      ++bad;
      write_str(2, "truth: row does not match /proc/self/maps: ");
      write_str(2, r->what);
      write_str(2, "\n");
      got[0] = '?';
      got[1] = 0;
    } else {
      got[3] = 0;
    }
    char num[24];
    size_t np = 0;
    num[0] = 0;
    str_append_hex(num, sizeof(num), &np, r->start);
    str_append(g_truth_buf, sizeof(g_truth_buf), &pos, num + 2);
    str_append(g_truth_buf, sizeof(g_truth_buf), &pos, "\t");
    np = 0;
    str_append_hex(num, sizeof(num), &np, r->end);
    str_append(g_truth_buf, sizeof(g_truth_buf), &pos, num + 2);
    const char* cols[] = {got, r->origin, r->commit, r->via, r->what};
    for (int c = 0; c < 5; ++c) {
      str_append(g_truth_buf, sizeof(g_truth_buf), &pos, "\t");
      str_append(g_truth_buf, sizeof(g_truth_buf), &pos, cols[c]);
    }
    str_append(g_truth_buf, sizeof(g_truth_buf), &pos, "\n");
  }
  maps_path(g_truth_path, sizeof(g_truth_path), truthdir, name, pid, ".tsv");
  size_t tp = str_len(g_truth_path);
  str_append(g_truth_path, sizeof(g_truth_path), &tp, ".tmp");
  long out = RAW_OPEN(g_truth_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) return out;
  RAW_WRITE(out, g_truth_buf, pos);
  RAW_CLOSE(out);
  static char final_path[4096];
  maps_path(final_path, sizeof(final_path), truthdir, name, pid, ".tsv");
  long rc = RAW_RENAME(g_truth_path, final_path);
  return rc < 0 ? rc : bad;
}

#endif  // PAGEBLAME_TRACES_TRUTH_H_
