#!/bin/bash
# record.sh — builds the trace programs and records every trace in traces/,
# then checks each one with verify.py and regenerates manifest.tsv and the
# generated part of MANIFEST.md. Run as root (perf needs the tracepoints):
#
#   sudo traces/record.sh              # everything
#   sudo traces/record.sh --no-node    # skip the JIT (node) trace
#   sudo traces/record.sh attach-data  # only attach-data.data: the other
#                                      # traces, bin/ and their manifest rows stay
#   sudo traces/record.sh new [NAME...] # only the commit/dwarf traces (all of
#                                      # NEW_TRACES, or the named ones): builds
#                                      # their programs; the other traces, their
#                                      # binaries and rows stay
#   sudo traces/record.sh zstd         # only the compressed (perf record -z)
#                                      # traces, likewise
#   sudo traces/record.sh phases       # only phases-fp.data (src/phases.c, the
#                                      # growth test): builds bin/phases alone
#   sudo traces/record.sh residency    # only residency.data + .rss (src/residency.c,
#                                      # recorded by build/bin/pageblame record with
#                                      # residency snapshots): builds bin/residency alone
#   sudo traces/record.sh heap         # only arena-mix.data + .rss + .heap (src/arena_mix.c,
#                                      # recorded likewise, with heap snapshots):
#                                      # builds bin/arena_mix alone
#
# Outputs (all under traces/): bin/{rules,attach,commit,alloc,vec,Grow.class},
# buildid-cache/.build-id/XX/YYYY -> ../../../bin/NAME, *.data, perf-PID.map,
# maps/NAME.PID.maps (+ .pre.maps in attach mode), truth/NAME.PID.tsv (the
# programs' own ground truth), manifest.tsv, MANIFEST.md.
# Re-recording changes pids, addresses and times: tests must read them from
# manifest.tsv and the maps files, never hard-code them.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE"
[[ $EUID -eq 0 ]] || { echo "record.sh: run as root" >&2; exit 1; }
WITH_NODE=1
ONLY=""
case "${1:-}" in
  "") ;;
  --no-node) WITH_NODE=0 ;;
  attach-data) ONLY=attach-data ;;
  new) ONLY=new; shift; NEW_ONLY=("$@") ;;
  zstd) ONLY=zstd ;;
  phases) ONLY=phases ;;
  residency) ONLY=residency ;;
  heap) ONLY=heap ;;
  *) echo "usage: record.sh [--no-node | attach-data | zstd | phases | residency | heap | new [NAME...]]" >&2; exit 2 ;;
esac

# The traces name bin/rules by the path perf saw, and every trace here was
# recorded at /work/main/traces (tests map that prefix to their checkout:
# tests/trace_fixtures.h LocalPath). So that traces added from another
# checkout name the same paths, `record.sh zstd` run elsewhere re-runs itself
# in a private mount namespace in which this checkout's traces/ is mounted
# at /work/main/traces (no one outside the namespace sees the mount).
# `record.sh residency` and `record.sh heap` do the same, with this
# checkout's build/bin/pageblame (or $PAGEBLAME).
RECORDED_ROOT=/work/main/traces
if [[ ($ONLY == zstd || $ONLY == residency || $ONLY == heap) && $HERE != "$RECORDED_ROOT" && -z ${RECORD_SH_IN_NS:-} ]]; then
  [[ -d $RECORDED_ROOT ]] || { echo "record.sh: no $RECORDED_ROOT to mount over" >&2; exit 1; }
  exec env RECORD_SH_IN_NS=1 PAGEBLAME="${PAGEBLAME:-$HERE/../build/bin/pageblame}" \
    unshare --mount --propagation private -- \
    bash -c 'mount --bind "$1" "$2" && exec "$2/record.sh" "$3"' _ "$HERE" "$RECORDED_ROOT" "$ONLY"
fi

