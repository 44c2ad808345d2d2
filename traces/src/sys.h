// sys.h — raw x86-64 system calls and the end-of-process /proc/self/maps dump
// shared by the trace programs (rules.c, attach.c, commit.c, alloc.c, vec.cc;
// truth.h builds on it).
//
// Why raw syscalls: perf unwinds user stacks with frame pointers
// (`--call-graph fp`). Debian's libc is built without frame pointers, so when
// the syscall instruction sits in libc's mmap()/syscall() wrapper the unwinder
// reads the *caller's* frame and loses the function that called the wrapper
// (the chain reads `__mmap <- main`, skipping `do_mmap_anon`). Issuing the
// `syscall` instruction inside the (always_inline) helper puts the sample IP in
// the named scenario function itself, so every recorded stack starts with the
// function that performed the rule: `do_mmap_anon <- main <- __libc_start_call_main`.
//
// The maps dump uses only open/read/write/close into static buffers: no stdio,
// no malloc, nothing that could mmap/brk after the snapshot. The caller exits
// with sys_exit_group() right after, so the snapshot is the process's end state.
#ifndef PAGEBLAME_TRACES_SYS_H_
#define PAGEBLAME_TRACES_SYS_H_

#if !defined(__x86_64__)
#error "the trace programs issue x86-64 syscalls directly"
#endif

#include <fcntl.h>
#include <stddef.h>
#include <sys/syscall.h>

#define PG 4096UL

static inline __attribute__((always_inline)) long sc6(long n, long a1, long a2,
                                                      long a3, long a4, long a5,
                                                      long a6) {
  long ret;
  register long r10 __asm__("r10") = a4;
  register long r8 __asm__("r8") = a5;
  register long r9 __asm__("r9") = a6;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8),
                     "r"(r9)
                   : "rcx", "r11", "memory");
  return ret;
}

// Each returns the kernel's raw result: an address / 0 on success, -errno on
// failure (brk returns the current break, never an errno).
#define RAW_MMAP(addr, len, prot, flags, fd, off)                          \
  sc6(SYS_mmap, (long)(addr), (long)(len), (long)(prot), (long)(flags), \
      (long)(fd), (long)(off))
#define RAW_MUNMAP(addr, len) \
  sc6(SYS_munmap, (long)(addr), (long)(len), 0, 0, 0, 0)
#define RAW_MREMAP(old, old_len, new_len, flags, new_addr)                  \
  sc6(SYS_mremap, (long)(old), (long)(old_len), (long)(new_len), \
      (long)(flags), (long)(new_addr), 0)
#define RAW_BRK(addr) sc6(SYS_brk, (long)(addr), 0, 0, 0, 0, 0)
#define RAW_MPROTECT(addr, len, prot) \
  sc6(SYS_mprotect, (long)(addr), (long)(len), (long)(prot), 0, 0, 0)
#define RAW_PKEY_MPROTECT(addr, len, prot, pkey)                    \
  sc6(SYS_pkey_mprotect, (long)(addr), (long)(len), (long)(prot), \
      (long)(pkey), 0, 0)
#define RAW_MADVISE(addr, len, advice) \
  sc6(SYS_madvise, (long)(addr), (long)(len), (long)(advice), 0, 0, 0)
#define RAW_OPEN(path, flags, mode) \
  sc6(SYS_open, (long)(path), (long)(flags), (long)(mode), 0, 0, 0)
#define RAW_READ(fd, buf, n) \
  sc6(SYS_read, (long)(fd), (long)(buf), (long)(n), 0, 0, 0)
#define RAW_WRITE(fd, buf, n) \
  sc6(SYS_write, (long)(fd), (long)(buf), (long)(n), 0, 0, 0)
#define RAW_CLOSE(fd) sc6(SYS_close, (long)(fd), 0, 0, 0, 0, 0)
#define RAW_RENAME(from, to) \
  sc6(SYS_rename, (long)(from), (long)(to), 0, 0, 0, 0)
#define RAW_GETPID() sc6(SYS_getpid, 0, 0, 0, 0, 0, 0)

static inline void sys_exit_group(int code) {
  sc6(SYS_exit_group, code, 0, 0, 0, 0, 0);
  __builtin_unreachable();
}

static inline size_t str_len(const char* s) {
  size_t n = 0;
  while (s[n]) ++n;
  return n;
}

// Appends s to buf at *pos (bounded by cap, always NUL-terminated).
static inline void str_append(char* buf, size_t cap, size_t* pos,
                              const char* s) {
  while (*s && *pos + 1 < cap) buf[(*pos)++] = *s++;
  buf[*pos] = 0;
}

static inline void str_append_dec(char* buf, size_t cap, size_t* pos,
                                  unsigned long v) {
  char tmp[24];
  int n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  char out[24];
  for (int i = 0; i < n; ++i) out[i] = tmp[n - 1 - i];
  out[n] = 0;
  str_append(buf, cap, pos, out);
}

static inline void str_append_hex(char* buf, size_t cap, size_t* pos,
                                  unsigned long v) {
  char out[20];
  int n = 0;
  for (int shift = 60; shift >= 0; shift -= 4) {
    int d = (int)((v >> shift) & 15);
    if (d || n || shift == 0) out[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
  }
  out[n] = 0;
  str_append(buf, cap, pos, "0x");
  str_append(buf, cap, pos, out);
}

static inline void write_str(int fd, const char* s) {
  RAW_WRITE(fd, s, str_len(s));
}

// Builds "DIR/NAME.PID<suffix>" into out.
static inline void maps_path(char* out, size_t cap, const char* dir,
                             const char* name, long pid, const char* suffix) {
  size_t pos = 0;
  out[0] = 0;
  str_append(out, cap, &pos, dir);
  str_append(out, cap, &pos, "/");
  str_append(out, cap, &pos, name);
  str_append(out, cap, &pos, ".");
  str_append_dec(out, cap, &pos, (unsigned long)pid);
  str_append(out, cap, &pos, suffix);
}

// Copies /proc/self/maps to `path` via a temporary name and rename(), so a
// reader polling for `path` never sees a half-written file. Returns 0 or -errno.
// Static storage: the caller may be any thread, but only one dumps at a time.
static char g_maps_buf[1 << 20];
static char g_tmp_path[4096];
static inline long dump_maps_to(const char* path) {
  long in = RAW_OPEN("/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);
  if (in < 0) return in;
  size_t used = 0;
  for (;;) {
    long n = RAW_READ(in, g_maps_buf + used, sizeof(g_maps_buf) - used);
    if (n < 0) {
      RAW_CLOSE(in);
      return n;
    }
    if (n == 0 || used + (size_t)n >= sizeof(g_maps_buf)) {
      used += (size_t)n;
      break;
    }
    used += (size_t)n;
  }
  RAW_CLOSE(in);
  size_t pos = 0;
  g_tmp_path[0] = 0;
  str_append(g_tmp_path, sizeof(g_tmp_path), &pos, path);
  str_append(g_tmp_path, sizeof(g_tmp_path), &pos, ".tmp");
  long out = RAW_OPEN(g_tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) return out;
  size_t off = 0;
  while (off < used) {
    long n = RAW_WRITE(out, g_maps_buf + off, used - off);
    if (n <= 0) {
      RAW_CLOSE(out);
      return n < 0 ? n : -5;
    }
    off += (size_t)n;
  }
  RAW_CLOSE(out);
  return RAW_RENAME(g_tmp_path, path);
}

#endif  // PAGEBLAME_TRACES_SYS_H_
