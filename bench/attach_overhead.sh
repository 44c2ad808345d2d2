#!/usr/bin/env bash
# attach_overhead.sh — what `pageblame record -p PID` costs a running service:
# the CPU of perf (with pageblame's own events and DWARF stacks) attached to
# traces/src/dotnet-attach for 10 s, at each ring-buffer size, with the app
# idle and at a busy rate, the memory perf pins for its buffers, and the
# events it loses; and idle again with a thread that existed at the attach
# exiting during the recording (an idle thread-pool worker does that after
# 20 s). Prints one table; docs/performance.md has the figures. "calls":
# the memory calls recorded in the ~12 s. The app gets a cgroup of its own
# (when a cgroup v2 hierarchy is there), so `pageblame record -p` records per
# CPU limited to it; the perf rows and `--per-thread` attach per thread (the
# perf rows without, `record` with its fix for perf's spin: recorder/perf_poll_shim.c).
# bench/service_overhead.sh measures what keeping record attached costs a service.
#
#   sudo bench/attach_overhead.sh [BUILD_DIR] [BUSY_CALLS_PER_SECOND]   (default build, 10000)
#
# CPU is utime+stime from /proc/PID/stat over 10 s of steady recording
# (after 2 s, so perf's start-up synthesis of the existing mappings is out),
# in % of one core; pageblame's own share (the residency snapshots) is
# measured the same way on `pageblame record` itself.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
BUSY=${2:-10000}
PB=$BUILD/bin/pageblame
[[ $EUID -eq 0 ]] || { echo "run as root" >&2; exit 77; }
OUT=$(mktemp -d /tmp/attach-overhead.XXXXXX)
APP=
# The app's perf map and jitdump (`pageblame record -p` turns them on) go with it.
stop_app() { [[ -n $APP ]] && { kill "$APP" 2>/dev/null; wait "$APP" 2>/dev/null; rm -f "/tmp/perf-$APP.map" "/tmp/jit-$APP.dump"; }; }
HZ=$(getconf CLK_TCK)
# The cgroup v2 hierarchy (perf -G looks there when no v1 perf_event one is mounted).
CG=
CG2=$(awk '$0 ~ / - cgroup2 / {print $5; exit}' /proc/self/mountinfo)
if [[ -n $CG2 ]] && ! grep -q ' - cgroup .*perf_event' /proc/self/mountinfo; then
  CG=$CG2/pageblame-bench-$$
  mkdir -p "$CG" || CG=
fi
trap 'stop_app; rm -rf "$OUT"; [[ -n $CG ]] && rmdir "$CG" 2>/dev/null' EXIT
(cd "$ROOT/traces/src/dotnet-attach" && dotnet build -c Release --nologo -v q -nodeReuse:false \
  -p:UseSharedCompilation=false >/dev/null) || exit 1

ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

start_app() {  # RATE [THREAD_EXIT]
  stop_app
  dotnet "$ROOT/traces/src/dotnet-attach/bin/Release/net10.0/dotnet-attach.dll" 600 "$@" >"$OUT/app.out" &
  APP=$!
  for _ in $(seq 1 300); do grep -q READY "$OUT/app.out" && break; sleep 0.1; done
  grep -q READY "$OUT/app.out" || { echo "the app did not start" >&2; exit 1; }
  # A cgroup of its own, as a service or a container has: `pageblame record
  # -p` then records per CPU, limited to it (perf -a -G).
  [[ -n $CG ]] && echo "$APP" >"$CG/cgroup.procs"
  # The runtime's start-up threads (tiered compilation's worker) end a few
  # seconds after start (20 s was enough here); attach once they have, unless a thread is to exit.
  (($# == 1)) && sleep "${SETTLE:-20}"
}

# measure LABEL CMD...: runs CMD (a recorder, in the background), 2 s of
# warm-up, 10 s measured; prints CPU %, pinned KiB, lost events.
measure() {
  local label=$1; shift
  "$@" 2>"$OUT/rec.err" &
  local rec=$! perf
  sleep 2
  perf=$(pgrep -x perf -P "$rec" || echo "$rec")
  local a b pa pb pin
  a=$(ticks "$perf"); pa=$(( rec == perf ? 0 : $(ticks "$rec") ))
  sleep 10
  b=$(ticks "$perf"); pb=$(( rec == perf ? 0 : $(ticks "$rec") ))
  pin=$(awk '/VmPin/{print $2}' "/proc/$perf/status")
  kill -INT "$rec"; wait "$rec"
  # The first "SAMPLE events:" line is the total (enters and exits: two
  # samples per call); "LOST events:" lines count records perf lost.
  local stats lost calls
  stats=$(perf report -i "$OUT/t.data" --stats 2>/dev/null)
  lost=$(awk '/LOST events:/{n+=$3} END{print n+0}' <<<"$stats")
  calls=$(awk '/SAMPLE events:/{print int($3/2); exit}' <<<"$stats")
  printf '%-30s %7.1f%% %9.1f%% %10s KiB %9s %10s\n' "$label" \
    "$(echo "($b - $a) * 100 / $HZ / 10" | bc -l)" "$(echo "($pb - $pa) * 100 / $HZ / 10" | bc -l)" "$pin" \
    "${calls:-0}" "$lost"
  rm -f "$OUT"/t.data*
}

printf '%-36s %8s %10s %14s %9s %10s\n' "recorder (app)" "perf" "pageblame" "perf pins" "calls" "lost"
sizes=(${SIZES:-default 16M 32M 128M})
# rows LABEL RATE [THREAD_EXIT]: each buffer size, then pageblame record; a
# fresh app per row when a thread is to exit during the measured 10 s.
rows() {
  local label=$1 rate=$2 texit=${3:-}
  [[ -z $texit ]] && start_app "$rate"
  for m in "${sizes[@]}" pageblame per-thread; do
    [[ -n $texit ]] && start_app "$rate" "$texit"
    local base argv
    base=$("$PB" record --dry-run --per-thread -o "$OUT/t.data" -p "$APP" 2>/dev/null)
    if [[ $m == pageblame ]]; then
      measure "pageblame record -p ($label)" "$PB" record -o "$OUT/t.data" -p "$APP"
      continue
    elif [[ $m == per-thread ]]; then
      measure "  ... --per-thread ($label)" "$PB" record --per-thread -o "$OUT/t.data" -p "$APP"
      continue
    elif [[ $m == default ]]; then argv=$(sed 's/ -m [^ ]*//' <<<"$base")
    else argv=$(sed "s/ -m [^ ]*/ -m $m/" <<<"$base"); fi
    # shellcheck disable=SC2086
    measure "perf -m $m ($label)" $argv
  done
}
[[ -z ${ONLY_BUSY:-} ]] && rows idle 0
[[ -z ${ONLY_BUSY:-} ]] && rows "idle, a thread exits" 0 4
rows "$BUSY calls/s" "$BUSY"
