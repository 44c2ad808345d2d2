#!/bin/sh
# Regenerates the perf.data fixtures of perf_reader_test (run as root, from
# this directory, with perf 6.1). The tests assert facts that were checked
# against `perf report -D`, `perf script` and `perf evlist -v` on these exact
# files, so after re-recording, re-derive the expected values (see
# perf_reader_test.cc) with perf instead of copying them from our own output.
set -eu
D=$(pwd)
gcc -O1 -fno-omit-frame-pointer -o /tmp/mmap_prog "$D/mmap_prog.c"
cd /tmp
# File mode, as the seed workflow records (also raw_syscalls enter/exit).
perf trace record --call-graph fp \
  -e 'syscalls:*_mmap,syscalls:*_munmap,syscalls:*_brk,syscalls:*_mremap' \
  -o "$D/trace_record.data" ./mmap_prog
# File mode, plain perf record.
perf record -g -e syscalls:sys_enter_mmap,syscalls:sys_exit_mmap,syscalls:sys_enter_munmap,syscalls:sys_exit_munmap \
  -o "$D/record_g.data" ./mmap_prog
# Pipe mode.
perf record -g -e syscalls:sys_enter_mmap,syscalls:sys_exit_mmap,syscalls:sys_enter_brk,syscalls:sys_exit_brk \
  -o - ./mmap_prog > "$D/pipe.data"
# MMAP2 records carrying build ids (PERF_RECORD_MISC_MMAP_BUILD_ID).
perf record --buildid-mmap -g -e syscalls:sys_enter_munmap -o "$D/buildid_mmap.data" ./mmap_prog
chmod 644 "$D"/*.data
