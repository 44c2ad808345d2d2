#!/usr/bin/env bash
# service_overhead.sh — what keeping `pageblame record -p` attached costs an
# ASP.NET Core service (traces/src/dotnet-service), issue 40: the recorder's
# CPU (perf and pageblame: utime+stime from /proc over WINDOW seconds, % of
# one core) idle and at ~1k and ~10k memory calls/s, with the service in the
# root cgroup, in a crowded cgroup (10 processes: both recorded per thread,
# perf -p, with pageblame-perf-poll.so) and in a cgroup of its own (per CPU,
# perf -a -G); and the service's request latency (p50/p99 over the loopback
# load of traces/src/http_load.c) with and without the recorder. Before any
# row, the threads that existed at the attach end (GET /end), as idle
# thread-pool workers do. A last row: perf as record runs it per thread but
# without the fix (LD_PRELOAD of the shim left out), idle: the spin.
#
#   sudo bench/service_overhead.sh [BUILD_DIR]      (WINDOW=10 RATE=100 by default)
#
# The load: RATE requests/s of GET /work?n=K, each K rounds of mmap+munmap
# (2K memory calls): K=5 for ~1k calls/s, K=50 for ~10k at RATE=100.
# docs/performance.md ("Keeping it attached") has the figures.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
PB=$BUILD/bin/pageblame
LOAD=$BUILD/tests/http_load
WINDOW=${WINDOW:-10}
RATE=${RATE:-100}
[[ $EUID -eq 0 ]] || { echo "run as root" >&2; exit 77; }
[[ -x $LOAD ]] || { echo "no $LOAD: build the tests first" >&2; exit 1; }
OUT=$(mktemp -d /tmp/service-overhead.XXXXXX)
APP=$ROOT/traces/src/dotnet-service
SVC= REC= CG= SLEEPERS=()
stop_all() {
  [[ -n $REC ]] && { kill -INT "$REC" 2>/dev/null; wait "$REC" 2>/dev/null; }
  [[ -n $SVC ]] && { kill "$SVC" 2>/dev/null; wait "$SVC" 2>/dev/null; rm -f "/tmp/perf-$SVC.map" "/tmp/jit-$SVC.dump"; }
  ((${#SLEEPERS[@]})) && { kill "${SLEEPERS[@]}" 2>/dev/null; wait "${SLEEPERS[@]}" 2>/dev/null; }
  REC= SVC= SLEEPERS=()
}
trap 'stop_all; [[ -n $CG ]] && rmdir "$CG" 2>/dev/null; rm -rf "$OUT"' EXIT
(cd "$APP" && dotnet build -c Release --nologo -v q -nodeReuse:false -p:UseSharedCompilation=false >/dev/null) || exit 1
head -c $((12 << 20)) /dev/urandom >"$OUT/data.bin"
CG2=$(awk '$0 ~ / - cgroup2 / {print $5; exit}' /proc/self/mountinfo)
if [[ -n $CG2 ]] && ! grep -q ' - cgroup .*perf_event' /proc/self/mountinfo; then
  CG=$CG2/pageblame-bench-$$
  mkdir "$CG" || CG=
fi
HZ=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
now() { python3 -c 'import time; print("%.6f" % time.clock_gettime(time.CLOCK_MONOTONIC))'; }
PORT=

start_service() {  # PLACEMENT: root | crowded | own
  PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  rm -f "$OUT/app.out"  # the last service's READY is not this one's
  env $(env | sed -n 's/^\(DOTNET_[^=]*\|COMPlus_[^=]*\)=.*/-u \1/p') \
    dotnet "$APP/bin/Release/net10.0/dotnet-service.dll" "$PORT" "$OUT/data.bin" 4 >"$OUT/app.out" 2>&1 &
  SVC=$!
  for _ in $(seq 1 300); do grep -qs "READY $SVC" "$OUT/app.out" && break; sleep 0.1; done
  grep -q "READY $SVC" "$OUT/app.out" || { cat "$OUT/app.out" >&2; echo "the service did not start" >&2; exit 1; }
  case $1 in
    crowded) echo "$SVC" >"$CG/cgroup.procs"
             for _ in $(seq 1 9); do sleep 3600 & SLEEPERS+=($!); echo $! >"$CG/cgroup.procs"; done ;;
    own) echo "$SVC" >"$CG/cgroup.procs" ;;
  esac
  "$LOAD" "$PORT" "/work?n=1" 50 2 >/dev/null  # warm: the handlers compiled
}
# attach CMD...: a recorder of $SVC, waited for until perf records.
attach() {
  "$@" 2>"$OUT/rec.err" &
  REC=$!
  for _ in $(seq 1 600); do [[ -e $OUT/t.data.attach-maps ]] && break; sleep 0.1; done
  sleep 2
}
# The recorder's CPU over a command, % of one core; the command's output after it.
cpu_of() {
  local perf a b t0 t1 said
  perf=$(pgrep -x perf -P "$REC")  # none: the recorder is perf itself
  both() { if [[ -n $perf ]]; then echo $(($(ticks "$REC") + $(ticks "$perf"))); else ticks "$REC"; fi; }
  a=$(both); t0=$(now)
  said=$("$@")
  b=$(both); t1=$(now)
  printf '%.1f %s' "$(echo "($b - $a) * 100 / $HZ / ($t1 - $t0)" | bc -l)" "$said"
}
latency() { awk '{print $8 / 1000 " / " $10 / 1000}' <<<"$1"; }  # p50 / p99 in ms

printf '%-34s %10s %14s %22s %22s\n' "service, recorder" "load" "recorder CPU" "p50/p99 ms recorded" "p50/p99 ms without"
for placement in ${PLACEMENTS:-root crowded own}; do
  [[ $placement != root && -z $CG ]] && { echo "($placement: no cgroup v2 hierarchy for perf)"; continue; }
  start_service "$placement"
  rm -rf "$OUT"/t.data*
  attach "$PB" record -o "$OUT/t.data" -p "$SVC"
  how=$(grep -o "per thread (perf -p)\|per CPU, limited to that cgroup (perf -a -G)" "$OUT/rec.err" | head -1)
  "$LOAD" "$PORT" /end 1 1 >/dev/null; sleep 1
  read -r cpu _ <<<"$(cpu_of sleep "$WINDOW")"
  printf '%-34s %10s %13s%% %22s %22s\n' "$placement, record -p" "idle" "$cpu" "-" "-"
  declare -A with=()
  for k in 5 50; do
    read -r cpu said <<<"$(cpu_of "$LOAD" "$PORT" "/work?n=$k" "$RATE" "$WINDOW")"
    with[$k]="$cpu|$said"
  done
  kill -INT "$REC"; wait "$REC"; REC=
  calls=$(grep -o "[0-9]* memory calls" "$OUT/rec.err")
  for k in 5 50; do
    without=$("$LOAD" "$PORT" "/work?n=$k" "$RATE" "$WINDOW")
    printf '%-34s %10s %13s%% %22s %22s\n' "$placement ($how)" "$((2 * k * RATE))/s" "${with[$k]%%|*}" \
      "$(latency "${with[$k]#*|}")" "$(latency "$without")"
  done
  echo "  ($calls recorded in all)"
  stop_all
done
# perf as record runs it per thread, without the fix: the spin.
start_service root
rm -rf "$OUT"/t.data*
argv=$("$PB" record --dry-run --per-thread -o "$OUT/t.data" -p "$SVC" 2>/dev/null)
# shellcheck disable=SC2086
$argv >/dev/null 2>"$OUT/rec.err" &
REC=$!
sleep 4
"$LOAD" "$PORT" /end 1 1 >/dev/null; sleep 1
read -r cpu _ <<<"$(cpu_of sleep "$WINDOW")"
printf '%-34s %10s %13s%%\n' "root, perf -p without the fix" "idle" "$cpu"
kill -INT "$REC"; wait "$REC"; REC=
grep -o "Woken up [0-9]* times" "$OUT/rec.err"
