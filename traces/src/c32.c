// 32-bit compat task, no libc: int $0x80 syscalls. i386 numbers:
// mmap2=192, munmap=91, brk=45, mremap=163, chdir=12, execve=11, getpid=20
static long sc(long n, long a, long b, long c, long d, long e, long f) {
  long r;
  __asm__ volatile("push %%ebp\n mov %7, %%ebp\n int $0x80\n pop %%ebp"
                   : "=a"(r) : "a"(n), "b"(a), "c"(b), "d"(c), "S"(d), "D"(e), "m"(f) : "memory");
  return r;
}
void _start(void) {
  sc(192, 0, 0x5000, 3, 0x22, -1, 0);      // mmap2 anon 5 pages
  long b = sc(45, 0, 0, 0, 0, 0, 0);       // brk(0)
  sc(45, b + 0x3000, 0, 0, 0, 0, 0);       // grow heap 3 pages
  sc(12, (long)"/", 0, 0, 0, 0, 0);        // chdir("/") : nr 12 is brk on x86_64
  sc(37, sc(20,0,0,0,0,0,0), 19, 0, 0, 0, 0);  // kill(getpid(), SIGSTOP)
  for (;;) ;
}
