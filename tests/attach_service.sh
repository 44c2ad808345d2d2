#!/usr/bin/env bash
# attach_service.sh — issue 40: `pageblame record -p` kept attached to an
# ASP.NET Core service (traces/src/dotnet-service) started without DOTNET_
# variables, once in the root cgroup and once in a crowded cgroup (both
# recorded per thread, perf -p): idle while threads that existed at the
# attach end, then a bounded loopback load (~450 memory calls/s). Checks:
#   - the recorder's CPU (perf and pageblame, utime+stime from /proc) stays
#     under IDLE_LIMIT % of a core idle and LOAD_LIMIT % under the load:
#     the issue's 5 % and 10 % with a margin for a loaded 2-core machine
#     (perf 6.1 spun at 60-160 % here); the exact figures are
#     bench/service_overhead.sh's;
#   - `maps --at T` equals the kernel's /proc/PID/maps read at T, a pause
#     after the attach (tests/maps_equal.py: page runs and prot);
#   - resident answers are there, and no command warns (a TRACE.rss refused
#     as another trace's, a jitdump's cut tail);
#   - the file the app mapped (MemoryMappedFile, 12 MiB) is not in the
#     runtime's table, and `attribute --unaccounted` names its handler.
#
#   tests/attach_service.sh BUILD_DIR
#
# Exit status: 0 passed; 77 skipped (not root, no perf, no dotnet, no ClrMD
# helper); else failed.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:?usage: tests/attach_service.sh BUILD_DIR}
PAGEBLAME=$BUILD/bin/pageblame
LOAD=$BUILD/tests/http_load
IDLE_LIMIT=${IDLE_LIMIT:-10}
LOAD_LIMIT=${LOAD_LIMIT:-20}
WINDOW=${WINDOW:-6}
. "$(dirname "$0")/live_lib.sh"

need_root_and_perf
command -v dotnet >/dev/null || skip "dotnet is not installed"
[[ -f $BUILD/lib/dotnet-regions/dotnet-regions.dll ]] || skip "the ClrMD helper is not built (no .NET 10 SDK)"
[[ -x $LOAD ]] || fail "no $LOAD: build the tests first"