CFLAGS=(-O0 -g -fno-omit-frame-pointer -Wall -Wextra -Werror -pthread)
# The seed's form: perf trace also records raw_syscalls for every syscall.
TRACE_EVENTS='syscalls:*_mmap,syscalls:*_munmap,syscalls:*_brk,syscalls:*_mremap'
RECORD_EVENTS=syscalls:sys_enter_mmap,syscalls:sys_exit_mmap,syscalls:sys_enter_munmap,syscalls:sys_exit_munmap,syscalls:sys_enter_brk,syscalls:sys_exit_brk,syscalls:sys_enter_mremap,syscalls:sys_exit_mremap
# The commit/dwarf traces also record the prot-changing calls.
SYSCALLS7=(mmap munmap brk mremap mprotect pkey_mprotect madvise)
TRACE_EVENTS7='syscalls:*_mmap,syscalls:*_munmap,syscalls:*_brk,syscalls:*_mremap,syscalls:*_mprotect,syscalls:*_pkey_mprotect,syscalls:*_madvise'
FP_EVENTS7=() DWARF_EVENTS7=()
for s in "${SYSCALLS7[@]}"; do
  FP_EVENTS7+=(-e "syscalls:sys_enter_$s" -e "syscalls:sys_exit_$s")
  # DWARF stacks on the enter events only (docs/design.md, "Recording").
  DWARF_EVENTS7+=(-e "syscalls:sys_enter_$s/call-graph=dwarf,stack-size=16384/"
                  -e "syscalls:sys_exit_$s/call-graph=no/")
done
# -O2 with DWARF inline info; frame pointers kept and no tail calls, so each
# named function stays on the stack below libc.
OPT_CFLAGS=(-O2 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -Wall -Wextra -Werror -pthread)
JAVA_OPTS=(-XX:+UseSerialGC -Xms16m -Xmx512m -Xint)
TRUTH="$HERE/truth"
RULES="$HERE/bin/rules"
ATTACH="$HERE/bin/attach"
MAPS="$HERE/maps"
MANIFEST="$HERE/manifest.tsv"
VERIFY=(python3 "$HERE/verify.py")

log() { echo "record.sh: $*" >&2; }

build() {
  mkdir -p bin
  gcc "${CFLAGS[@]}" src/rules.c -o bin/rules
  gcc "${CFLAGS[@]}" src/attach.c -o bin/attach
  build_new
}

# The programs of the commit/dwarf traces, and their build-id cache entries
# (the layout of ~/.debug/.build-id: a checkout elsewhere finds each binary by
# the build-id in the trace header).
build_new() {
  mkdir -p bin
  gcc "${CFLAGS[@]}" src/commit.c -o bin/commit
  gcc "${CFLAGS[@]}" src/teardown.c -o bin/teardown
  gcc "${OPT_CFLAGS[@]}" src/alloc.c -o bin/alloc
  g++ -std=c++17 "${OPT_CFLAGS[@]}" src/vec.cc -o bin/vec
  javac -d bin src/Grow.java
  gcc "${CFLAGS[@]}" src/phases.c -o bin/phases
  gcc "${CFLAGS[@]}" src/residency.c -o bin/residency
  build_arena_mix
  link_build_ids
}

# record.sh's flags without -Wextra: arena_mix.c is also the heap tests' program.
build_arena_mix() {
  gcc -O0 -g -fno-omit-frame-pointer -Wall -Werror -pthread src/arena_mix.c -o bin/arena_mix
}

