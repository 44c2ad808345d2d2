#!/bin/bash
# record-dotnet.sh — the real .NET hunt, end to end: builds traces/src/dotnet-leak,
# runs it under perf (DOTNET_PerfMapEnabled=1), and when it says it is ready
# takes, at that moment, /proc/PID/maps, pmap -XX, a dotnet-dump core dump and
# what SOS can say about it; then lets the app exit. Twice: once with DWARF
# stacks (the main trace), once with frame-pointer stacks (for comparison).
#
#   sudo traces/record-dotnet.sh [OUTDIR]      # default OUTDIR: traces/dotnet
#   sudo traces/record-dotnet.sh --hunt OUTDIR # only what the hunt needs: the
#                                              # DWARF run, its dump and tables
#                                              # (tests/dotnet_hunt.sh)
#   sudo traces/record-dotnet.sh --rss OUTDIR  # the DWARF run under `pageblame record
#                                              # --rss-every 0.5` instead of perf, with a
#                                              # requested snapshot (SIGUSR1) at READY and
#                                              # /proc/PID/smaps of that moment; no dump
#                                              # (tests/dotnet_rss_test.cc)
#
# Exit status: 0 recorded; 77 skipped (not root, perf cannot record the
# syscall tracepoints, or dotnet / dotnet-dump / gcc / pmap / xz is missing:
# the message says which); anything else failed. Every step is bounded
# (timeout), the whole run takes 2-4 minutes on 2 CPUs.
#
# Outputs in OUTDIR (NAME = dotnet-leak or dotnet-leak-fp, PID its pid):
#   NAME.data                  perf trace, zstd-compressed (perf record -z)
#   NAME.PID.truth.tsv         which C# method got which addresses (written by the app)
#   NAME.PID.heap.tsv          the same for the app's blocks inside glibc's arenas: the burst's
#                              freed 8 MiB blocks and the kept 1 MiB ones (written by the app)
#   NAME.PID.malloc_info.xml   glibc's malloc_info of the app, its last act on its heap before ready
#   NAME.PID.truth.ranges      the same as a range list (`START-END  # method: what`), for
#                              `pageblame attribute --regions` and `pageblame diff`
#   NAME.PID.maps              /proc/PID/maps when the app is ready (before the dump)
#   NAME.PID.after-dump.maps   /proc/PID/maps after dotnet-dump (the dump makes the runtime map a little)
#   NAME.PID.pmap              pmap -XX PID, before the dump
#   perf-PID.map               the runtime's JIT symbol map (from /tmp)
#   jit-PID.dump.xz            the runtime's jitdump (JIT'd and ReadyToRun methods), xz
#   NAME.PID.core.trim.xz      the core dump without its memory contents (trim-core.py), xz
#   NAME.PID.eeheap.txt        dotnet-dump analyze: eeheap (loader, code and GC heaps)
#   NAME.PID.maddress.txt      dotnet-dump analyze: maddress (see docs/dotnet.md: needs WinDbg)
#   NAME.PID.dotnet-regions.txt  the runtime's own table from the dump (`pageblame dotnet-regions`,
#                              ClrMD): the runtime table for `pageblame diff`, in place of maddress
#   dotnet-leak-wxoff.PID.maps, perf-PID.map   the app once more without perf and with
#                              DOTNET_EnableWriteXorExecute=0: JIT code in anonymous rwx
#                              mappings instead of the memfd double mapping
#   libleaknative.so           the app's native library as built (the traces name it by build-id)
#   NAME.data.rss, NAME.PID.smaps  (--rss) the residency snapshots, and /proc/PID/smaps
#                              just after the requested one
#   NAME.log                   what this script saw: pids, times, sizes, perf's lost counts
# The runtime runs with DOTNET_PerfMapEnabled=1 (perf map and jitdump) and
# DOTNET_PerfMapStubGranularity=2: .NET 10's default stub granularity leaves a
# jitdump of 2 records (dotnet/runtime#120419), and only the jitdump names
# ReadyToRun code such as NativeMemory.Alloc. Only the dwarf run gets the dump and SOS files. The untrimmed core dump
# (~300 MB) is left in a temporary directory that is removed at the end unless
# KEEP_WORK=1.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
HUNT_ONLY=0 RSS_MODE=0
[[ ${1:-} == --hunt ]] && { HUNT_ONLY=1; shift; }
[[ ${1:-} == --rss ]] && { HUNT_ONLY=1 RSS_MODE=1; shift; }
OUT=${1:-$HERE/dotnet}
APP_DIR=$HERE/src/dotnet-leak
APP_DLL=$APP_DIR/bin/Release/net10.0/dotnet-leak.dll
# The runtime's table comes from `pageblame dotnet-regions` (its ClrMD helper is
# built by scripts/setup): $PAGEBLAME, else the build tree's.
PAGEBLAME=${PAGEBLAME:-$HERE/../build/bin/pageblame}
# Only for the app: dotnet build, dotnet-dump and dotnet-regions would write maps of their own.
PERFMAP_ENV=(DOTNET_PerfMapEnabled=1 DOTNET_PerfMapStubGranularity=2)
SYSCALLS=(mmap munmap brk mremap mprotect pkey_mprotect madvise)

