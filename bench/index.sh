#!/usr/bin/env bash
# index.sh — what the recording's index (TRACE.index, issue 42) saves: records
# bench/churn.c with `pageblame record` (DWARF stacks, as record does by
# default), then times the first command on it (read, decompress, unwind,
# replay, write TRACE.index), a second one (loads the index) and the same
# with --no-index, and prints the sizes: trace, index, index per million
# calls. Run by hand as root (perf needs the tracepoints); not part of
# scripts/test.
#
#   bench/index.sh [ITERS] [THREADS]     (default 20000 per thread, 2 threads)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ITERS=${1:-20000}
THREADS=${2:-2}
OUT=$ROOT/bench/out/index
PB=$ROOT/build/bin/pageblame
mkdir -p "$OUT"
cmake --build "$ROOT/build" --target pageblame >/dev/null
cc -O1 -fno-omit-frame-pointer -pthread -I"$ROOT" -o "$OUT/churn" "$ROOT/bench/churn.c"
rm -f "$OUT/churn.data" "$OUT/churn.data.index" "$OUT/churn.data.rss"
"$PB" record -o "$OUT/churn.data" --rss-every 0 -- "$OUT/churn" "$OUT" churn "$THREADS" "$ITERS" 2>"$OUT/record.log" ||
  { tail -5 "$OUT/record.log"; exit 1; }
rm -f "$OUT/churn.data.index"

# seconds and peak KiB of one command
timed() { /usr/bin/time -f "%e %M" "$@" >/dev/null 2>"$OUT/time.log"; tail -1 "$OUT/time.log"; }
first=$(timed "$PB" growth -i "$OUT/churn.data")
second=$(timed "$PB" growth -i "$OUT/churn.data")
replay=$(timed "$PB" growth -i "$OUT/churn.data" --no-index)
calls=$("$PB" maps -i "$OUT/churn.data" -v 2>&1 >/dev/null | grep -o '[0-9]* calls' | head -1 | cut -d' ' -f1)
trace_bytes=$(stat -c %s "$OUT/churn.data")
index_bytes=$(stat -c %s "$OUT/churn.data.index")
printf '%-34s %10s %10s\n' "command on $(basename "$OUT")/churn.data" "seconds" "peak MiB"
for row in "first (replays, writes the index):$first" "second (loads the index):$second" "--no-index (replays):$replay"; do
  label=${row%%:*} v=${row#*:}
  printf '%-34s %10s %10.1f\n' "$label" "${v% *}" "$(echo "${v#* } / 1024" | bc -l)"
done
printf 'calls %s; trace %.1f MiB; index %.2f MiB (%.1f %% of the trace; %.1f MiB per million calls)\n' \
  "$calls" "$(echo "$trace_bytes / 1048576" | bc -l)" "$(echo "$index_bytes / 1048576" | bc -l)" \
  "$(echo "100 * $index_bytes / $trace_bytes" | bc -l)" "$(echo "$index_bytes / 1048576 * 1000000 / $calls" | bc -l)"
