#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static void* grab(size_t n) {
  void* p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p != MAP_FAILED) memset(p, 1, n);
  return p;
}

int main(void) {
  void* a = grab(4096 * 4);
  void* b = grab(4096 * 16);
  munmap((char*)a + 4096, 4096);
  void* c = mremap(b, 4096 * 16, 4096 * 32, MREMAP_MAYMOVE);
  void* brk0 = sbrk(0);
  sbrk(8192);
  pid_t pid = fork();
  if (pid == 0) {
    grab(4096 * 2);
    _exit(0);
  }
  waitpid(pid, NULL, 0);
  munmap(c, 4096 * 32);
  (void)brk0;
  return 0;
}
