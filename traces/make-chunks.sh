#!/bin/bash
# make-chunks.sh — traces/chunks/: two small recordings perf wrote in chunks
# (`perf record --switch-output`, as `record --max-size` makes perf do), for
# the perf script plugin on one chunk of a recording
# (plugin/plugin_perf_test.cc, PluginChunks*). Run as root (perf needs the
# tracepoints):
#
#   sudo traces/make-chunks.sh
#
# Runs bin/rotate (src/rotate.c) for 3.5 s at a slow churn (a call pair every
# 20 ms), recorded with frame-pointer stacks and a new chunk every second:
#   chunks/plain.data.<stamp>   4-5 chunks, each a perf.data perf reads alone
#   chunks/zstd.data.<stamp>    the same with -z: one zstd stream across the
#                               chunks, so perf reads only the first alone
#   chunks/{plain,zstd}.PID.tsv the program's truth (truth.h): its kept blocks
# Like record.sh, it runs in a private mount namespace in which this
# checkout's traces/ is /work/main/traces, so the chunks name
# /work/main/traces/bin/rotate (found in any checkout by build id:
# buildid-cache/).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
RECORDED_ROOT=/work/main/traces
[[ $EUID -eq 0 ]] || { echo "make-chunks.sh: run as root" >&2; exit 1; }
if [[ $HERE != "$RECORDED_ROOT" && -z ${MAKE_CHUNKS_IN_NS:-} ]]; then
  [[ -d $RECORDED_ROOT ]] || { echo "make-chunks.sh: no $RECORDED_ROOT to mount over" >&2; exit 1; }
  exec env MAKE_CHUNKS_IN_NS=1 unshare --mount --propagation private -- \
    bash -c 'mount --bind "$1" "$2" && exec "$2/make-chunks.sh"' _ "$HERE" "$RECORDED_ROOT"
fi
EVENTS=()
for s in mmap munmap brk mremap mprotect pkey_mprotect madvise; do
  EVENTS+=(-e "syscalls:sys_enter_$s" -e "syscalls:sys_exit_$s")
done
WORK=$(mktemp -d /tmp/pageblame-chunks.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
record() {  # NAME [perf options]
  local name=$1
  shift
  mkdir "$WORK/$name"
  (cd "$WORK/$name" && perf record -q -g "${EVENTS[@]}" "$@" --switch-output=1s -o "$name.data" -- \
    "$HERE/bin/rotate" "$WORK/$name" 3.5 20000)
  local n
  n=$(ls "$WORK/$name"/"$name".data.* | wc -l)
  [[ $n -ge 3 ]] || { echo "make-chunks.sh: $name: only $n chunks" >&2; exit 1; }
  for f in "$WORK/$name"/rotate.*.tsv; do mv "$f" "$WORK/$name/$name.${f##*/rotate.}"; done
}
record plain
record zstd -z
rm -rf "$HERE/chunks"
mkdir "$HERE/chunks"
cp "$WORK"/plain/plain.data.* "$WORK"/plain/plain.*.tsv "$WORK"/zstd/zstd.data.* "$WORK"/zstd/zstd.*.tsv "$HERE/chunks/"
ls -l "$HERE/chunks"