# buildid-cache/.build-id/XX/YYYY -> ../../../bin/NAME for each ELF binary.
link_build_ids() {
  local b id
  for b in rules attach commit alloc vec teardown phases residency arena_mix; do
    [[ -f bin/$b ]] || continue
    id=$(readelf -n "bin/$b" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
    mkdir -p "buildid-cache/.build-id/${id:0:2}"
    ln -sfn "../../../bin/$b" "buildid-cache/.build-id/${id:0:2}/${id:2}"
  done
}

# verify TRACE NAME EXE MODE [--expect-mismatch]
verify() {
  "${VERIFY[@]}" "$1" "$MAPS" "$2" --exe "$3" --mode "$4" --manifest "$MANIFEST" "${@:5}"
}

# verify_truth TRACE NAME EXE MODE: also replays prot (mprotect, pkey_mprotect,
# madvise, partial -ENOMEM), checks it page-exact against the maps, and checks
# truth/NAME.PID.tsv's origin/commit functions against perf's stacks.
verify_truth() {
  verify "$@" --prot --truth "$TRUTH"
}

# record_dwarf NAME CMD...: perf record, DWARF stacks on the enter events,
# a 128 MiB buffer (at perf's default a DWARF recording loses most samples).
record_dwarf() {
  local name=$1
  shift
  perf record -m 128M "${DWARF_EVENTS7[@]}" -o "$name.data" "$@"
}

record_rules_trace() {  # perf trace record, the seed's exact command
  perf trace record --call-graph fp -e "$TRACE_EVENTS" -o rules-trace.data \
    "$RULES" "$MAPS" rules-trace
  verify rules-trace.data rules-trace "$RULES" trace-record
}

record_rules_record() {  # perf record -g with the syscalls:* tracepoints only
  perf record -g -e "$RECORD_EVENTS" -o rules-record.data "$RULES" "$MAPS" rules-record
  verify rules-record.data rules-record "$RULES" record
}

record_rules_pipe() {  # perf record to a pipe: the streamed file format
  perf record -g -e "$RECORD_EVENTS" -o - "$RULES" "$MAPS" rules-pipe > rules-pipe.data
  verify rules-pipe.data rules-pipe "$RULES" pipe
}

# Compressed traces (perf record -z): the data section holds zstd-compressed
# PERF_RECORD_COMPRESSED records (processor/perf/record_decompressor.h).
# -m 4 (16 KiB per CPU): the ring buffers wrap, and perf compresses the two
# parts of a wrapped read as two COMPRESSED records, so some records are cut
# across two, as in any long recording (verify catches lost events).
record_rules_zstd() {
  perf record -z -m 4 -g -e "$RECORD_EVENTS" -o rules-zstd.data "$RULES" "$MAPS" rules-zstd
  verify rules-zstd.data rules-zstd "$RULES" record-zstd
}

record_rules_zstd_pipe() {  # -z to a pipe: COMPRESSED records in the stream
  perf record -z -m 4 -g -e "$RECORD_EVENTS" -o - "$RULES" "$MAPS" rules-zstd-pipe \
    > rules-zstd-pipe.data
  verify rules-zstd-pipe.data rules-zstd-pipe "$RULES" pipe-zstd
}

# --call-graph dwarf on the enter events only (docs/design.md "Recording"),
# compressed: the stack copies compress well. For the DWARF unwinder: until
# it lands, its call chains are empty (perf records no frame-pointer chain).
record_rules_dwarf_zstd() {
  local events=() s
  for s in mmap munmap brk mremap; do
    events+=(-e "syscalls:sys_enter_$s/call-graph=dwarf,stack-size=16384/"
             -e "syscalls:sys_exit_$s/call-graph=no/")
  done
  perf record -z -m 128M "${events[@]}" -o rules-dwarf-zstd.data \
    "$RULES" "$MAPS" rules-dwarf-zstd
  verify rules-dwarf-zstd.data rules-dwarf-zstd "$RULES" dwarf-zstd
}

# record.sh zstd: (re)records the compressed traces alone, with the
# committed bin/rules (the other traces name it by build-id); the other
# traces' rows are kept, these traces' old rows, maps and data replaced.
only_zstd() {
  [[ -x "$RULES" ]] || { log "no bin/rules: run the full record.sh first"; return 1; }
  local names=(rules-zstd rules-zstd-pipe rules-dwarf-zstd) n
  for n in "${names[@]}"; do
    rm -f "$n.data" "$n.data.old" "$MAPS/$n".*
    grep -v -P "^$n\.data\t" "$MANIFEST" > "$MANIFEST.tmp" || true
    mv "$MANIFEST.tmp" "$MANIFEST"
  done
  record_rules_zstd
  record_rules_zstd_pipe
  record_rules_dwarf_zstd
  rm -f /tmp/pageblame-rules.*.dat "$MAPS"/*.tmp
  for n in "${names[@]}"; do chmod 644 "$n.data" "$MAPS/$n".*; done
  python3 "$HERE/manifest_md.py" "$MANIFEST" "$HERE/MANIFEST.md"
  for n in "${names[@]}"; do ls -l "$n.data"; done >&2
}

# attach_and_record NAME [PERF TRACE RECORD OPTIONS...]: starts bin/attach,
# waits for its .pre.maps, attaches `perf trace record OPTIONS -p PID -e ...
# -o NAME.data`, releases it with SIGUSR1 and waits until both have ended.
attach_and_record() {
  local name=$1
  shift
  "$ATTACH" "$MAPS" "$name" &
  local target=$!
  local pre=""
  for _ in $(seq 100); do
    pre=$(ls "$MAPS"/"$name"."$target".pre.maps 2>/dev/null || true)
    [[ -n "$pre" ]] && break
    sleep 0.1
  done
  [[ -n "$pre" ]] || { log "attach did not write its .pre.maps"; kill "$target"; return 1; }
  perf trace record "$@" --call-graph fp -p "$target" -e "$TRACE_EVENTS" -o "$name".data &
  local perf_pid=$!
  # Release the target only once perf has its events open (and a margin for
  # enabling them on every thread).
  for _ in $(seq 100); do
    ls -l /proc/"$perf_pid"/fd 2>/dev/null | grep -q perf_event && break
    sleep 0.1
  done
  sleep 1
  kill -USR1 "$target"
  wait "$target"  # set -e: a failed check in attach stops the script here
  wait "$perf_pid" || true  # perf ends when its target exits
}

record_attach() {  # perf trace record -p PID on an already running process
  attach_and_record attach-trace
  verify attach-trace.data attach-trace "$ATTACH" attach
}

record_attach_data() {  # the same with -d (--data): perf synthesizes every
  # readable or executable mapping at attach ([heap], //anon), not only the
  # executable ones, and the kernel reports data mmaps (attr.mmap_data).
  attach_and_record attach-data -d
  verify attach-data.data attach-data "$ATTACH" attach-data --data-maps
}

# The growth test (src/phases.c): two phases of mappings from different
# functions, 200 ms apart; fp stacks, the 7 syscalls.
record_phases_fp() {
  perf record --call-graph fp "${FP_EVENTS7[@]}" -o phases-fp.data \
    "$HERE/bin/phases" "$MAPS" "$TRUTH" phases-fp
  verify_truth phases-fp.data phases-fp "$HERE/bin/phases" record
}

# record.sh phases: (re)builds bin/phases alone (the other binaries keep the
# build ids their traces name) and (re)records phases-fp.data; its old data,
# maps, truth and row are replaced, the rest stay.
only_phases() {
  mkdir -p bin "$MAPS" "$TRUTH"
  gcc "${CFLAGS[@]}" src/phases.c -o bin/phases
  link_build_ids
  rm -f phases-fp.data phases-fp.data.old "$MAPS"/phases-fp.* "$TRUTH"/phases-fp.*
  grep -v -P '^phases-fp\.data\t' "$MANIFEST" > "$MANIFEST.tmp" || true
  mv "$MANIFEST.tmp" "$MANIFEST"
  record_phases_fp
  chmod 644 phases-fp.data "$MAPS"/phases-fp.* "$TRUTH"/phases-fp.*
  python3 "$HERE/manifest_md.py" "$MANIFEST" "$HERE/MANIFEST.md"
  ls -l phases-fp.data >&2
}

# record.sh attach-data: (re)records attach-data.data alone. bin/attach is not
# rebuilt (attach-trace.data names it by build-id) and the other traces' rows
# are kept; this trace's old row, maps and data are replaced.
only_attach_data() {
  [[ -x "$ATTACH" ]] || { log "no bin/attach: run the full record.sh first"; return 1; }
  rm -f attach-data.data attach-data.data.old "$MAPS"/attach-data.*
  grep -v -P '^attach-data\.data\t' "$MANIFEST" > "$MANIFEST.tmp" || true
  mv "$MANIFEST.tmp" "$MANIFEST"
  record_attach_data
  chmod 644 attach-data.data "$MAPS"/attach-data.*
  python3 "$HERE/manifest_md.py" "$MANIFEST" "$HERE/MANIFEST.md"
  ls -l attach-data.data "$MAPS"/attach-data.* >&2
}

record_node() {  # a JIT runtime; the JS stops itself, we snapshot its maps
  local work node_exe
  work=$(mktemp -d)  # node --perf-basic-prof may drop isolate logs in its cwd
  node_exe=$(readlink -f "$(command -v node)")
  (cd "$work" && exec perf trace record --call-graph fp -e "$TRACE_EVENTS" \
     -o "$HERE/node-trace.data" "$node_exe" --perf-basic-prof \
     "$HERE/src/jit.js" "$MAPS" node-trace) &
  local perf_pid=$! target=""
  for _ in $(seq 300); do
    [[ -s "$MAPS/node-trace.pid" ]] && target=$(cat "$MAPS/node-trace.pid") && break
    sleep 0.1
  done
  [[ -n "$target" ]] || { log "node did not start"; return 1; }
  # Wait until every thread is stopped (state T): then no memory syscall can
  # be in flight and the snapshot is the end state.
  local stopped=0
  for _ in $(seq 600); do
    states=$(cat /proc/"$target"/task/*/stat 2>/dev/null |
             sed 's/^.*) //' | cut -d' ' -f1 | sort -u | tr -d '\n')
    [[ "$states" == T ]] && { stopped=1; break; }
    sleep 0.05
  done
  [[ $stopped == 1 ]] || { log "node never stopped"; kill -KILL "$target"; return 1; }
  cp /proc/"$target"/maps "$MAPS/node-trace.$target.maps"
  kill -KILL "$target"
  wait "$perf_pid" 2>/dev/null || true  # perf reports the workload's SIGKILL
  rm -f "$MAPS/node-trace.pid"
  mv "/tmp/perf-$target.map" "$HERE/perf-$target.map"
  rm -rf "$work"
  verify node-trace.data node-trace "$node_exe" jit
}

