#!/usr/bin/env bash
# report.sh — the HTML report's budget on the bench's big trace: `pageblame report`
# must give a page under 5 MB that headless Chromium draws in under 2 s, and
# `pageblame growth` over the whole trace must stay fast. Run by hand as root
# (recording needs the tracepoints); not part of scripts/test.
#
#   bench/report.sh [TRACE]
#
# TRACE defaults to bench/out/churn-t4-s1.data, recorded here (as run.sh
# records it: the seed's `perf trace record --call-graph fp`, 4 churn threads
# x 100000 iterations, ~1.6 M samples) when it is missing. Prints one
# markdown table: the page's size, the time to write it, Chromium's wall
# time and the page's own drawing time (performance.now() once every view is
# drawn, from #selftest), and growth's wall time (median of 3 runs each).
# Environment: BENCH_BUILD_DIR (default build), BENCH_OUT (bench/out).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
OUT=${BENCH_OUT:-$HERE/out}
BUILD=${BENCH_BUILD_DIR:-$ROOT/build}
[[ $BUILD == /* ]] || BUILD=$ROOT/$BUILD
PB=$BUILD/bin/pageblame
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
log() { echo "report.sh: $*" >&2; }
die() { log "$*"; exit 1; }
[[ -x $PB ]] || die "no $PB: build pageblame first (BENCH_BUILD_DIR)"
[[ -x $CHROMIUM ]] || die "no $CHROMIUM (scripts/setup installs it)"
mkdir -p "$OUT/maps"

trace=${1:-$OUT/churn-t4-s1.data}
if [[ ! -f $trace ]]; then
  [[ $EUID -eq 0 ]] || die "run as root to record $trace (or give a trace)"
  gcc -O1 -g -fno-omit-frame-pointer -Wall -Wextra -Werror -pthread "$HERE/churn.c" -o "$OUT/churn"
  log "recording $trace (4 threads x 100000 iterations)"
  perf trace record -m 256M --call-graph fp \
    -e 'syscalls:*_mmap,syscalls:*_munmap,syscalls:*_brk,syscalls:*_mremap' -o "$trace" \
    "$OUT/churn" "$OUT/maps" "$(basename "$trace" .data)" 4 100000 2> "$OUT/report-record.log" ||
    { cat "$OUT/report-record.log" >&2; die "recording failed"; }
fi

# median CMD...: runs CMD 3 times, prints the median wall seconds.
median() {
  local runs=() t0 t1
  for _ in 1 2 3; do
    t0=$(date +%s.%N)
    "$@" > /dev/null
    t1=$(date +%s.%N)
    runs+=("$(python3 -c "print(round($t1 - $t0, 3))")")
  done
  printf '%s\n' "${runs[@]}" | sort -n | sed -n 2p
}

page=$OUT/report.html
write_s=$(median "$PB" report -i "$trace" -o "$page")
bytes=$(stat -c %s "$page")
# Chromium as the browser test runs it: headless, offline, a fresh profile;
# the page's self-test writes its drawing time into the DOM.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
browse() {
  "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$profile" --window-size=1280,900 \
    --dump-dom "file://$page#selftest" 2>/dev/null
}
draw_ms=()
for _ in 1 2 3; do
  draw_ms+=("$(browse | sed -n 's/.*<pre id="selftest-result">\([^<]*\)<\/pre>.*/\1/p' |
               sed 's/&quot;/"/g' | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["render_ms"]))')")
done
chromium_s=$(median browse)
growth_s=$(median "$PB" growth -i "$trace" --json)
growth_half_s=$(median "$PB" growth -i "$trace" --from +0.5 --to -0.5 --format pprof -o "$OUT/growth.pb.gz")

echo
echo "Trace: $trace ($(stat -c %s "$trace") bytes); pageblame $("$PB" --version | head -1)"
echo
echo "| what | value |"
echo "|---|---|"
echo "| report page size | $bytes bytes ($(python3 -c "print(round($bytes / 1048576, 2))") MiB; budget 5 MB) |"
echo "| pageblame report wall time | ${write_s} s |"
echo "| page drawing time in Chromium (performance.now, 3 loads) | $(IFS=/; echo "${draw_ms[*]}") ms (budget 2000) |"
echo "| headless Chromium wall time, start to DOM dump | ${chromium_s} s |"
echo "| pageblame growth --json, whole trace | ${growth_s} s |"
echo "| pageblame growth --from +0.5 --to -0.5 --format pprof | ${growth_half_s} s |"
