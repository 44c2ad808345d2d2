#!/usr/bin/env bash
# attach_cgroup.sh — `pageblame record -p PID` of a process alone in its
# cgroup (as a service or a container is): record chooses perf -a -G (per
# CPU, limited to the cgroup: a thread that ends cannot make perf spin),
# records only that process, and stops by itself when the process ends
# (perf -a would not). The target (Python) starts a thread that ends during
# the recording and maps 64 KiB every 20 ms from a function of its own; then
# `maps` without --pid shows that process alone (perf -a listed every process
# of the machine) and `record`'s summary counts 1 process.
#
#   tests/attach_cgroup.sh BUILD_DIR
#
# Exit status: 0 passed; 77 skipped (not root, no perf, no cgroup v2
# hierarchy perf would use); else failed.
set -uo pipefail
BUILD=${1:?usage: tests/attach_cgroup.sh BUILD_DIR}
PAGEBLAME=$BUILD/bin/pageblame
. "$(dirname "$0")/live_lib.sh"

need_root_and_perf
CG2=$(awk '$0 ~ / - cgroup2 / {print $5; exit}' /proc/self/mountinfo)
[[ -n $CG2 ]] || skip "no cgroup v2 hierarchy mounted"
grep -q ' - cgroup .*perf_event' /proc/self/mountinfo && skip "a cgroup v1 perf_event hierarchy is mounted (perf -G looks there)"

WORK=$(mktemp -d /tmp/attach-cgroup.XXXXXX)
CG=$CG2/pageblame-test-$$
APP_PID=
cleanup() {
  [[ -n $APP_PID ]] && kill "$APP_PID" 2>/dev/null
  [[ -n ${KEEP:-} ]] || rm -rf "$WORK"
  rmdir "$CG" 2>/dev/null
}
trap cleanup EXIT
mkdir "$CG" || skip "cannot make a cgroup under $CG2"

# The target: READY, then for ~6 s a 64 KiB mapping every 20 ms (kept) from
# map_some(); a second thread ends 1 s in. It waits for GO on stdin, so
# that it is in its cgroup before it maps anything.
cat >"$WORK/target.py" <<'PY'
import mmap, os, sys, threading, time
def map_some(kept):
    m = mmap.mmap(-1, 65536)
    m[0] = 1
    kept.append(m)
print("READY", os.getpid(), flush=True)
sys.stdin.readline()
threading.Thread(target=lambda: time.sleep(1)).start()
kept = []
end = time.time() + 6
while time.time() < end:
    map_some(kept)
    time.sleep(0.02)
os._exit(0)  # no teardown: the mappings are there at the end of the trace
PY
mkfifo "$WORK/go"
python3 "$WORK/target.py" <"$WORK/go" >"$WORK/app.out" 2>&1 &
APP_PID=$!
exec 3>"$WORK/go"
for _ in $(seq 1 100); do grep -q READY "$WORK/app.out" && break; sleep 0.1; done
grep -q "READY $APP_PID" "$WORK/app.out" || fail "the target did not say READY $APP_PID"
echo "$APP_PID" >"$CG/cgroup.procs" || fail "cannot move the target into $CG"

"$PAGEBLAME" record -o "$WORK/a.data" --rss-every 0 -p "$APP_PID" 2>"$WORK/record.err" &
REC=$!
sleep 2  # perf's start-up (it lists every process of the machine)
echo GO >&3
# No signal: record must stop when the target ends (~6 s after GO).
timeout 90 tail --pid="$REC" -f /dev/null || fail "record did not stop when pid $APP_PID ended"
wait "$REC"; rc=$?
cat "$WORK/record.err" >&2
((rc == 0)) || fail "record exited $rc"
grep -q "pid $APP_PID is alone in cgroup pageblame-test-$$: recording per CPU" "$WORK/record.err" ||
  fail "record did not choose the cgroup"
grep -q "pid $APP_PID ended: stopping the recording" "$WORK/record.err" || fail "record did not say the target ended"
grep -q "no events lost" "$WORK/record.err" || fail "events lost"
grep -Eq "memory calls of 1 process over" "$WORK/record.err" || fail "the summary does not count 1 process"
others=$(perf script -i "$WORK/a.data" -F pid 2>/dev/null | awk -v p="$APP_PID" '$1 != p' | sort -u)
[[ -z $others ]] || fail "samples of other processes than $APP_PID: $others"

"$PAGEBLAME" maps -i "$WORK/a.data" >"$WORK/maps.txt" 2>"$WORK/maps.err" || { cat "$WORK/maps.err" >&2; fail "maps"; }
grep -q "a system-wide recording" "$WORK/maps.err" || { cat "$WORK/maps.err" >&2; fail "maps did not say the recording is system-wide"; }
[[ $(grep -c '^pid ' "$WORK/maps.txt") -eq 1 ]] || { grep '^pid ' "$WORK/maps.txt" >&2; fail "maps shows other processes"; }
grep -q "^pid $APP_PID " "$WORK/maps.txt" || fail "maps does not show pid $APP_PID"
# ~300 mappings of 64 KiB made during the trace by map_some (adjacent
# ones are one region: counted by their calls).
made=$(grep "mmap at .* by $APP_PID" "$WORK/maps.txt" | awk '{n += 1; if (match($0, /\(\+[0-9]+ more calls\)/)) n += substr($0, RSTART + 2, RLENGTH - 14)} END {print n + 0}')
((made >= 100)) || { head -40 "$WORK/maps.txt" >&2; fail "only $made mappings made by $APP_PID during the trace"; }
# A crowded cgroup (more than 8 processes) is not recorded whole: per thread.
SLEEPERS=()
for _ in $(seq 1 9); do sleep 60 & SLEEPERS+=($!); echo $! >"$CG/cgroup.procs"; done
"$PAGEBLAME" record --dry-run -o "$WORK/b.data" -p "${SLEEPERS[0]}" >"$WORK/dry.out" 2>"$WORK/dry.err"
kill "${SLEEPERS[@]}" 2>/dev/null; wait "${SLEEPERS[@]}" 2>/dev/null
grep -q -- "-d -p ${SLEEPERS[0]}" "$WORK/dry.out" || { cat "$WORK/dry.out" "$WORK/dry.err" >&2; fail "a crowded cgroup was recorded per CPU"; }
grep -q "holds 9 processes" "$WORK/dry.err" || { cat "$WORK/dry.err" >&2; fail "record did not say why per thread"; }
log "passed: $made mappings of pid $APP_PID recorded per CPU in its cgroup; a cgroup of 9 processes per thread"
exit 0