record_lost() {  # lost-events fixture: tiny buffer, perf and workload on one CPU
  for attempt in 1 2 3 4 5; do
    rm -f "$MAPS"/rules-lost.*
    taskset -c 0 perf record -g -m 1 -e "$RECORD_EVENTS" -o rules-lost.data \
      "$RULES" --storm "$MAPS" rules-lost 2000
    local before
    before=$(wc -l < "$MANIFEST")
    if verify rules-lost.data rules-lost "$RULES" lost --expect-mismatch; then
      return 0
    fi
    # Drop this attempt's manifest rows and try again.
    head -n "$before" "$MANIFEST" > "$MANIFEST.tmp" && mv "$MANIFEST.tmp" "$MANIFEST"
    log "attempt $attempt recorded no lost events, retrying"
  done
  log "could not provoke lost events"; return 1
}

record_negative() {
  # No call chains: the mmap tracepoints only, without -g.
  perf record -e syscalls:sys_enter_mmap,syscalls:sys_exit_mmap -o no-callchain.data \
    "$RULES" "$MAPS" no-callchain
  # Only mmap events recorded: munmap/brk/mremap are missing, so no end-state
  # check; the rows still give pids and roles.
  "${VERIFY[@]}" no-callchain.data "$MAPS" no-callchain --exe "$RULES" \
    --mode no-callchain --manifest "$MANIFEST" || true
  # No syscall events at all.
  perf record -e page-faults -o no-syscalls.data /usr/bin/true
  printf 'no-syscalls.data\t-\t\t\t%s\tno-syscalls\t\t\t\t\t\t\t0\t0\t-\t\t\t\t\n' \
    /usr/bin/true >> "$MANIFEST"
}

