#!/bin/bash
# make-core.sh — the ELF core test files in traces/cores/ (run as root: gcore
# attaches with ptrace):
#
#   sudo traces/make-core.sh
#
# Builds src/coremaps.c, runs it until it has mapped its regions and saved
# its /proc/PID/maps, takes a core with gdb's gcore at that moment, and keeps
#   cores/gcore-coremaps.core   the core trimmed by trim_core.py (ELF header,
#                               program headers, notes; segment data cut off)
#   cores/gcore-coremaps.maps   /proc/PID/maps when the core was taken
# The tests compare the two (processor/regions/core_file_parser_test.cc).
# Re-running changes the pid, the program's load addresses and the temp
# directory in the file names: tests read them from the .maps file.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
OUT="$HERE/cores"
WORK=$(mktemp -d /tmp/pageblame-core.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT"
gcc -O1 -g -Wall -Wextra -Werror -o "$WORK/coremaps" "$HERE/src/coremaps.c"

"$WORK/coremaps" "$WORK" &
pid=$!
for _ in $(seq 100); do
  [[ -e "$WORK/coremaps.$pid.ready" ]] && break
  sleep 0.1
done
[[ -e "$WORK/coremaps.$pid.ready" ]] || { echo "make-core.sh: coremaps did not start" >&2; exit 1; }
gcore -o "$WORK/core" "$pid" >/dev/null
kill -TERM "$pid"
wait "$pid"

python3 "$HERE/trim_core.py" "$WORK/core.$pid" "$OUT/gcore-coremaps.core"
cp "$WORK/coremaps.$pid.maps" "$OUT/gcore-coremaps.maps"
echo "make-core.sh: pid $pid: $(stat -c %s "$WORK/core.$pid") byte core trimmed to" \
     "$(stat -c %s "$OUT/gcore-coremaps.core") bytes in $OUT" >&2
