#!/usr/bin/env bash
# lost.sh — whether perf loses events under `record --max-size` (issue 42):
# records traces/src/rotate.c (mmap churn through 12 frames over 2 KiB of
# random stack bytes, DWARF stacks) at PAUSE_US between call pairs (0: as
# fast as the machine goes, a benchmark loop; 600: rotate's default, a busy
# service) for SECONDS, RUNS times each without and with --max-size SIZE,
# one after the other, and prints per run: the memory calls recorded and
# their rate, the events perf lost (its LOST records, as record's summary
# counts them), and with --max-size the chunks (how often perf cut), what
# perf wrote, the disk at its most (record's own watch, every 50 ms) against
# SIZE, and the folding's share of a core (its wall time while it reads a
# chunk: an upper bound of its CPU). Run by hand as root; not part of
# scripts/test. Another machine load changes the rates: repeat, read ranges.
#
# NICE0=1 puts perf back at nice 0 one second in (record raises it to -10
# with --max-size once perf records): how the cuts went before that raise.
# PB=path: another pageblame binary (default build/bin/pageblame).
#
#   bench/lost.sh [SECONDS] [PAUSE_US] [SIZE] [RUNS]     (default 6 s, 0, 8M, 2)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_=${1:-6}
PAUSE=${2:-0}
SIZE=${3:-8M}
RUNS=${4:-2}
OUT=$ROOT/bench/out/lost
PB=${PB:-$ROOT/build/bin/pageblame}
mkdir -p "$OUT"
chmod 700 "$OUT"  # --max-size records only where no one else can make files
cmake --build "$ROOT/build" --target pageblame rotate_program >/dev/null

# One recording: NAME, then record's own arguments.
run() {
  local name=$1; shift
  local dir=$OUT/$name
  rm -rf "$dir"; mkdir -p "$dir"; chmod 700 "$dir"
  "$PB" record "$@" -o "$dir/t.data" -- "$ROOT/build/tests/rotate" "$dir" "$SECONDS_" "$PAUSE" \
    2>"$dir/record.log" &
  local recorder=$!
  if [ "${NICE0:-}" = 1 ]; then
    sleep 1
    local perf
    perf=$(pgrep -P "$recorder" -x perf || true)
    if [ -n "$perf" ]; then renice -n 0 -p "$perf" >/dev/null; fi
  fi
  wait "$recorder" || { tail -5 "$dir/record.log"; return 1; }
  local log=$dir/record.log
  local calls span lost chunks
  calls=$(grep -o '[0-9]* memory calls' "$log" | cut -d' ' -f1)
  span=$(grep -o 'memory calls of [0-9]* process.* over [0-9.]* s' "$log" | grep -o '[0-9.]* s$' | cut -d' ' -f1)
  lost=$(grep -o 'perf lost [0-9]* events' "$log" | cut -d' ' -f3 || true)
  chunks=$(grep -c 'perf record: Dump' "$log" || true)
  printf '%-10s %8s calls, %6.0f calls/s, perf lost %7s events' "$name" "$calls" \
    "$(echo "$calls / $span" | bc -l)" "${lost:-0}"
  local summary
  summary=$(grep -- '^pageblame record: --max-size' "$log" || true)
  if [ -n "$summary" ]; then
    local wrote disk avg folded
    wrote=$(echo "$summary" | grep -o 'perf wrote [0-9.]* [KMG]iB' | cut -d' ' -f3-)
    disk=$(echo "$summary" | grep -o 'took [0-9.]* [KMG]iB of disk at most' | cut -d' ' -f2-3)
    avg=$(echo "$summary" | grep -o '[0-9.]* ms a chunk on average' | cut -d' ' -f1)
    folded=$(echo "$summary" | grep -o 'in [0-9]* chunks' | cut -d' ' -f2)
    printf '; %s chunks (a cut every %.2f s), perf wrote %s, disk at most %s for %s, folding %.0f %% of a core' \
      "$chunks" "$(echo "$span / $chunks" | bc -l)" "$wrote" "$disk" "$SIZE" \
      "$(echo "$avg * $folded / 10 / $span" | bc -l)"
  fi
  printf '\n'
}

echo "rotate at PAUSE_US $PAUSE for $SECONDS_ s; load $(cut -d' ' -f1-3 /proc/loadavg)${NICE0:+; perf put back at nice 0}"
for i in $(seq 1 "$RUNS"); do
  run "plain-$i"
  run "max-$i" --max-size "$SIZE"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
