// pageblame-perf-poll.so: loaded into the perf that `pageblame record -p PID`
// runs per thread (LD_PRELOAD), so that perf does not spin once a thread it
// records has ended.
//
// Why: perf record attached per thread opens each event once per thread of
// the process (and per CPU) and polls all those descriptors. When a thread
// ends, the kernel hangs its events up (perf_poll() returns EPOLLHUP for an
// exited event without children); perf's main loop then drops them with
// fdarray__filter() (tools/lib/api/fd/array.c), which sets the entry's
// `events` to 0 but leaves its `fd` in the array. poll(2) reports POLLHUP and
// POLLERR whatever `events` asks for, so from then on every poll() returns at
// once and perf loops on a core for as long as it records (perf 6.1, measured
// in docs/performance.md: "Woken up 1463171 times" in 10 s, 60-160 % of a
// core). The fix perf's maintainers were sent does exactly this inside
// fdarray__filter(): the entry's fd becomes -1, which poll(2) skips.
//
// What this does: perf's calls to poll() go through the function below,
// which hides every entry whose `events` is 0 (poll(2) ignores a negative
// fd and reports nothing for it), polls, and puts the descriptors back.
// In perf an entry with `events` 0 is one fdarray__filter() is done with, and
// nothing reads its `revents` again; every live entry asks for POLLIN. So
// perf sees what it expects, minus the spin. In any other program (a shell
// wrapper that execs perf passes through here first) poll() is left exactly
// as it is: the fix applies only where /proc/self/exe is named perf*.
//
// perf's side-band thread (BPF events) polls descriptors it never filters;
// `record` turns it off (--no-bpf-event), as it records no BPF events.
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// Whether this process is perf (set once, at load).
static int fix_active;

__attribute__((constructor)) static void DecideFix(void) {
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return;
  exe[n] = '\0';
  const char* slash = strrchr(exe, '/');
  const char* base = slash != NULL ? slash + 1 : exe;
  fix_active = strncmp(base, "perf", 4) == 0;
}

// poll(2) itself, through ppoll (a symbol this library does not replace).
static int RealPoll(struct pollfd* fds, nfds_t n, int timeout_ms) {
  struct timespec ts;
  struct timespec* t = NULL;
  if (timeout_ms >= 0) {
    ts.tv_sec = timeout_ms / 1000;
    ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
    t = &ts;
  }
  return ppoll(fds, n, t, NULL);
}

int poll(struct pollfd* fds, nfds_t n, int timeout_ms) {
  if (!fix_active || fds == NULL || n == 0) return RealPoll(fds, n, timeout_ms);
  // Which entries were hidden, one bit each: on the stack for the arrays
  // perf makes on small machines, else on the heap (and without the fix if
  // that fails).
  enum { kStackBits = 1 << 16 };
  unsigned char stack_bits[kStackBits / 8];
  unsigned char* hidden = stack_bits;
  const size_t bytes = (n + 7) / 8;
  if (n > kStackBits) {
    hidden = calloc(bytes, 1);
    if (hidden == NULL) return RealPoll(fds, n, timeout_ms);
  } else {
    memset(hidden, 0, bytes);
  }
  for (nfds_t i = 0; i < n; ++i) {
    if (fds[i].events == 0 && fds[i].fd >= 0) {
      hidden[i / 8] |= (unsigned char)(1u << (i % 8));
      fds[i].fd = -fds[i].fd - 2;  // < -1, and back by the same formula
    }
  }
  const int ready = RealPoll(fds, n, timeout_ms);
  for (nfds_t i = 0; i < n; ++i) {
    if (hidden[i / 8] & (1u << (i % 8))) {
      fds[i].fd = -fds[i].fd - 2;
      fds[i].revents = 0;
    }
  }
  if (hidden != stack_bits) free(hidden);
  return ready;
}