log() { echo "record-dotnet.sh: $*" >&2; }
truth_ranges() {  # TRUTH.tsv -> range list with the method as comment
  awk -F'\t' '/^#/ { print; next } $1 == "method" { next } { printf "%s-%s  # %s: %s\n", $3, $4, $1, $2 }' "$1"
}
skip() { log "SKIP: $*"; exit 77; }
die() { log "FAILED: $*"; exit 1; }

# --- can we run at all? ------------------------------------------------------
[[ $EUID -eq 0 ]] || skip "run as root (perf needs the syscall tracepoints)"
export PATH="$PATH:$HOME/.dotnet/tools"
for tool in perf dotnet gcc pmap xz python3 readelf; do
  command -v "$tool" >/dev/null || skip "$tool is not installed"
done
((RSS_MODE)) || command -v dotnet-dump >/dev/null ||
  skip "dotnet-dump is not installed (dotnet tool install -g dotnet-dump)"
((RSS_MODE)) && [[ ! -x $PAGEBLAME ]] && die "no $PAGEBLAME (build it, or set PAGEBLAME)"
WORK=$(mktemp -d /tmp/record-dotnet.XXXXXX)
cleanup() { [[ ${KEEP_WORK:-0} == 1 ]] && log "kept $WORK" || rm -rf "$WORK"; }
trap cleanup EXIT
probe_events=()
for s in "${SYSCALLS[@]}"; do probe_events+=(-e "syscalls:sys_enter_$s" -e "syscalls:sys_exit_$s"); done
timeout 30 perf record -q "${probe_events[@]}" -o "$WORK/probe.data" /bin/true >/dev/null 2>"$WORK/probe.err" ||
  skip "perf cannot record the syscall tracepoints: $(head -c 300 "$WORK/probe.err")"

# --- build --------------------------------------------------------------------
log "building $APP_DIR (dotnet build -c Release)"
(cd "$APP_DIR" && timeout 300 dotnet build -c Release --nologo -v q -nodeReuse:false -p:UseSharedCompilation=false) >"$WORK/build.log" 2>&1 ||
  { cat "$WORK/build.log" >&2; die "dotnet build"; }
mkdir -p "$OUT"
rm -f "$OUT"/dotnet-leak* "$OUT"/perf-*.map "$OUT"/jit-*.dump.xz
cp "$APP_DIR/bin/Release/net10.0/libleaknative.so" "$OUT/"

