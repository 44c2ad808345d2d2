#!/usr/bin/env bash
# fold.sh — what `record --max-size` (issue 42) costs and keeps: records
# traces/src/rotate.c (kept blocks, then mmap churn through deep stacks of
# random bytes, ~2.5 k calls/s) for SECONDS with --max-size SIZE, watches the
# recording's disk every 10 ms meanwhile, and prints: what perf wrote, the
# chunks, the folding time per chunk and its share of a core over the
# recording (the folding thread's wall time while it reads a chunk: an upper
# bound of its CPU), the disk at its most against SIZE, the index's size per
# million calls, and whether it was thinned. Run by hand as root (perf needs
# the tracepoints); not part of scripts/test.
#
#   bench/fold.sh [SECONDS] [SIZE]     (default 20 s, 4M)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_=${1:-20}
SIZE=${2:-4M}
OUT=$ROOT/bench/out/fold
PB=$ROOT/build/bin/pageblame
mkdir -p "$OUT"
cmake --build "$ROOT/build" --target pageblame rotate_program >/dev/null
rm -rf "$OUT"/t.data* "$OUT"/rotate.* "$OUT/stop"
echo 0 >"$OUT/peak"
# The recording's bytes on disk (allocated blocks), every 10 ms, the most kept.
(peak=0; while [ ! -e "$OUT/stop" ]; do
   b=$(find "$OUT" -maxdepth 1 -name 't.data*' -type f -printf '%b\n' 2>/dev/null | awk '{s+=$1*512} END {print s+0}' || true)
   if [ "$b" -gt "$peak" ]; then peak=$b; echo "$peak" >"$OUT/peak"; fi
   sleep 0.01
 done) &
watcher=$!
  "$PB" record --max-size "$SIZE" -o "$OUT/t.data" -- "$ROOT/build/tests/rotate" "$OUT" "$SECONDS_" 2>"$OUT/record.log" ||
  { touch "$OUT/stop"; tail -5 "$OUT/record.log"; exit 1; }
# (a chunk removed between find's listing and its stat is no failure)
touch "$OUT/stop"; wait "$watcher" || true; rm -f "$OUT/stop"
summary=$(grep -- '^pageblame record: --max-size' "$OUT/record.log")
calls=$(grep -o '[0-9]* memory calls' "$OUT/record.log" | cut -d' ' -f1)
chunks=$(grep -c 'perf record: Dump' "$OUT/record.log" || true)
index_bytes=$(stat -c %s "$OUT/t.data.index")
avg_ms=$(echo "$summary" | grep -o '[0-9.]* ms a chunk on average' | cut -d' ' -f1)
folded=$(echo "$summary" | grep -o 'in [0-9]* chunks' | cut -d' ' -f2)
echo "$summary" | sed 's/^pageblame record: //'
printf 'calls %s in %s s; %s chunks; disk at most %.2f MiB (watched every 10 ms) for --max-size %s\n' \
  "$calls" "$SECONDS_" "$chunks" "$(echo "$(cat "$OUT/peak") / 1048576" | bc -l)" "$SIZE"
printf 'index %.2f MiB (%.2f MiB per million calls); folding %.2f s over %s s: %.2f %% of a core\n' \
  "$(echo "$index_bytes / 1048576" | bc -l)" "$(echo "$index_bytes / 1048576 * 1000000 / $calls" | bc -l)" \
  "$(echo "$avg_ms * $folded / 1000" | bc -l)" "$SECONDS_" "$(echo "$avg_ms * $folded / 10 / $SECONDS_" | bc -l)"
