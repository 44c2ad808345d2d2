#!/usr/bin/env bash
# dotnet_attach.sh — `pageblame record -p PID` of a running .NET app started
# WITHOUT DOTNET_PerfMapEnabled (traces/src/dotnet-attach): record turns the
# runtime's perf map on through its diagnostics socket, records a few seconds
# while the app maps memory, is stopped by a SIGINT sent to it alone, turns
# the map off again; then `maps` and `attribute` name the app's JIT'd methods
# (Program::MapAndKeep) instead of [unknown] /memfd:doublemapper, and the
# framework's ReadyToRun code from the jitdump (NativeMemory::Alloc).
#
#   tests/dotnet_attach.sh BUILD_DIR
#
# Exit status: 0 passed; 77 skipped (not root, no perf, no dotnet); else failed.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:?usage: tests/dotnet_attach.sh BUILD_DIR}
PAGEBLAME=$BUILD/bin/pageblame
. "$(dirname "$0")/live_lib.sh"

need_root_and_perf
command -v dotnet >/dev/null || skip "dotnet is not installed"

WORK=$(mktemp -d /tmp/dotnet-attach.XXXXXX)
APP_PID=
cleanup() {
  [[ -n $APP_PID ]] && kill "$APP_PID" 2>/dev/null
  [[ -n $APP_PID ]] && rm -f "/tmp/perf-$APP_PID.map" "/tmp/jit-$APP_PID.dump"
  rm -rf "$WORK"
}
trap cleanup EXIT

APP_DIR=$ROOT/traces/src/dotnet-attach
(cd "$APP_DIR" && timeout 300 dotnet build -c Release --nologo -v q -nodeReuse:false \
  -p:UseSharedCompilation=false) >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log" >&2; fail "dotnet build"; }

# The app, without the perf map; READY once its methods are compiled.
# (env execs dotnet: $! is the app; it exits by itself after 120 s.)
env -u DOTNET_PerfMapEnabled -u COMPlus_PerfMapEnabled \
  dotnet "$APP_DIR/bin/Release/net10.0/dotnet-attach.dll" 120 >"$WORK/app.out" 2>&1 &
APP_PID=$!
for _ in $(seq 1 300); do grep -q READY "$WORK/app.out" && break; sleep 0.1; done
grep -q "READY $APP_PID" "$WORK/app.out" || { cat "$WORK/app.out" >&2; fail "the app did not say READY $APP_PID"; }
[[ -e /tmp/perf-$APP_PID.map ]] && fail "/tmp/perf-$APP_PID.map exists before attaching"

"$PAGEBLAME" record -o "$WORK/a.data" --rss-every 0 -p "$APP_PID" 2>"$WORK/record.err" &
REC=$!
sleep 5
kill -INT "$REC"
timeout 60 tail --pid="$REC" -f /dev/null || fail "record did not stop on SIGINT"
wait "$REC"; rc=$?
cat "$WORK/record.err" >&2
((rc == 0)) || fail "record exited $rc"
grep -q "turned on through its diagnostics socket" "$WORK/record.err" || fail "record did not turn the perf map on"
grep -q "warning" "$WORK/record.err" && fail "record warned"
grep -q "Program::MapAndKeep" "/tmp/perf-$APP_PID.map" ||
  fail "/tmp/perf-$APP_PID.map does not name Program::MapAndKeep (compiled before the attach)"

# The app's address space now (its later mappings have no creator in the trace).
cp "/proc/$APP_PID/maps" "$WORK/app.maps" || fail "the app is gone"
"$PAGEBLAME" attribute -i "$WORK/a.data" --pid "$APP_PID" --regions "$WORK/app.maps" --by create >"$WORK/attribute.txt" 2>"$WORK/attribute.err" ||
  { cat "$WORK/attribute.err" >&2; fail "attribute"; }
"$PAGEBLAME" maps -i "$WORK/a.data" --pid "$APP_PID" >"$WORK/maps.txt" 2>"$WORK/maps.err" ||
  { cat "$WORK/maps.err" >&2; fail "maps"; }
grep -q "Program::MapAndKeep" "$WORK/attribute.txt" || { cat "$WORK/attribute.txt" >&2; fail "attribute does not name Program::MapAndKeep"; }
grep -q "Program::MapAndKeep" "$WORK/maps.txt" || { head -50 "$WORK/maps.txt" >&2; fail "maps does not name Program::MapAndKeep"; }
grep -q "doublemapper" "$WORK/attribute.txt" && { cat "$WORK/attribute.txt" >&2; fail "attribute shows an unnamed doublemapper frame"; }
# The framework's ReadyToRun code: named by the jitdump the runtime wrote
# when record turned it on (NativeMemory.Alloc, called by AllocAndKeep).
[[ -s /tmp/jit-$APP_PID.dump ]] || fail "no /tmp/jit-$APP_PID.dump"
grep -q "Program::AllocAndKeep -> NativeMemory::Alloc" "$WORK/attribute.txt" ||
  { cat "$WORK/attribute.txt" >&2; fail "attribute does not name Program::AllocAndKeep -> NativeMemory::Alloc"; }
grep -q "System.Private.CoreLib.dll)" "$WORK/attribute.txt" &&
  { cat "$WORK/attribute.txt" >&2; fail "an unnamed System.Private.CoreLib.dll frame"; }
log "passed: $(grep -c 'Program::' "$WORK/maps.txt") maps lines name Program:: methods"
exit 0