# ---- The commit/dwarf traces (src/commit.c, alloc.c, vec.cc, alloc.py,
# big.js, Grow.java): mprotect/pkey_mprotect/madvise recorded too, each
# program writes truth/NAME.PID.tsv before its maps.

record_commit_trace() {  # the seed's perf trace form, with the 7 syscalls, fp
  perf trace record --call-graph fp -e "$TRACE_EVENTS7" -o commit-trace.data \
    "$HERE/bin/commit" "$MAPS" "$TRUTH" commit-trace
  verify_truth commit-trace.data commit-trace "$HERE/bin/commit" trace-record
}

record_commit_dwarf() {
  record_dwarf commit-dwarf "$HERE/bin/commit" "$MAPS" "$TRUTH" commit-dwarf
  verify_truth commit-dwarf.data commit-dwarf "$HERE/bin/commit" dwarf
}

record_alloc_fp() {  # perf record, frame pointers: stacks stop in libc
  perf record --call-graph fp "${FP_EVENTS7[@]}" -o alloc-fp.data \
    "$HERE/bin/alloc" "$MAPS" "$TRUTH" alloc-fp
  verify_truth alloc-fp.data alloc-fp "$HERE/bin/alloc" record
}

record_alloc_dwarf() {
  record_dwarf alloc-dwarf "$HERE/bin/alloc" "$MAPS" "$TRUTH" alloc-dwarf
  verify_truth alloc-dwarf.data alloc-dwarf "$HERE/bin/alloc" dwarf
}

record_vec_dwarf() {
  record_dwarf vec-dwarf "$HERE/bin/vec" "$MAPS" "$TRUTH" vec-dwarf
  verify_truth vec-dwarf.data vec-dwarf "$HERE/bin/vec" dwarf
}

record_python_dwarf() {
  record_dwarf python-dwarf /usr/bin/python3 "$HERE/src/alloc.py" "$MAPS" "$TRUTH" python-dwarf
  verify_truth python-dwarf.data python-dwarf /usr/bin/python3 dwarf
}