# run_traced NAME DUMP(0|1) PERF_EVENT_ARGS...
# Starts the app under perf record, waits for NAME.ready, takes the
# snapshots, releases the app and waits for perf.
run_traced() {
  local name=$1 dump=$2
  shift 2
  rm -f "$OUT/$name".* "$WORK/$name".*
  # --rss: pageblame record (DWARF stacks, -z, -m 128M, -k mono) with its
  # residency snapshots in $name.data.rss.
  local recorder=(perf record -z -m 128M "$@" -o "$OUT/$name.data")
  ((RSS_MODE)) && recorder=("$PAGEBLAME" record --rss-every 0.5 -o "$OUT/$name.data")
  log "$name: ${recorder[*]}"
  env "${PERFMAP_ENV[@]}" timeout 400 "${recorder[@]}" -- \
    dotnet "$APP_DLL" "$WORK" "$name" >"$WORK/$name.stdout" 2>"$WORK/$name.perf.err" &
  local perf_pid=$! pid="" t0=$SECONDS core=$WORK/$name.core
  while [[ -z $pid ]] && ((SECONDS - t0 < 180)); do
    [[ -s $WORK/$name.ready ]] && pid=$(tr -d '\n' <"$WORK/$name.ready")
    kill -0 "$perf_pid" 2>/dev/null || break
    sleep 0.2
  done
  if [[ -z $pid ]]; then
    kill -TERM "$perf_pid" 2>/dev/null
    cat "$WORK/$name.stdout" "$WORK/$name.perf.err" >&2
    die "$name: the app did not get ready in 180 s"
  fi
  {
    echo "# $name: recorded $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -sr), $(perf --version)"
    echo "# dotnet $(dotnet --version) (SDK), runtime $(dotnet --list-runtimes | grep NETCore.App | tail -1)"
    echo "# dotnet-dump $(dotnet-dump --version 2>/dev/null | head -1)"
    echo "${PERFMAP_ENV[*]}"
    echo "${recorder[*]} -- dotnet dotnet-leak.dll OUTDIR $name"
    echo "pid $pid ready after $((SECONDS - t0)) s"
  } >"$OUT/$name.log"
  # The snapshot: maps and pmap first (reading them maps nothing in the app).
  cp "/proc/$pid/maps" "$OUT/$name.$pid.maps"
  pmap -XX "$pid" >"$OUT/$name.$pid.pmap"
  cp "$WORK/$name.truth.tsv" "$OUT/$name.$pid.truth.tsv"
  cp "$WORK/$name.heap.tsv" "$OUT/$name.$pid.heap.tsv"
  cp "$WORK/$name.malloc_info.xml" "$OUT/$name.$pid.malloc_info.xml"
  truth_ranges "$OUT/$name.$pid.truth.tsv" >"$OUT/$name.$pid.truth.ranges"
  local snap_ok=1
  ((RSS_MODE)) && { request_snapshot "$name" "$perf_pid" "$pid" || snap_ok=0; }
  ((RSS_MODE)) && dump_while_recorded "$name" "$pid"
  if [[ $dump == 1 ]]; then
    core=$WORK/$name.$pid.core
    log "$name: dotnet-dump collect -p $pid (Full, the default)"
    timeout 120 dotnet-dump collect -p "$pid" -o "$core" >"$WORK/$name.dump.log" 2>&1 ||
      { cat "$WORK/$name.dump.log" >&2; log "$name: dotnet-dump collect failed"; }
    cp "/proc/$pid/maps" "$OUT/$name.$pid.after-dump.maps"
    echo "core dump (--type Full): $(stat -c %s "$core" 2>/dev/null || echo none) bytes" >>"$OUT/$name.log"
  fi
  touch "$WORK/$name.release"
  local t1=$SECONDS
  while kill -0 "$perf_pid" 2>/dev/null && ((SECONDS - t1 < 60)); do sleep 0.2; done
  kill -0 "$perf_pid" 2>/dev/null && { kill -INT "$perf_pid"; sleep 2; }
  wait "$perf_pid" || log "$name: perf record exited with $? (the app's exit code shows here too)"
  cat "$WORK/$name.perf.err" >>"$OUT/$name.log"
  [[ -f /tmp/perf-$pid.map ]] && cp "/tmp/perf-$pid.map" "$OUT/perf-$pid.map"
  [[ -f /tmp/jit-$pid.dump ]] && xz -9 -c "/tmp/jit-$pid.dump" >"$OUT/jit-$pid.dump.xz"
  ls -l /tmp/perf-"$pid".map /tmp/perfinfo-"$pid".map /tmp/jit-"$pid".dump 2>/dev/null |
    sed 's/^/runtime wrote: /' >>"$OUT/$name.log"
  rm -f /tmp/perf-"$pid".map /tmp/jit-"$pid".dump
  # perf's own count of what it lost: must be 0.
  local stats
  stats=$(perf report -i "$OUT/$name.data" --stats 2>/dev/null | grep -E 'stats:|LOST|SAMPLE |TOTAL')
  echo "$stats" | sed 's/^ */perf report --stats: /' >>"$OUT/$name.log"
  if echo "$stats" | grep -q LOST; then
    log "$name: WARNING: perf lost events:"; echo "$stats" | grep LOST >&2
  else
    echo "perf report --stats: no LOST or LOST_SAMPLES records" >>"$OUT/$name.log"
  fi
  if [[ $dump == 1 && -s $core ]]; then
    log "$name: dotnet-dump analyze (maddress, eeheap)"
    timeout 180 dotnet-dump analyze "$core" -c "maddress" -c exit >"$OUT/$name.$pid.maddress.txt" 2>&1
    for variant in "maddress -summary" "maddress -list GCHeap" "maddress --list"; do
      echo "\$ dotnet-dump analyze CORE -c \"$variant\"" >>"$OUT/$name.$pid.maddress.txt"
      timeout 180 dotnet-dump analyze "$core" -c "$variant" -c exit >>"$OUT/$name.$pid.maddress.txt" 2>&1
    done
    timeout 180 dotnet-dump analyze "$core" -c "eeheap" -c exit >"$OUT/$name.$pid.eeheap.txt" 2>&1
    timeout 180 "$PAGEBLAME" dotnet-regions "$core" -o "$OUT/$name.$pid.dotnet-regions.txt" 2>"$WORK/dotnet-regions.err" ||
      { cat "$WORK/dotnet-regions.err" >&2; log "$name: pageblame dotnet-regions failed (no NAME.PID.dotnet-regions.txt)"; }
    python3 "$HERE/trim-core.py" "$core" "$WORK/$name.$pid.core.trim" >>"$OUT/$name.log"
    xz -9 -c "$WORK/$name.$pid.core.trim" >"$OUT/$name.$pid.core.trim.xz"
  fi
  echo "pid $pid" >"$WORK/$name.pid"
  ((snap_ok)) || die "$name: no requested snapshot (above)"
  log "$name: done (pid $pid)"
}

