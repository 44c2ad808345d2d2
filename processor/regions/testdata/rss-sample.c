// The process behind rss-*.output: mappings whose resident pages are known,
// then it stops itself (SIGSTOP) so that pmap and smaps see one state.
// Prints "touched START END PAGES" for the anonymous mapping it touched in
// part and "reserved START END" for its PROT_NONE reservation.
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>

int main(void) {
  const long page = 4096, pages = 64;
  char* a = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  char* r = mmap(NULL, 32 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (a == MAP_FAILED || r == MAP_FAILED) return 1;
  madvise(a, pages * page, MADV_NOHUGEPAGE);  // one fault, one page
  long touched = 0;
  for (long i = 0; i < pages; i += 4, ++touched) a[i * page] = 1;
  printf("touched %lx %lx %ld\n", (unsigned long)a, (unsigned long)(a + pages * page), touched);
  printf("reserved %lx %lx\n", (unsigned long)r, (unsigned long)(r + 32 * page));
  fflush(stdout);
  raise(SIGSTOP);
  return 0;
}