# As record_node, with DWARF stacks; perf-PID.map kept. -z (zstd): V8's
# hundreds of mprotect/madvise calls make ~7 MB of stack copies otherwise.
record_node_dwarf() {
  local work node_exe
  work=$(mktemp -d)
  node_exe=$(readlink -f "$(command -v node)")
  (cd "$work" && exec perf record -z -m 128M "${DWARF_EVENTS7[@]}" -o "$HERE/node-dwarf.data" \
     "$node_exe" --perf-basic-prof --interpreted-frames-native-stack \
     "$HERE/src/big.js" "$MAPS" "$TRUTH" node-dwarf) &
  local perf_pid=$! target=""
  for _ in $(seq 300); do
    [[ -s "$MAPS/node-dwarf.pid" ]] && target=$(cat "$MAPS/node-dwarf.pid") && break
    sleep 0.1
  done
  [[ -n "$target" ]] || { log "node did not start"; return 1; }
  local stopped=0 states
  for _ in $(seq 600); do
    states=$(cat /proc/"$target"/task/*/stat 2>/dev/null |
             sed 's/^.*) //' | cut -d' ' -f1 | sort -u | tr -d '\n')
    [[ "$states" == T ]] && { stopped=1; break; }
    sleep 0.05
  done
  [[ $stopped == 1 ]] || { log "node never stopped"; kill -KILL "$target"; return 1; }
  cp /proc/"$target"/maps "$MAPS/node-dwarf.$target.maps"
  kill -KILL "$target"
  wait "$perf_pid" 2>/dev/null || true
  rm -f "$MAPS/node-dwarf.pid"
  mv "/tmp/perf-$target.map" "$HERE/perf-$target.map"
  rm -rf "$work"
  verify_truth node-dwarf.data node-dwarf "$node_exe" jit-dwarf-z
}

# The JVM: HotSpot logs where it reserved the heap (Grow.java reads it for its
# truth file); the log is scratch, not kept.
jvm_cmd() {  # jvm_cmd NAME LOG
  echo "$(readlink -f "$(command -v java)")" "${JAVA_OPTS[@]}" \
    "-Xlog:gc+heap+coops=debug:file=$2" -cp "$HERE/bin" Grow "$MAPS" "$TRUTH" "$1" "$2"
}

record_jvm_fp() {
  local log java_exe
  log=$(mktemp) java_exe=$(readlink -f "$(command -v java)")
  # shellcheck disable=SC2046
  perf record --call-graph fp "${FP_EVENTS7[@]}" -o jvm-fp.data $(jvm_cmd jvm-fp "$log")
  rm -f "$log"
  verify_truth jvm-fp.data jvm-fp "$java_exe" record
}

record_jvm_dwarf() {  # -z: zstd-compressed records (PERF_RECORD_COMPRESSED)
  local log java_exe
  log=$(mktemp) java_exe=$(readlink -f "$(command -v java)")
  # shellcheck disable=SC2046
  perf record -z -m 128M "${DWARF_EVENTS7[@]}" -o jvm-dwarf.data $(jvm_cmd jvm-dwarf "$log")
  rm -f "$log"
  verify_truth jvm-dwarf.data jvm-dwarf "$java_exe" dwarf-z
}

# teardown: recorded by `pageblame record` itself (the build's binary), which
# also writes NAME.PID.peak.maps (the program's maps at its peak).
record_teardown() {
  "$HERE/../build/bin/pageblame" record --call-graph fp -o teardown.data -- \
    "$HERE/bin/teardown" "$MAPS" teardown
  verify teardown.data teardown "$HERE/bin/teardown" record-zstd
}

# The residency trace (src/residency.c, issue 28): recorded by `pageblame
# record --rss-every 0.2` (DWARF stacks, -z, -k mono) with its snapshots,
# residency.data.rss. While the program waits on its FIFO, a snapshot is
# requested (SIGUSR1) and the kernel's view of both of its processes is
# saved at that same pause: maps/residency.PID.pause.{maps,smaps}. The
# program's own account of its regions and the pages it touched is
# truth/residency.PID.regions.tsv. Not in manifest.tsv: its maps are of the
# pause, not the end, which the manifest's other tests expect.
record_residency() {
  local pb=${PAGEBLAME:-$HERE/../build/bin/pageblame} work rec pid="" child="" p
  [[ -x $pb ]] || { log "no $pb: build pageblame first"; return 1; }
  work=$(mktemp -d /tmp/residency.XXXXXX)
  "$pb" record --rss-every 0.2 -o residency.data -- "$HERE/bin/residency" "$work" residency \
    2> "$work/record.err" &
  rec=$!
  for _ in $(seq 600); do [[ -s $work/residency.ready ]] && break; sleep 0.1; done
  if [[ ! -s $work/residency.ready ]]; then
    log "residency never paused"; kill -INT "$rec"; wait "$rec" || true; cat "$work/record.err" >&2; return 1
  fi
  read -r pid child < "$work/residency.ready"
  sleep 0.5  # periodic snapshots of the pause too
  kill -USR1 "$rec"
  for _ in $(seq 100); do grep -q "requested snapshot" "$work/record.err" && break; sleep 0.1; done
  grep -q "requested snapshot of 2 processes" "$work/record.err" || { log "no requested snapshot"; return 1; }
  for p in "$pid" "$child"; do
    cp "/proc/$p/maps" "$MAPS/residency.$p.pause.maps"
    cp "/proc/$p/smaps" "$MAPS/residency.$p.pause.smaps"
  done
  cp "$work/residency.$pid.tsv" "$TRUTH/residency.$pid.regions.tsv"
  : > "$work/residency.go"  # a writer on the FIFO: the program goes on and ends
  wait "$rec"
  cat "$work/record.err" >&2
  rm -rf "$work"
}

# record.sh residency: (re)builds bin/residency alone and (re)records
# residency.data, its .rss and pause files; the rest stays.
only_residency() {
  mkdir -p bin "$MAPS" "$TRUTH"
  gcc "${CFLAGS[@]}" src/residency.c -o bin/residency
  link_build_ids
  rm -f residency.data residency.data.old residency.data.rss residency.data.old.rss "$MAPS"/residency.* \
    "$TRUTH"/residency.*
  record_residency
  chmod 644 residency.data residency.data.rss "$MAPS"/residency.* "$TRUTH"/residency.*
  ls -l residency.data residency.data.rss "$MAPS"/residency.* "$TRUTH"/residency.* >&2
}

# The heap trace (src/arena_mix.c, issue 39): recorded by `pageblame record
# --rss-every 0.2` (DWARF stacks, -z) with its residency and heap snapshots,
# arena-mix.data.rss and arena-mix.data.heap, as tests/heap_record_live_test.cc
# records it live: `arena_mix DIR 1` (two arenas) pauses after writing its
# malloc_info (kept as truth/arena-mix.PID.info.xml); periodic snapshots of
# the pause are taken and its maps saved (maps/arena-mix.PID.pause.maps,
# the region table of the report's attribution test); released, it calls
# malloc_trim(0); then the recording is stopped (SIGINT: a last snapshot).
# Not in manifest.tsv, as residency.data: its maps are of the pause.
record_heap() {
  local pb=${PAGEBLAME:-$HERE/../build/bin/pageblame} work rec pid=""
  [[ -x $pb ]] || { log "no $pb: build pageblame first"; return 1; }
  work=$(mktemp -d /tmp/arena-mix.XXXXXX)
  mkdir "$work/out"
  mkfifo "$work/in"
  "$pb" record --rss-every 0.2 -o arena-mix.data -- "$HERE/bin/arena_mix" "$work/out" 1 \
    < "$work/in" 2> "$work/record.err" &
  rec=$!
  exec 3> "$work/in"  # the program's standard input: a line releases it
  for _ in $(seq 600); do [[ -s $work/out/ready ]] && break; sleep 0.1; done
  if [[ ! -s $work/out/ready ]]; then
    log "arena_mix never paused"; kill -INT "$rec"; wait "$rec" || true; cat "$work/record.err" >&2; return 1
  fi
  read -r pid < "$work/out/ready"
  sleep 1.2  # periodic snapshots of the pause
  cp "/proc/$pid/maps" "$MAPS/arena-mix.$pid.pause.maps"
  cp "$work/out/info.xml" "$TRUTH/arena-mix.$pid.info.xml"
  echo >&3
  for _ in $(seq 100); do [[ -s $work/out/trim.txt ]] && break; sleep 0.1; done
  sleep 0.3
  kill -INT "$rec"
  wait "$rec"
  exec 3>&-
  cat "$work/record.err" >&2
  rm -rf "$work"
}

# record.sh heap: (re)builds bin/arena_mix alone and (re)records
# arena-mix.data, its .rss, .heap and pause files; the rest stays.
only_heap() {
  mkdir -p bin "$MAPS" "$TRUTH"
  build_arena_mix
  link_build_ids
  rm -f arena-mix.data arena-mix.data.old arena-mix.data.rss arena-mix.data.heap arena-mix.data.old.* \
    "$MAPS"/arena-mix.* "$TRUTH"/arena-mix.*
  record_heap
  chmod 644 arena-mix.data arena-mix.data.rss arena-mix.data.heap "$MAPS"/arena-mix.* "$TRUTH"/arena-mix.*
  ls -l arena-mix.data arena-mix.data.rss arena-mix.data.heap "$MAPS"/arena-mix.* "$TRUTH"/arena-mix.* >&2
}

NEW_TRACES=(commit-trace commit-dwarf alloc-fp alloc-dwarf vec-dwarf python-dwarf
            node-dwarf jvm-fp jvm-dwarf teardown)

record_new_one() {
  case $1 in
    commit-trace) record_commit_trace ;;
    commit-dwarf) record_commit_dwarf ;;
    alloc-fp) record_alloc_fp ;;
    alloc-dwarf) record_alloc_dwarf ;;
    vec-dwarf) record_vec_dwarf ;;
    python-dwarf) record_python_dwarf ;;
    node-dwarf) record_node_dwarf ;;
    jvm-fp) record_jvm_fp ;;
    jvm-dwarf) record_jvm_dwarf ;;
    teardown) record_teardown ;;
    *) log "unknown trace $1 (one of: ${NEW_TRACES[*]})"; return 2 ;;
  esac
}

# record.sh new [NAME...]: (re)records the named new traces (default: all of
# NEW_TRACES) and nothing else. Each one's old data, maps, truth, perf map and
# manifest rows are replaced; the binaries of the other traces are not rebuilt.
only_new() {
  local names=("${NEW_ONLY[@]}") n f
  ((${#names[@]})) || names=("${NEW_TRACES[@]}")
  build_new
  mkdir -p "$MAPS" "$TRUTH"
  for n in "${names[@]}"; do
    if [[ -f $n.data ]]; then  # its node perf map, if any, by the old pid
      for f in $(awk -F'\t' -v t="$n.data" '$1 == t {print $2}' "$MANIFEST"); do
        rm -f "perf-$f.map"
      done
    fi
    rm -f "$n.data" "$n.data.old" "$MAPS/$n".* "$TRUTH/$n".*
    grep -v -P "^\Q$n.data\E\t" "$MANIFEST" > "$MANIFEST.tmp" || true
    mv "$MANIFEST.tmp" "$MANIFEST"
    record_new_one "$n"
    chmod 644 "$n.data" "$MAPS/$n".* "$TRUTH/$n".* perf-*.map 2>/dev/null || true
  done
  python3 "$HERE/manifest_md.py" "$MANIFEST" "$HERE/MANIFEST.md"
}

main() {
  [[ $ONLY == attach-data ]] && { only_attach_data; return; }
  [[ $ONLY == new ]] && { only_new; return; }
  [[ $ONLY == zstd ]] && { only_zstd; return; }
  [[ $ONLY == phases ]] && { only_phases; return; }
  [[ $ONLY == residency ]] && { only_residency; return; }
  [[ $ONLY == heap ]] && { only_heap; return; }
  build
  rm -rf maps && mkdir -p maps
  rm -f ./*.data ./*.data.old ./*.data.rss ./*.data.old.rss ./*.data.heap ./*.data.old.heap perf-*.map
  printf 'trace\tpid\tmaps\tpre_maps\texe\tmode\trole\tparent\tmmap\tmunmap\tbrk\tmremap\tpages_made\tlost_records\tverify\tmprotect\tpkey_mprotect\tmadvise\ttruth\n' > "$MANIFEST"
  record_rules_trace
  record_rules_record
  record_rules_pipe
  record_rules_zstd
  record_rules_zstd_pipe
  record_rules_dwarf_zstd
  record_attach
  record_attach_data
  [[ $WITH_NODE == 1 ]] && record_node
  record_lost
  record_negative
  rm -rf truth && mkdir -p truth
  for n in "${NEW_TRACES[@]}"; do
    [[ $WITH_NODE == 0 && $n == node-dwarf ]] || record_new_one "$n"
  done
  record_phases_fp
  record_residency
  record_heap
  rm -f /tmp/pageblame-rules.*.dat "$MAPS"/*.tmp
  chmod 644 ./*.data ./*.data.rss ./*.data.heap maps/* truth/* perf-*.map 2>/dev/null || true
  python3 "$HERE/manifest_md.py" "$MANIFEST" "$HERE/MANIFEST.md"
  ls -l ./*.data perf-*.map 2>/dev/null >&2 || true  # no perf-*.map with --no-node
  du -sh . >&2
}

main "$@"
