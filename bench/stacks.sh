#!/usr/bin/env bash
# stacks.sh — peak memory per distinct call stack (issue 42): records
# bench/deep_stacks.c (frame-pointer stacks: each of 2^LEVELS paths maps and
# unmaps a page LEVELS+ frames deep, every call from its own stack, the outer
# frames shared), then runs commands that replay it or load its index and
# prints, for each, seconds, peak RSS and peak bytes per distinct stack.
# Run by hand as root (perf needs the tracepoints); not part of scripts/test.
# The recording is kept in bench/out/stacks and reused (REUSE=1) while its
# LEVELS match: recording 2^20 paths takes 1-2 minutes on the 2-core VM.
#
#   bench/stacks.sh [LEVELS]     (default 20: 2.1 M calls, 2.1 M stacks)
#   MAX_SIZE=4M bench/stacks.sh [LEVELS]   the same program recorded with
#   record --max-size (folded; not kept): prints the recording's disk at the
#   end, the folded index's size, the stacks (and frames) it holds and those
#   thinning left out, the index in memory at its most (what --max-memory
#   bounds) and the recorder's peak RSS.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LEVELS=${1:-20}
OUT=$ROOT/bench/out/stacks
TRACE=$OUT/deep$LEVELS.data
mkdir -p "$OUT"
# PB=/path/to/pageblame: another build's (e.g. main's, for a before/after).
if [[ -z ${PB:-} ]]; then
  PB=$ROOT/build/bin/pageblame
  cmake --build "$ROOT/build" --target pageblame >/dev/null
fi
if [[ -n ${MAX_SIZE:-} ]]; then
  cc -O1 -fno-omit-frame-pointer -o "$OUT/deep_stacks" "$ROOT/bench/deep_stacks.c"
  FOLDED=$OUT/folded$LEVELS.data
  rm -f "$FOLDED" "$FOLDED".*
  /usr/bin/time -f "%e %M" "$PB" record --max-size "$MAX_SIZE" -o "$FOLDED" --call-graph fp --rss-every 0 \
    -- "$OUT/deep_stacks" "$LEVELS" 2>"$OUT/record.log" || { tail -5 "$OUT/record.log"; exit 1; }
  read -r secs kib < <(tail -1 "$OUT/record.log")
  grep -o 'perf wrote [0-9.]* [KMG]iB in [0-9]* chunks' "$OUT/record.log" || true
  grep -o 'the recording took [0-9.]* [KMG]iB of disk at most' "$OUT/record.log" || true
  # What --max-memory bounds (the index in memory), at its most, and the thinnings.
  grep -o 'the folded index took [0-9.]* [KMG]iB of memory at most (--max-memory [0-9.]* [KMG]iB' "$OUT/record.log" || true
  grep -o '[0-9.]* [KMG]iB with the blocks made ahead for the replay; thinned in memory [0-9]* times' "$OUT/record.log" || true
  info=$("$PB" maps -i "$FOLDED" -v 2>&1 >/dev/null)
  printf 'record --max-size %s: %s s, recorder peak RSS %.1f MiB; disk now %.2f MiB; index %.2f MiB\n' \
    "$MAX_SIZE" "$secs" "$(echo "$kib / 1024" | bc -l)" \
    "$(du -cb "$FOLDED".* | tail -1 | cut -f1 | awk '{printf "%.6f", $1 / 1048576}')" \
    "$(echo "$(stat -c %s "$FOLDED.index") / 1048576" | bc -l)"
  grep -o '[0-9]* calls (' <<<"$info" | head -1 | sed 's/ calls ($/ calls replayed/' || true
  grep -o '[0-9]* unique stacks ([0-9]* frames)' <<<"$info" | sed 's/^/in the index: /' || true
  grep -o 'thinned this recording.s history at [0-9.]*: [^(]*' <<<"$info" || true
  exit 0
fi
if [[ ${REUSE:-1} != 1 || ! -s $TRACE ]]; then
  cc -O1 -fno-omit-frame-pointer -o "$OUT/deep_stacks" "$ROOT/bench/deep_stacks.c"
  rm -f "$TRACE" "$TRACE.index"
  "$PB" record -o "$TRACE" --call-graph fp --rss-every 0 -- "$OUT/deep_stacks" "$LEVELS" 2>"$OUT/record.log" ||
    { tail -5 "$OUT/record.log"; exit 1; }
fi

# calls, distinct stacks and their frames, from -v
info=$("$PB" maps -i "$TRACE" -v 2>&1 >/dev/null | grep ' calls (')
calls=$(grep -o '[0-9]* calls' <<<"$info" | cut -d' ' -f1)
stacks=$(grep -o '[0-9]* unique stacks' <<<"$info" | cut -d' ' -f1)
index=$(grep -o 'index [0-9.]* MiB' <<<"$info" | cut -d' ' -f2)
printf 'trace %s: %.1f MiB, %s calls, %s distinct stacks; the replayed index %s MiB (%.0f B a stack)\n' \
  "$(basename "$TRACE")" "$(echo "$(stat -c %s "$TRACE") / 1048576" | bc -l)" "$calls" "$stacks" \
  "$index" "$(echo "$index * 1048576 / $stacks" | bc -l)"
# The stack table's share (-v says it since the table is a prefix tree).
if held=$(grep -o 'stacks [0-9.]* MiB' <<<"$info" | cut -d' ' -f2); then
  frames=$(grep -o '([0-9]* frames)' <<<"$info" | tr -dc 0-9)
  printf 'stack table %s MiB (%.0f B a stack), %s frames stored (%.2f a stack)\n' \
    "$held" "$(echo "$held * 1048576 / $stacks" | bc -l)" "$frames" "$(echo "$frames / $stacks" | bc -l)"
fi

# one command: seconds, peak MiB, peak bytes per distinct stack
row() {
  local label=$1; shift
  /usr/bin/time -f "%e %M" "$@" >/dev/null 2>"$OUT/time.log" || { tail -3 "$OUT/time.log"; exit 1; }
  read -r secs kib < <(tail -1 "$OUT/time.log")
  printf '%-36s %8s %10.1f %12.0f\n' "$label" "$secs" "$(echo "$kib / 1024" | bc -l)" "$(echo "$kib * 1024 / $stacks" | bc -l)"
}
printf '%-36s %8s %10s %12s\n' "command" "seconds" "peak MiB" "B per stack"
# (index's -f is --force, a load option: an index made with it is stale
# to a command without it. A fresh index is made by removing the old.)
rm -f "$TRACE.index"
row "index (replay, write the index)" "$PB" index -i "$TRACE"
row "maps (loads the index)" "$PB" maps -i "$TRACE"
row "maps --no-index (replays)" "$PB" maps -i "$TRACE" --no-index
row "growth --no-index (replays)" "$PB" growth -i "$TRACE" --no-index
row "growth (loads the index)" "$PB" growth -i "$TRACE"
row "growth --detail (every stack's text)" "$PB" growth -i "$TRACE" --detail
row "growth --format pprof" "$PB" growth -i "$TRACE" --format pprof -o "$OUT/growth.pb.gz"
printf 'index %.1f MiB\n' "$(echo "$(stat -c %s "$TRACE.index") / 1048576" | bc -l)"