WORK=$(mktemp -d /tmp/attach-service.XXXXXX)
SVC= REC= CG= SLEEPERS=()
stop_service() {
  [[ -n $SVC ]] && { kill -CONT "$SVC" 2>/dev/null; kill "$SVC" 2>/dev/null; wait "$SVC" 2>/dev/null
                     rm -f "/tmp/perf-$SVC.map" "/tmp/jit-$SVC.dump"; }
  ((${#SLEEPERS[@]})) && { kill "${SLEEPERS[@]}" 2>/dev/null; wait "${SLEEPERS[@]}" 2>/dev/null; }
  SVC= SLEEPERS=()
}
cleanup() {
  [[ -n $REC ]] && kill "$REC" 2>/dev/null
  stop_service
  [[ -n $CG ]] && rmdir "$CG" 2>/dev/null
  [[ -n ${KEEP:-} ]] || rm -rf "$WORK"
}
trap cleanup EXIT

APP_DIR=$ROOT/traces/src/dotnet-service
(cd "$APP_DIR" && timeout 300 dotnet build -c Release --nologo -v q -nodeReuse:false \
  -p:UseSharedCompilation=false) >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log" >&2; fail "dotnet build"; }
head -c $((12 << 20)) /dev/urandom >"$WORK/data.bin"

ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
HZ=$(getconf CLK_TCK)
now() { python3 -c 'import time; print("%.6f" % time.clock_gettime(time.CLOCK_MONOTONIC))'; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# The recorder's CPU (perf's and record's) over a command, in % of one
# core, into RECORDER_CPU; returns the command's status.
RECORDER_CPU=
recorder_cpu() {
  local perf a b t0 t1 rc
  perf=$(pgrep -x perf -P "$REC") || fail "no perf under record"
  a=$(($(ticks "$perf") + $(ticks "$REC"))); t0=$(now)
  "$@"; rc=$?
  b=$(($(ticks "$perf") + $(ticks "$REC"))); t1=$(now)
  RECORDER_CPU=$(echo "($b - $a) * 100 / $HZ / ($t1 - $t0)" | bc -l)
  return $rc
}

# scenario NAME [CGROUP]: the whole run, in the root cgroup or in CGROUP
# with 9 other processes.
scenario() {
  local name=$1 cg=${2:-} port out=$WORK/$1
  port=$(free_port)
  # No DOTNET_ variable: record turns the perf map on through the runtime's socket.
  env $(env | sed -n 's/^\(DOTNET_[^=]*\|COMPlus_[^=]*\)=.*/-u \1/p') \
    dotnet "$APP_DIR/bin/Release/net10.0/dotnet-service.dll" "$port" "$WORK/data.bin" 4 >"$out.app" 2>&1 &
  SVC=$!
  for _ in $(seq 1 300); do grep -q READY "$out.app" && break; sleep 0.1; done
  grep -q "READY $SVC" "$out.app" || { cat "$out.app" >&2; fail "$name: the service did not say READY $SVC"; }
  if [[ -n $cg ]]; then
    echo "$SVC" >"$cg/cgroup.procs" || fail "cannot move the service into $cg"
    for _ in $(seq 1 9); do sleep 300 & SLEEPERS+=($!); echo $! >"$cg/cgroup.procs"; done
  fi
  "$PAGEBLAME" record -o "$out.data" -p "$SVC" 2>"$out.record" &
  REC=$!
  # perf records once record has written the table of the mappings at the attach.
  for _ in $(seq 1 600); do [[ -e $out.data.attach-maps ]] && break; sleep 0.1; done
  [[ -e $out.data.attach-maps ]] || { cat "$out.record" >&2; fail "$name: perf never recorded"; }
  grep -q "recording pid $SVC per thread" "$out.record" || { cat "$out.record" >&2; fail "$name: not recorded per thread"; }
  # Threads that existed at the attach end: perf 6.1 spun from then on.
  "$LOAD" "$port" /end 1 1 >/dev/null || fail "$name: GET /end"
  sleep 1
  recorder_cpu sleep "$WINDOW"; local idle=$RECORDER_CPU
  "$LOAD" "$port" /view 1 1 >/dev/null && "$LOAD" "$port" /leak 1 1 >/dev/null || fail "$name: GET /view, /leak"
  recorder_cpu "$LOAD" "$port" "/work?n=1" 225 "$WINDOW" >"$out.load" || { cat "$out.load" >&2; fail "$name: the load"; }
  local busy=$RECORDER_CPU
  # A pause: the kernel's table and the moment.
  kill -STOP "$SVC"; local t; t=$(now); cp "/proc/$SVC/maps" "$out.maps"; kill -CONT "$SVC"
  # No call after it: T may lie after the last memory call, inside the
  # recording all the same (its stop snapshot is later).
  sleep 0.5
  kill -INT "$REC"
  timeout 120 tail --pid="$REC" -f /dev/null || fail "$name: record did not stop on SIGINT"
  wait "$REC"; local rc=$?; REC=
  cat "$out.record" >&2
  ((rc == 0)) || fail "$name: record exited $rc"
  grep -q "warning" "$out.record" && fail "$name: record warned"
  log "$name: the recorder used $(printf %.1f "$idle") % of a core idle, $(printf %.1f "$busy") % under the load ($(cat "$out.load"))"
  (($(echo "$idle <= $IDLE_LIMIT" | bc))) || fail "$name: the recorder used $idle % of a core on the idle service (limit $IDLE_LIMIT)"
  (($(echo "$busy <= $LOAD_LIMIT" | bc))) || fail "$name: the recorder used $busy % of a core under the load (limit $LOAD_LIMIT)"

  "$PAGEBLAME" maps -i "$out.data" --pid "$SVC" --at "$t" --json >"$out.json" 2>"$out.maps.err" ||
    { cat "$out.maps.err" >&2; fail "$name: maps"; }
  python3 "$ROOT/tests/maps_equal.py" "$out.maps" "$out.json" "$SVC" >"$out.equal" ||
    { cat "$out.equal" >&2; fail "$name: maps --at $t is not the kernel's table then"; }
  grep -q '"rss": [0-9]' "$out.json" || fail "$name: maps --json has no resident bytes"
  local table
  table=$(ls "$out.data.runtime/$SVC"-*.txt 2>/dev/null | tail -1)
  [[ -n $table ]] || fail "$name: record saved no runtime table"
  grep -q "data.bin" "$table" && { grep data.bin "$table" >&2; fail "$name: the app's file view is in the runtime's table"; }
  "$PAGEBLAME" attribute -i "$out.data" --unaccounted >"$out.unaccounted" 2>"$out.attr.err" ||
    { cat "$out.attr.err" >&2; fail "$name: attribute --unaccounted"; }
  grep -Eq "^ +[0-9]+ +12\.0 MiB +12\.0 MiB +1 +1 +1 +file +Handlers::MapView" "$out.unaccounted" ||
    { head -20 "$out.unaccounted" >&2; fail "$name: --unaccounted does not name Handlers::MapView's 12 MiB file view"; }
  grep -q "of it resident (snapshot at" "$out.unaccounted" || fail "$name: no resident bytes in the answer"
  cat "$out.maps.err" "$out.attr.err" >"$out.errs"
  grep -q "warning" "$out.errs" && { cat "$out.errs" >&2; fail "$name: a command warned"; }
  log "$name: passed ($(cat "$out.equal"))"
  stop_service
}

scenario root
CG2=$(awk '$0 ~ / - cgroup2 / {print $5; exit}' /proc/self/mountinfo)
if [[ -z $CG2 ]] || grep -q ' - cgroup .*perf_event' /proc/self/mountinfo; then
  log "no cgroup v2 hierarchy perf would use: the crowded cgroup is not tried"
else
  CG=$CG2/pageblame-crowded-$$
  mkdir "$CG" || fail "cannot make $CG"
  scenario crowded "$CG"
fi
log "passed"
exit 0
