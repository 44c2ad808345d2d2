#!/usr/bin/env bash
# fold.sh — what `record --max-size` (issue 42) costs and keeps: records
# traces/src/rotate.c (kept blocks, then mmap churn through deep stacks of
# random bytes, ~2.5 k calls/s) for SECONDS with --max-size SIZE, watches the
# recording's disk every 10 ms meanwhile, and prints: what perf wrote, the
# chunks, the folding time per chunk and its share of a core over the
# recording (the folding thread's wall time while it reads a chunk: an upper
# bound of its CPU), the disk at its most against SIZE, the index's size per
# million calls, and whether it was thinned; the checkpoints written while
# recording (count, time each, bytes) and the recorder's resident memory
# (VmRSS, every 10 ms: at 1 s, half way, 1 s before the program ends, and
# at its most). Run by hand as root (perf needs the tracepoints); not part of
# scripts/test.
#
#   bench/fold.sh [SECONDS] [SIZE] [CHECKPOINT_EVERY] [MAX_MEMORY]
#   (default 20 s, 4M, 60, and --max-memory's default: SIZE)
#   bench/fold.sh SECONDS none      the same recording without --max-size:
#   pageblame's own CPU then is the baseline the folding's is measured on
#   (the summary's "pageblame used X s of CPU", every thread of it).
#   PAUSE=US: rotate's pause after each call pair (its default 600 us:
#   ~2.4 k calls/s; 150: ~7 k); PB=path: another pageblame binary.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_=${1:-20}
SIZE=${2:-4M}
EVERY=${3:-60}
MEMORY=${4:-$SIZE}
OUT=$ROOT/bench/out/fold
PAUSE=${PAUSE:-600}
mkdir -p "$OUT"
if [ -z "${PB:-}" ]; then
  PB=$ROOT/build/bin/pageblame
  cmake --build "$ROOT/build" --target pageblame rotate_program >/dev/null
elif [ ! -x "$ROOT/build/tests/rotate" ]; then
  cmake --build "$ROOT/build" --target rotate_program >/dev/null
fi
rm -rf "$OUT"/t.data* "$OUT"/rotate.* "$OUT/stop"
echo 0 >"$OUT/peak"
echo 0 >"$OUT/rss_peak"
# The recording's bytes on disk (allocated blocks), every 10 ms, the most kept.
(peak=0; while [ ! -e "$OUT/stop" ]; do
   b=$(find "$OUT" -maxdepth 1 -name 't.data*' -type f -printf '%b\n' 2>/dev/null | awk '{s+=$1*512} END {print s+0}' || true)
   if [ "$b" -gt "$peak" ]; then peak=$b; echo "$peak" >"$OUT/peak"; fi
   sleep 0.01
 done) &
watcher=$!
FOLD=(--max-size "$SIZE" --checkpoint-every "$EVERY" --max-memory "$MEMORY")
[ "$SIZE" = none ] && FOLD=()
"$PB" record "${FOLD[@]}" -o "$OUT/t.data" -- "$ROOT/build/tests/rotate" "$OUT" "$SECONDS_" "$PAUSE" 2>"$OUT/record.log" &
recorder=$!
# The recorder's resident memory every 10 ms: at 1 s, half way, 1 s before
# the program ends (the folded state while it records), and the most (the
# stop's encoding included).
# Meanwhile the folding's own CPU: utime+stime of the recorder's threads
# named pb-fold (the folding thread and the replay and symbol threads it
# starts, which inherit its name), each at its last look before it ended.
echo 0 >"$OUT/fold_ticks"
(peak=0; start=$(date +%s.%N); at1=0; mid=0; late=0; declare -A ticks
 while kill -0 "$recorder" 2>/dev/null; do
   while read -r tid tk; do ticks[$tid]=$tk; done < <(awk '$2 == "(pb-fold)" {n = split(FILENAME, p, "/"); print p[n-1], $14 + $15}' \
     /proc/"$recorder"/task/*/stat 2>/dev/null || true)
   sum=0; for tk in "${ticks[@]}"; do sum=$((sum + tk)); done; echo "$sum" >"$OUT/fold_ticks"
   kb=$(awk '/^VmRSS/ {print $2}' "/proc/$recorder/status" 2>/dev/null || echo 0); kb=${kb:-0}
   if [ "$kb" -gt "$peak" ]; then peak=$kb; fi
   t=$(echo "$(date +%s.%N) - $start" | bc)
   if [ "$at1" = 0 ] && [ "$(echo "$t > 1" | bc)" = 1 ]; then at1=$kb; fi
   if [ "$mid" = 0 ] && [ "$(echo "$t > $SECONDS_ / 2" | bc)" = 1 ]; then mid=$kb; fi
   if [ "$(echo "$t < $SECONDS_ - 1" | bc)" = 1 ]; then late=$kb; fi
   echo "$at1 $mid $late $peak" >"$OUT/rss_peak"
   sleep 0.01
 done) &
rss_watcher=$!
wait "$recorder" || { touch "$OUT/stop"; tail -5 "$OUT/record.log"; exit 1; }
wait "$rss_watcher" || true
# (a chunk removed between find's listing and its stat is no failure)
touch "$OUT/stop"; wait "$watcher" || true; rm -f "$OUT/stop"
grep -- 'pageblame used' "$OUT/record.log" | sed 's/^pageblame record: //' || true
# The same per thousand calls recorded (the folding's cost is the difference
# between this with SIZE and with none, at the same rate).
awk '/pageblame used/ {cpu=$5} /memory calls of/ {for (i=1;i<=NF;i++) if ($i=="memory") calls=$(i-1)}
     END {if (calls > 0) printf "pageblame CPU per 1 k calls: %.2f ms (%d calls)\n", cpu * 1e6 / calls, calls}' "$OUT/record.log"
if [ "$SIZE" = none ]; then
  read -r rss_1 rss_mid rss_late rss_peak <"$OUT/rss_peak"
  printf 'recorder RSS: %.1f MiB at most; calls %s\n' "$(echo "$rss_peak / 1024" | bc -l)" \
    "$(grep -o '[0-9]* memory calls' "$OUT/record.log" | cut -d' ' -f1)"
  exit 0
fi
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
fold_s=$(echo "$(cat "$OUT/fold_ticks") / $(getconf CLK_TCK)" | bc -l)
printf 'the folding threads used %.2f s of CPU over %s s: %.2f %% of a core, %.2f ms per 1 k calls\n' \
  "$fold_s" "$SECONDS_" "$(echo "$fold_s * 100 / $SECONDS_" | bc -l)" "$(echo "$fold_s * 1000000 / $calls" | bc -l)"
grep -- 'checkpoints of' "$OUT/record.log" | sed 's/^pageblame record: //' || echo "no checkpoint while recording"
grep -- 'the folded index took' "$OUT/record.log" | sed 's/^pageblame record: //' || true
read -r rss_1 rss_mid rss_late rss_peak <"$OUT/rss_peak"
printf 'recorder RSS: %.1f MiB at 1 s, %.1f MiB half way, %.1f MiB 1 s before the end, %.1f MiB at most\n' \
  "$(echo "$rss_1 / 1024" | bc -l)" "$(echo "$rss_mid / 1024" | bc -l)" "$(echo "$rss_late / 1024" | bc -l)" \
  "$(echo "$rss_peak / 1024" | bc -l)"
