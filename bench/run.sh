#!/usr/bin/env bash
# run.sh — the benchmark: records a real churn trace with the seed tool's
# `perf trace record` command and times, on that same file and in the same
# run, pageblame against cat, perf script and a Python perf script.
# Run by hand as root (perf needs the tracepoints); not part of scripts/test.
#
#   bench/run.sh [--scale N] [--runs K] [--threads T] [--scaling] [--scaling-only]
#                [--profile] [--quick] [--reuse] [--no-build] [--py-limit S]
#                [--dwarf] [--dwarf-only] [--dwarf-scale N]
#
#   --scale N      trace size: T threads x N*100000 iterations each. With the
#                  default 4 threads, 1 gives ~1.6 M samples / ~600 MB.
#   --runs K       runs per tool; the table shows the median (default 3).
#   --threads T    churn threads (default 4).
#   --scaling      also time `pageblame maps` at 0.2x, 1x and 5x of --scale.
#   --scaling-only only that.
#   --profile      also `perf record -g` one `pageblame maps` on the main trace
#                  and print the top of `perf report --no-children`.
#   --dwarf        also churn recorded with DWARF stacks (what `pageblame record`
#                  runs: dwarf call graphs on the enter events only),
#                  plain and -z: pageblame maps vs perf script (which unwinds
#                  too), peak memory against an fp trace of the same size, and
#                  the unwinder's share of the time (`maps -v`).
#   --dwarf-only   only that.
#   --dwarf-scale N  its size (default 0.05: each enter sample copies 16 KiB
#                  of stack, so 0.05 is already ~1 GB uncompressed).
#   --quick        smoke test, < 2 minutes: --scale 0.05 --runs 1 --scaling
#                  (scaling at 0.2x/1x/5x of 0.05).
#   --reuse        keep an already recorded trace of the same scale/threads.
#   --no-build     use the binaries already in the build directory.
#   --py-limit S   the Python perf script may run S seconds on the main trace
#                  (default 900). If it takes longer it is killed and measured
#                  on a 0.1x trace instead; the table then says EXTRAPOLATED.
#   --tool-limit S any other tool run is killed after S seconds (default 900;
#                  --quick: 20) and its row says "timeout". Every run is also
#                  capped at BENCH_MEM_LIMIT_MIB of address space (RLIMIT_AS;
#                  default min(6 GiB, RAM/2)): a runaway tool fails alone
#                  instead of calling the OOM killer on a shared machine.
#
# Outputs under bench/out/ (git-ignored): the traces, churn's maps files,
# results-*.tsv, and report-<time>.md (the tables printed at the end).
# Environment: BENCH_BUILD_DIR (default build-bench), BUILD_TYPE
# (RelWithDebInfo), BENCH_OUT (bench/out), PERF_MMAP (perf's -m, 256M per
# CPU; "default" records with perf trace's own 4 MiB, which loses events at
# churn's rate), BENCH_MEM_LIMIT_MIB (see --tool-limit).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
OUT=${BENCH_OUT:-$HERE/out}
BUILD=${BENCH_BUILD_DIR:-$ROOT/build-bench}
[[ $BUILD == /* ]] || BUILD=$ROOT/$BUILD
BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo}
PERF_MMAP=${PERF_MMAP:-256M}  # perf's -m per CPU; "default": perf trace's own (4 MiB)
TRACE_EVENTS='syscalls:*_mmap,syscalls:*_munmap,syscalls:*_brk,syscalls:*_mremap,syscalls:*_mprotect,syscalls:*_madvise'
BASE_ITERS=100000
# Address-space cap per timed run (RLIMIT_AS), see --tool-limit.
MEM_LIMIT_MIB=${BENCH_MEM_LIMIT_MIB:-$(awk '/^MemTotal:/ {m = int($2 / 1024 / 2); print (m < 6144 ? m : 6144)}' /proc/meminfo)}

SCALE=1 RUNS=3 THREADS=4 TABLE=1 SCALING=0 PROFILE=0 REUSE=0 BUILD_IT=1 PY_LIMIT=900 TOOL_LIMIT="" QUICK=0
DWARF=0 DWARF_SCALE=0.05
while (($#)); do
  case "$1" in
    --scale) SCALE=$2; shift ;;
    --runs) RUNS=$2; shift ;;
    --threads) THREADS=$2; shift ;;
    --scaling) SCALING=1 ;;
    --scaling-only) SCALING=1 TABLE=0 ;;
    --profile) PROFILE=1 ;;
    --dwarf) DWARF=1 ;;
    --dwarf-only) DWARF=1 TABLE=0 ;;
    --dwarf-scale) DWARF_SCALE=$2; shift ;;
    --quick) SCALE=0.05 RUNS=1 SCALING=1 QUICK=1 DWARF_SCALE=0.005 ;;
    --reuse) REUSE=1 ;;
    --no-build) BUILD_IT=0 ;;
    --py-limit) PY_LIMIT=$2; shift ;;
    --tool-limit) TOOL_LIMIT=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

if [[ -z $TOOL_LIMIT ]]; then
  if ((QUICK)); then TOOL_LIMIT=20; else TOOL_LIMIT=900; fi
fi

log() { echo "run.sh: $*" >&2; }
die() { log "$*"; exit 1; }
[[ $EUID -eq 0 ]] || die "run as root: perf trace record needs the syscall tracepoints"

# ---- 1. what the bench needs ------------------------------------------------
need=()
[[ -x /usr/bin/time ]] || need+=(time)
command -v python3 >/dev/null || need+=(python3)
command -v perf >/dev/null || need+=(linux-perf)
command -v gcc >/dev/null || need+=(gcc libc6-dev)
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
[[ -f /usr/include/perf/perf_dlfilter.h ]] || need+=(linux-perf)
if ((${#need[@]})); then
  log "installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

mkdir -p "$OUT/maps"
STAMP=$(date +%Y%m%d-%H%M%S)
REPORT=$OUT/report-$STAMP.md
RECORDED=$OUT/.recorded-$STAMP  # traces recorded by this run (reused within it)
trap 'rm -f "$RECORDED"' EXIT
PB=$BUILD/bin/pageblame
READER=$BUILD/bin/perf_reader_bench
PLUGIN=$BUILD/lib/pageblame-dlfilter.so
CHURN=$OUT/churn
NULL_FILTER=$OUT/null-dlfilter.so

# ---- 2. build ---------------------------------------------------------------
build() {
  gcc -O1 -g -fno-omit-frame-pointer -Wall -Wextra -Werror -pthread \
    "$HERE/churn.c" -o "$CHURN"
  gcc -O2 -shared -fPIC -Wall -Wextra -Werror "$HERE/null_dlfilter.c" -o "$NULL_FILTER"
  ((BUILD_IT)) || return 0
  log "building pageblame ($BUILD_TYPE) in $BUILD"
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" >/dev/null
  cmake --build "$BUILD" --target pageblame perf_reader_bench -j"$(nproc)" >/dev/null
  # The dlfilter plugin, if the tree has it yet (plugin/CMakeLists.txt).
  local target
  target=$(cmake --build "$BUILD" --target help 2>/dev/null |
           grep -o '^[A-Za-z0-9_.-]*dlfilter[A-Za-z0-9_.-]*' | head -1 || true)
  if [[ -n $target ]]; then
    cmake --build "$BUILD" --target "$target" -j"$(nproc)" >/dev/null ||
      { log "building $target failed: the plugin row will be n/a"; PLUGIN_FAILED=1; }
  fi
}
PLUGIN_FAILED=0
build
[[ -x $PB && -x $READER ]] || die "no $PB / $READER: build them or drop --no-build"
HAVE_ATTRIBUTE=0
if "$PB" attribute --help >/dev/null 2>&1; then HAVE_ATTRIBUTE=1; fi
HAVE_PLUGIN=0
[[ -f $PLUGIN ]] && ((!PLUGIN_FAILED)) && HAVE_PLUGIN=1
log "pageblame attribute: $( ((HAVE_ATTRIBUTE)) && echo built || echo 'not built')," \
    "dlfilter plugin: $( ((HAVE_PLUGIN)) && echo "$PLUGIN" || echo 'not built')"

# ---- 3. record ----------------------------------------------------------------
TRACES_TSV=$OUT/traces.tsv
[[ -f $TRACES_TSV ]] || printf 'trace\tscale\tbytes\tsamples\tlost_records\tlost_samples\n' > "$TRACES_TSV"

iters_for() { python3 -c "print(max(1, round($1 * $BASE_ITERS)))"; }

# trace_info TRACE SCALE: appends TRACE's row to traces.tsv (sample and lost
# counts from perf_reader_bench: record types 9 SAMPLE, 2 LOST, 13 LOST_SAMPLES).
trace_info() {
  local counts
  counts=$("$READER" "$1")
  local samples lost lost_s
  samples=$(awk '$1=="type" && $2=="9:" {print $3}' <<<"$counts")
  lost=$(awk '$1=="type" && $2=="2:" {print $3}' <<<"$counts")
  lost_s=$(awk '$1=="type" && $2=="13:" {print $3}' <<<"$counts")
  grep -v -P "^\Q$1\E\t" "$TRACES_TSV" > "$TRACES_TSV.tmp" || true
  mv "$TRACES_TSV.tmp" "$TRACES_TSV"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$(stat -c %s "$1")" "${samples:-0}" \
    "${lost:-0}" "${lost_s:-0}" >> "$TRACES_TSV"
  if [[ ${lost:-0} != 0 || ${lost_s:-0} != 0 ]]; then
    log "WARNING: $1 has ${lost:-0} PERF_RECORD_LOST and ${lost_s:-0} LOST_SAMPLES records" \
        "(events were dropped; raise PERF_MMAP or use fewer --threads)"
  fi
}

# The events of a DWARF recording, as `pageblame record` gives them to perf:
# a 16 KiB stack copy on each enter event, no call graph on exits (their
# stacks are the enter's), every memory syscall family of TRACE_EVENTS.
DWARF_EVENTS=()
for f in mmap munmap brk mremap mprotect pkey_mprotect madvise; do
  DWARF_EVENTS+=(-e "syscalls:sys_enter_$f/call-graph=dwarf,stack-size=16384/"
                 -e "syscalls:sys_exit_$f/call-graph=no/")
done

# perf_command KIND TRACE: the perf command line (without the workload) that
# records KIND: fp (the seed's perf trace record), dwarf, dwarf-z (dwarf,
# zstd-compressed: perf record -z).
perf_command() {
  local kind=$1 trace=$2 mopt=()
  [[ $PERF_MMAP != default ]] && mopt=(-m "$PERF_MMAP")
  case $kind in
    fp) PERF_CMD=(perf trace record "${mopt[@]}" --call-graph fp -e "$TRACE_EVENTS" -o "$trace") ;;
    # pageblame record's events with the bench's buffers: at perf's default a
    # dwarf recording of churn lost 87 % of its samples here, and even
    # pageblame record's -m 128M lost a few at churn's rate (~100k calls/s),
    # which makes the end state differ from churn's maps file.
    dwarf) PERF_CMD=(perf record "${DWARF_EVENTS[@]}" "${mopt[@]}" -o "$trace") ;;
    dwarf-z) PERF_CMD=(perf record "${DWARF_EVENTS[@]}" "${mopt[@]}" -z -o "$trace") ;;
    *) die "perf_command: unknown kind $kind" ;;
  esac
}

trace_name() {  # trace_name SCALE KIND
  case $2 in
    fp) echo "churn-t$THREADS-s$1" ;;
    *) echo "churn-$2-t$THREADS-s$1" ;;
  esac
}

# record SCALE [KIND]: records churn at SCALE (KIND: see perf_command,
# default fp) and prints the trace's path. Its maps file is
# $OUT/maps/<name>.<pid>.maps.
record() {
  local scale=$1 kind=${2:-fp} name
  name=$(trace_name "$1" "$kind")
  local trace=$OUT/$name.data
  if [[ -f $trace ]] && ls "$OUT/maps/$name".*.maps >/dev/null 2>&1 &&
     grep -q -P "^\Q$trace\E\t" "$TRACES_TSV" &&
     { ((REUSE)) || grep -q -x -F "$trace" "$RECORDED" 2>/dev/null; }; then
    log "reusing $trace"
    echo "$trace"
    return
  fi
  rm -f "$trace" "$OUT/maps/$name".*
  local iters
  iters=$(iters_for "$scale")
  # The seed's command, with bigger buffers (-m) unless PERF_MMAP=default:
  # churn makes syscalls far faster than a service, and perf trace's own
  # 4 MiB per CPU lose events at this rate. Every trace of a run is recorded
  # the same way (the buffer size sets how often perf writes FINISHED_ROUND,
  # and so how much a reader must hold to sort: it must not differ between
  # the sizes of the scaling run).
  perf_command "$kind" "$trace"
  log "recording $name: $THREADS threads x $iters iterations: ${PERF_CMD[*]}"
  local t0=$SECONDS
  "${PERF_CMD[@]}" "$CHURN" "$OUT/maps" "$name" "$THREADS" "$iters" 2> "$OUT/$name.record.log" ||
    { cat "$OUT/$name.record.log" >&2; die "recording $name failed"; }
  grep -i 'lost\|perf record' "$OUT/$name.record.log" >&2 || true
  log "recorded $trace in $((SECONDS - t0)) s"
  trace_info "$trace" "$scale"
  echo "${PERF_CMD[*]}" > "$OUT/$name.record-options"
  echo "$trace" >> "$RECORDED"
  echo "$trace"
}

recorded_with() {  # the perf command that recorded TRACE (paths shortened)
  sed "s|$OUT/||g" "$OUT/$(basename "$1" .data).record-options" 2>/dev/null || echo "perf ?"
}

maps_file_of() {  # the churn maps file of a trace
  local name
  name=$(basename "$1" .data)
  ls "$OUT/maps/$name".*.maps | head -1
}

# ---- 4. the timed runs -----------------------------------------------------------
measure() { python3 "$HERE/measure.py" --mem-limit-mib "$MEM_LIMIT_MIB" "$@"; }

# plan_add PLAN LABEL TRACE NOTE STDOUT TIMEOUT COMMAND... (COMMAND "-": not
# built): one line of a measure.py plan; measure.py runs a plan round-robin.
plan_add() {
  local plan=$1 label=$2 trace=$3 note=$4 stdout=$5 timeout=$6
  shift 6
  local cmd=-
  [[ $1 != - ]] && cmd=$(printf '%q ' "$@")
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$trace" "$note" "$stdout" "$timeout" "$cmd" >> "$plan"
}

machine() {
  local dirty=""
  if [[ -n $(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null) ]]; then
    dirty=" plus uncommitted changes"
  fi
  echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')," \
       "$(free -g | awk '/^Mem:/ {print $2}') GiB RAM, kernel $(uname -r), $(perf version)," \
       "pageblame $BUILD_TYPE ($BUILD), tree at $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$dirty;" \
       "load average (1/5/15 min) before the timed runs: ${LOAD_BEFORE:-?}, after: $(cut -d' ' -f1-3 /proc/loadavg);" \
       "file pages in large folios (FileHugePages, all files) before: ${FOLIOS_BEFORE:-?} MB, after: $(file_huge_mb) MB"
}

# The page cache's large folios in MB (/proc/meminfo FileHugePages): perf
# script maps the trace, and its floor drops by a third when the trace sits
# in large folios (docs/performance.md, "Machine"), so a report says which
# state its runs saw.
file_huge_mb() {
  awk '/^FileHugePages:/ {printf "%d", $2 / 1024; f = 1} END {if (!f) printf "?"}' /proc/meminfo
}

run_table() {
  local trace maps_file pid
  trace=$(record "$SCALE")
  maps_file=$(maps_file_of "$trace")
  local results=$OUT/results-$STAMP.tsv
  rm -f "$results"
  cat "$trace" > /dev/null  # page cache warm for everybody

  # Correctness first: a fast wrong answer is no answer.
  "$PB" maps -i "$trace" --json > "$OUT/maps.json"
  python3 "$HERE/check_maps.py" "$OUT/maps.json" "$maps_file" | tee "$OUT/check-$STAMP.txt" >&2 ||
    log "WARNING: pageblame maps does not reproduce churn's end state (see above)"

  # The page set: a few pages of live regions in churn's arenas and the heap.
  local pages addr
  pages=$( { awk '/^2000/ {split($1, r, "-"); print "0x" r[1]}' "$maps_file" |
              awk 'NR == 1 || NR % 97 == 0' | head -5
            awk '/\[heap\]/ {split($1, r, "-"); print "0x" r[1]}' "$maps_file"; } | paste -sd,)
  addr=$(cut -d, -f2 <<<"$pages,")
  [[ -n $addr ]] || addr=$(cut -d, -f1 <<<"$pages")
  log "page set: $pages; query address: $addr"

  LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
  FOLIOS_BEFORE=$(file_huge_mb)
  local plan=$OUT/plan-$STAMP.tsv
  rm -f "$plan"
  local T=$TOOL_LIMIT
  plan_add "$plan" "cat trace > /dev/null" "$trace" "" "" "$T" cat "$trace"
  plan_add "$plan" "pageblame maps --json" "$trace" "" "" "$T" "$PB" maps -i "$trace" --json
  plan_add "$plan" "perf_reader_bench (pageblame's reader alone)" "$trace" \
    "reads and parses every record, no decode/replay" "" "$T" "$READER" "$trace"
  if ((HAVE_ATTRIBUTE)); then
    plan_add "$plan" "pageblame attribute" "$trace" \
      "regions: churn's maps file ($(wc -l < "$maps_file") lines)" "$OUT/attribute.txt" "$T" \
      "$PB" attribute -i "$trace" --regions "$maps_file"
  else
    plan_add "$plan" "pageblame attribute" "$trace" "" "" "$T" -
  fi
  plan_add "$plan" "pageblame query" "$trace" "one address: $addr" "$OUT/query.txt" "$T" \
    "$PB" query -i "$trace" "$addr"
  if ((HAVE_PLUGIN)); then
    plan_add "$plan" "perf script --dlfilter pageblame" "$trace" "pages=$pages" \
      "$OUT/plugin.txt" "$T" perf script -i "$trace" --dlfilter "$PLUGIN" --dlarg "pages=$pages"
  else
    plan_add "$plan" "perf script --dlfilter pageblame" "$trace" "" "" "$T" -
  fi
  plan_add "$plan" "perf script --dlfilter null (keeps nothing)" "$trace" \
    "bench/null_dlfilter.c: filter_event_early drops all" "" "$T" \
    perf script -i "$trace" --dlfilter "$NULL_FILTER"
  plan_add "$plan" "perf script (every event)" "$trace" "" "" "$T" perf script -i "$trace"
  plan_add "$plan" "python perf script (find_pages.py)" "$trace" "pages=$pages" \
    "$OUT/find_pages.txt" "$PY_LIMIT" \
    env FIND_PAGES="$pages" perf script -i "$trace" -s "$HERE/find_pages.py"
  measure --tsv "$results" --runs "$RUNS" --plan "$plan"
  if awk -F'\t' '$1 == "python perf script (find_pages.py)" && $10 == "timeout" {f = 1}
                 END {exit !f}' "$results"; then
    # Too slow on the main trace: measure it on a tenth and say so.
    local small_scale small
    small_scale=$(python3 -c "print(f'{$SCALE / 10:g}')")
    small=$(record "$small_scale")
    log "Python perf script: over ${PY_LIMIT} s on $trace; measuring it on $small instead"
    measure --tsv "$results" --trace "$small" --runs "$RUNS" \
      --label "python perf script (find_pages.py)" --note "extrapolate" \
      --stdout "$OUT/find_pages.txt" \
      -- env FIND_PAGES="$pages" perf script -i "$small" -s "$HERE/find_pages.py" || true
  fi
  {
    echo "## Tools on one trace ($(date -u '+%Y-%m-%d %H:%M UTC'))"
    echo
    echo "Command: \`bench/run.sh --scale $SCALE --runs $RUNS --threads $THREADS\`"
    echo "(median of $RUNS runs, taken round-robin over the tools; page cache warm). Recorded with"
    echo "\`$(recorded_with "$trace") churn OUTDIR NAME $THREADS $(iters_for "$SCALE")\`."
    echo
    machine
    echo
    cat "$OUT/check-$STAMP.txt"
    echo
    python3 "$HERE/report.py" table --traces "$TRACES_TSV" --results "$results" --trace "$trace" \
      --index "$(index_sizes "$trace")"
    echo
  } >> "$REPORT"
}

# index_sizes TRACE...: writes a TSV of trace -> the size of pageblame's index
# for it (`pageblame maps -v` says "index N MiB"; an untimed run) and prints
# its path, for report.py's "64 MiB + index" check.
index_sizes() {
  local tsv=$OUT/index-$STAMP-$RANDOM.tsv t mib
  printf 'trace\tindex_mib\n' > "$tsv"
  for t in "$@"; do
    mib=$("$PB" maps -v -i "$t" 2>&1 >/dev/null | sed -n 's/.*; index \([0-9.]*\) MiB.*/\1/p')
    [ -n "$mib" ] && printf '%s\t%s\n' "$t" "$mib" >> "$tsv"
  done
  echo "$tsv"
}

run_scaling() {
  local results=$OUT/scaling-$STAMP.tsv plan=$OUT/plan-scaling-$STAMP.tsv
  rm -f "$results" "$plan"
  local s trace traces=()
  for s in $(python3 -c "print($SCALE * 0.2, $SCALE, $SCALE * 5)"); do
    s=$(python3 -c "print(f'{$s:g}')")
    trace=$(record "$s")
    traces+=("$trace")
  done
  for trace in "${traces[@]}"; do
    cat "$trace" > /dev/null
    plan_add "$plan" "pageblame maps --json" "$trace" "" "" "$TOOL_LIMIT" \
      "$PB" maps -i "$trace" --json
  done
  measure --tsv "$results" --runs "$RUNS" --plan "$plan"
  {
    echo "## Scaling: pageblame maps at 0.2x, 1x, 5x ($(date -u '+%Y-%m-%d %H:%M UTC'))"
    echo
    echo "Command: \`bench/run.sh --scale $SCALE --runs $RUNS --threads $THREADS --scaling\`"
    echo
    python3 "$HERE/report.py" scaling --traces "$TRACES_TSV" --results "$results" \
      --index "$(index_sizes "${traces[@]}")"
    echo
  } >> "$REPORT"
}

run_profile() {
  local trace
  trace=$(record "$SCALE")
  log "profiling pageblame maps on $trace"
  perf record -g -o "$OUT/profile.data" -- "$PB" maps -i "$trace" --json > /dev/null 2> "$OUT/profile.log"
  # `|| true`: head closes the pipe early, and pipefail would count that.
  {
    echo "## Profile: perf record -g pageblame maps --json on \`$trace\`"
    echo
    echo "Self time (perf report --no-children), functions over 0.7 %:"
    echo
    echo '```'
    perf report -i "$OUT/profile.data" --no-children --stdio -g none --percent-limit 0.7 \
      2>/dev/null | grep -v -e '^#' -e '^$' | cut -c1-160 | head -40 || true
    echo '```'
    echo
    echo "Inclusive time (perf report --children), over 2 %:"
    echo
    echo '```'
    perf report -i "$OUT/profile.data" --children --stdio -g none --percent-limit 2 \
      2>/dev/null | grep -v -e '^#' -e '^$' | cut -c1-170 | head -45 || true
    echo '```'
    echo
  } >> "$REPORT"
}

# unwind_figures TRACE...: one untimed `pageblame maps -v` per trace; writes
# a TSV of trace -> its "unwinding:" line (samples, time, frames, stops, the
# CFI cache's hits and size) and prints its path, for report.py dwarf.
unwind_figures() {
  local tsv=$OUT/unwind-$STAMP-$RANDOM.tsv t line
  printf 'trace\tunwinding\n' > "$tsv"
  for t in "$@"; do
    line=$("$PB" maps -v -i "$t" 2>&1 >/dev/null | sed -n 's/^ *unwinding: //p' | head -1)
    printf '%s\t%s\n' "$t" "${line:-none}" >> "$tsv"
  done
  echo "$tsv"
}

run_dwarf() {
  local fp dw dz t
  fp=$(record "$DWARF_SCALE" fp)
  dw=$(record "$DWARF_SCALE" dwarf)
  dz=$(record "$DWARF_SCALE" dwarf-z)
  local check=$OUT/check-dwarf-$STAMP.txt
  : > "$check"
  for t in "$dw" "$dz"; do
    "$PB" maps -i "$t" --json > "$OUT/maps.json"
    { echo "\`$(basename "$t")\`:"; python3 "$HERE/check_maps.py" "$OUT/maps.json" "$(maps_file_of "$t")"; } |
      tee -a "$check" >&2 || log "WARNING: pageblame maps does not reproduce churn's end state on $t"
  done
  LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
  FOLIOS_BEFORE=$(file_huge_mb)
  local results=$OUT/dwarf-$STAMP.tsv plan=$OUT/plan-dwarf-$STAMP.tsv T=$TOOL_LIMIT
  rm -f "$results" "$plan"
  plan_add "$plan" "cat trace > /dev/null" "$dw" "" "" "$T" cat "$dw"
  plan_add "$plan" "pageblame maps --json" "$dw" "" "" "$T" "$PB" maps -i "$dw" --json
  plan_add "$plan" "pageblame maps --json --no-inline" "$dw" "no DWARF debug info read" "" "$T" \
    "$PB" maps -i "$dw" --json --no-inline
  plan_add "$plan" "pageblame maps --json" "$dz" "" "" "$T" "$PB" maps -i "$dz" --json
  plan_add "$plan" "pageblame maps --json" "$fp" "" "" "$T" "$PB" maps -i "$fp" --json
  plan_add "$plan" "perf script (every event)" "$dw" "unwinds every sample" "" "$T" \
    perf script -i "$dw"
  plan_add "$plan" "perf script (every event)" "$dz" "unwinds every sample" "" "$T" \
    perf script -i "$dz"
  measure --tsv "$results" --runs "$RUNS" --plan "$plan"
  {
    echo "## DWARF stacks: churn recorded as \`pageblame record\` does ($(date -u '+%Y-%m-%d %H:%M UTC'))"
    echo
    echo "Command: \`bench/run.sh --dwarf-only --dwarf-scale $DWARF_SCALE --runs $RUNS --threads $THREADS\`"
    echo "(median of $RUNS runs, round-robin; page cache warm). The three traces are three runs of"
    echo "\`churn OUTDIR NAME $THREADS $(iters_for "$DWARF_SCALE")\`, recorded with:"
    echo
    for t in "$dw" "$dz" "$fp"; do echo "- \`$(basename "$t")\`: \`$(recorded_with "$t")\`"; done
    echo
    machine
    echo
    cat "$check"
    echo
    python3 "$HERE/report.py" dwarf --traces "$TRACES_TSV" --results "$results" \
      --dwarf "$dw" --zstd "$dz" --fp "$fp" --unwind "$(unwind_figures "$dw" "$dz")" \
      --index "$(index_sizes "$dw" "$dz" "$fp")"
    echo
  } >> "$REPORT"
}

((TABLE)) && run_table
((DWARF)) && run_dwarf
((SCALING)) && run_scaling
((PROFILE)) && run_profile
echo
cat "$REPORT"
log "report: $REPORT"