# request_snapshot NAME TIMEOUT_PID APP_PID (--rss): SIGUSR1 to pageblame
# record (timeout's child; timeout passes no SIGUSR1 on), then, once record
# says the snapshot is written, /proc/APP_PID/smaps of the same pause.
# Fails (after saying why) without stopping anything: the caller releases the app.
request_snapshot() {
  local name=$1 recorder t1=$SECONDS
  recorder=$(pgrep -P "$2" -x pageblame | head -1)
  [[ -n $recorder ]] || { log "$name: no pageblame record under timeout (pid $2)"; return 1; }
  kill -USR1 "$recorder" || return 1
  until grep -q "requested snapshot of .* written" "$WORK/$name.perf.err"; do
    ((SECONDS - t1 < 30)) || { log "$name: pageblame record wrote no requested snapshot in 30 s"; return 1; }
    sleep 0.1
  done
  echo "requested snapshot $((SECONDS - t1)) s after the request" >>"$OUT/$name.log"
  cp "/proc/$3/smaps" "$OUT/$name.$3.smaps"
}

# dump_while_recorded NAME APP_PID (--rss): the README's walkthrough, a
# dotnet-dump collect while pageblame record traces the app for its exit
# snapshot (record lets it go for createdump); says how it went in NAME.log.
dump_while_recorded() {
  local name=$1 core=$WORK/$1.recorded.core
  if ! command -v dotnet-dump >/dev/null; then
    log "$name: installing dotnet-dump (dotnet tool install -g dotnet-dump)"
    timeout 300 dotnet tool install -g dotnet-dump >/dev/null 2>&1
  fi
  if ! command -v dotnet-dump >/dev/null; then
    echo "core dump while recorded: no dotnet-dump" >>"$OUT/$name.log"
  elif timeout 120 dotnet-dump collect -p "$2" -o "$core" >"$WORK/$name.dump.log" 2>&1 && [[ -s $core ]]; then
    echo "core dump while recorded: $(stat -c %s "$core") bytes" >>"$OUT/$name.log"
  else
    echo "core dump while recorded: failed: $(tail -3 "$WORK/$name.dump.log" | tr '\n' ' ')" >>"$OUT/$name.log"
  fi
  rm -f "$core"
}

dwarf_events=()
fp_events=()
for s in "${SYSCALLS[@]}"; do
  dwarf_events+=(-e "syscalls:sys_enter_$s/call-graph=dwarf,stack-size=16384/" -e "syscalls:sys_exit_$s/call-graph=no/")
  fp_events+=(-e "syscalls:sys_enter_$s/call-graph=fp/" -e "syscalls:sys_exit_$s/call-graph=no/")
done
run_traced dotnet-leak $((1 - RSS_MODE)) "${dwarf_events[@]}"
if ((HUNT_ONLY)); then
  chmod 644 "$OUT"/*
  exit 0
fi
run_traced dotnet-leak-fp 0 "${fp_events[@]}"

# W^X off, no perf: only the mappings and the perf map, to compare with the above.
rm -f "$OUT"/dotnet-leak-wxoff.*
env "${PERFMAP_ENV[@]}" DOTNET_EnableWriteXorExecute=0 timeout 300 dotnet "$APP_DLL" "$WORK" dotnet-leak-wxoff >/dev/null 2>&1 &
app=$! pid=""
for _ in $(seq 600); do
  [[ -s $WORK/dotnet-leak-wxoff.ready ]] && { pid=$(tr -d '\n' <"$WORK/dotnet-leak-wxoff.ready"); break; }
  kill -0 "$app" 2>/dev/null || break
  sleep 0.2
done
if [[ -n $pid ]]; then
  cp "/proc/$pid/maps" "$OUT/dotnet-leak-wxoff.$pid.maps"
  cp "$WORK/dotnet-leak-wxoff.truth.tsv" "$OUT/dotnet-leak-wxoff.$pid.truth.tsv"
  truth_ranges "$OUT/dotnet-leak-wxoff.$pid.truth.tsv" >"$OUT/dotnet-leak-wxoff.$pid.truth.ranges"
  touch "$WORK/dotnet-leak-wxoff.release"
  wait "$app"
  mv "/tmp/perf-$pid.map" "$OUT/perf-$pid.map"
  rm -f "/tmp/jit-$pid.dump"
  log "dotnet-leak-wxoff: done (pid $pid)"
else
  kill "$app" 2>/dev/null; log "dotnet-leak-wxoff: the app did not get ready"
fi
chmod 644 "$OUT"/*
ls -l "$OUT" >&2
du -sh "$OUT" >&2
