#!/usr/bin/env bash
# rss_overhead.sh — what resident bytes cost the answers: records bench/churn
# with `pageblame record --rss-every 0.2` (frame pointers), then times maps
# --json, attribute and growth on that trace with its TRACE.rss and with
# --no-rss, RUNS times each, interleaved, and prints the medians and their
# ratio (the target: with rss no slower than 1.1x without). Run by hand as
# root (perf needs the tracepoints); not part of scripts/test.
#
#   bench/rss_overhead.sh [ITERS] [RUNS]     (default 600000 per thread, 5 runs)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
PB=$ROOT/build/bin/pageblame
ITERS=${1:-600000}
RUNS=${2:-5}
OUT=$HERE/out/rss
mkdir -p "$OUT"
gcc -O1 -fno-omit-frame-pointer -I"$ROOT" -pthread "$HERE/churn.c" -o "$OUT/churn"
rm -f "$OUT/churn.data" "$OUT/churn.data.rss" "$OUT/churn.data.old" "$OUT/churn.data.old.rss"
"$PB" record --call-graph fp --rss-every 0.2 -o "$OUT/churn.data" -- "$OUT/churn" "$OUT" churn 4 "$ITERS" 2>&1 |
  grep -E 'memory calls|residency snapshots' || true
PID=$("$PB" maps --json -i "$OUT/churn.data" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["pid"])')
"$PB" maps -i "$OUT/churn.data" --pid "$PID" 2>/dev/null | awk 'NR>3 {split($1, a, "-"); print "0x" a[1], "0x" a[2]}' \
  > "$OUT/regions.txt"
echo "trace: $(du -h "$OUT/churn.data" | cut -f1), snapshots: $(du -h "$OUT/churn.data.rss" | cut -f1), $(wc -l < "$OUT/regions.txt") regions"

median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
time_one() { /usr/bin/time -f %e "$@" >/dev/null 2>"$OUT/time.err" || true; tail -1 "$OUT/time.err"; }

printf '%-10s %10s %10s %7s\n' command "with rss" "--no-rss" ratio
for cmd in "maps --json" "attribute --pid $PID --regions $OUT/regions.txt" "growth"; do
  with=(); without=()
  for _ in $(seq "$RUNS"); do
    with+=("$(time_one $PB $cmd -i "$OUT/churn.data")")
    without+=("$(time_one $PB $cmd -i "$OUT/churn.data" --no-rss)")
  done
  w=$(printf '%s\n' "${with[@]}" | median)
  n=$(printf '%s\n' "${without[@]}" | median)
  printf '%-10s %9ss %9ss %6.2fx\n' "${cmd%% *}" "$w" "$n" "$(echo "$w / $n" | bc -l)"
done
