#!/usr/bin/env bash
# service_fold.sh — what `pageblame record -p --max-size` (issue 42) takes over
# a long recording of the ASP.NET Core service traces/src/dotnet-service
# under a steady loopback load (traces/src/http_load.c, as
# bench/service_overhead.sh runs it): RATE requests/s of GET /work?n=K (2K
# memory calls each) for SECONDS, the recorder attached with --max-size SIZE
# -o OUT/svc.data. Prints: what perf wrote (the summary's "perf wrote X in N
# chunks"), per minute and extrapolated per hour; the recording's disk at its
# most (watched every 100 ms: the trace, its chunks, the index, the
# snapshots, the runtime's tables) against SIZE; the index at the end and per
# million calls; TRACE.rss and TRACE.heap and what thinning by age kept; the
# recorder's resident memory (VmRSS of the pageblame process, every second:
# at 10 s, half way, at the end of the load, at its most with the stop's
# encoding) and its growth over the second half; the summary's lines about
# the folded index in memory (what --max-memory bounds); the folding's share
# of a core (the pb-fold threads' CPU, as fold.sh takes it, and the older
# figure: its wall time per chunk from the summary, inflated on a loaded
# machine) and the recorder's and perf's CPU over the load (noisy on a
# shared machine). Then `maps -i --pid` and
# `growth -i` on the recording: exit status, seconds, peak memory.
# Run by hand as root; not part of scripts/test.
#
# Written when two recorder bugs shaped it (both fixed since, 442463c): the
# stop is a SIGINT sent to the threads that wait on the recorder's signalfd
# (tgkill; a plain kill -INT works as well now), and MAP=0 runs the service
# with DOTNET_EnableDiagnostics=0 (no perf map: the JIT frames are not named),
# which a folded recording no longer needs (its jitdump growing after the
# folding read it is now a warning, not "stale"). The service is warmed on
# the load's own path for 10 s before the attach; the commands run before it
# is stopped.
#
#   bench/service_fold.sh [SECONDS] [K] [SIZE] [MAX_MEMORY]
#   (default 300 s, K=5: ~1k calls/s at RATE=100; K=50: ~10k; 64M; SIZE)
#
# OUT (default bench/out/service_fold) keeps record.log, the recording and
# rss.tsv (seconds since the attach, VmRSS and RssAnon in KiB, a line a second).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_=${1:-300}
K=${2:-5}
SIZE=${3:-64M}
MEMORY=${4:-$SIZE}
RATE=${RATE:-100}
BUILD=${BUILD:-$ROOT/build}
PB=${PB:-$BUILD/bin/pageblame}  # PB=path: another pageblame binary
LOAD=$BUILD/tests/http_load
OUT=${OUT:-$ROOT/bench/out/service_fold}
APP=$ROOT/traces/src/dotnet-service
[[ $EUID -eq 0 ]] || { echo "run as root" >&2; exit 77; }
cmake --build "$BUILD" -j2 --target pageblame http_load >/dev/null || exit 1
(cd "$APP" && dotnet build -c Release --nologo -v q -nodeReuse:false -p:UseSharedCompilation=false >/dev/null) || exit 1
mkdir -p "$OUT"
rm -rf "$OUT"/svc.data* "$OUT/stop" "$OUT"/*.out "$OUT/rss.tsv" "$OUT/chunks.seen"
head -c $((12 << 20)) /dev/urandom >"$OUT/data.bin"
SVC= SVC_PID= REC= WATCHER= SAMPLER= LOADER=
# The recorder, once asked to stop: waited for up to 2 minutes, then ended.
wait_recorder() {
  for _ in $(seq 1 1200); do kill -0 "$REC" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$REC" 2>/dev/null && { echo "the recorder did not stop: SIGTERM" >&2; kill -TERM "$REC"; }
  wait "$REC"
}
stop_all() {
  [[ -n $LOADER ]] && { kill "$LOADER" 2>/dev/null; wait "$LOADER" 2>/dev/null; }
  [[ -n $SVC ]] && { kill "$SVC" 2>/dev/null; wait "$SVC" 2>/dev/null; }
  [[ -n $REC ]] && wait_recorder
  [[ -n $SVC_PID ]] && rm -f "/tmp/perf-$SVC_PID.map" "/tmp/jit-$SVC_PID.dump"
  touch "$OUT/stop"
  [[ -n $WATCHER ]] && wait "$WATCHER" 2>/dev/null
  [[ -n $SAMPLER ]] && wait "$SAMPLER" 2>/dev/null
  LOADER= REC= SVC= WATCHER= SAMPLER=
}
trap stop_all EXIT
HZ=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
mib() { echo "$1 / 1048576" | bc -l; }
# "11.0 MiB" (HumanBytes) in bytes.
bytes_of() {
  awk -v n="$1" -v u="$2" 'BEGIN { m = 1; if (u == "KiB") m = 1024; if (u == "MiB") m = 1048576;
    if (u == "GiB") m = 1073741824; printf "%.0f\n", n * m }'
}

# The service, as service_overhead.sh starts it (root cgroup), warmed.
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
NOMAP=()
[[ ${MAP:-1} == 0 ]] && NOMAP=(DOTNET_EnableDiagnostics=0)
env $(env | sed -n 's/^\(DOTNET_[^=]*\|COMPlus_[^=]*\)=.*/-u \1/p') "${NOMAP[@]}" \
  dotnet "$APP/bin/Release/net10.0/dotnet-service.dll" "$PORT" "$OUT/data.bin" 4 >"$OUT/app.out" 2>&1 &
SVC=$! SVC_PID=$!
for _ in $(seq 1 300); do grep -qs "READY $SVC" "$OUT/app.out" && break; sleep 0.1; done
grep -q "READY $SVC" "$OUT/app.out" || { cat "$OUT/app.out" >&2; echo "the service did not start" >&2; exit 1; }
"$LOAD" "$PORT" "/work?n=$K" "$RATE" 10 >/dev/null  # warm: the load's path compiled

# The recording's bytes on disk (allocated blocks, the runtime's tables
# included), every 100 ms, the most kept.
echo 0 >"$OUT/peak"
(peak=0; while [[ ! -e $OUT/stop ]]; do
   b=$(find "$OUT" -path "$OUT/svc.data*" -type f -printf '%b\n' 2>/dev/null | awk '{s+=$1*512} END {print s+0}')
   if ((b > peak)); then peak=$b; echo "$peak" >"$OUT/peak"; fi
   find "$OUT" -maxdepth 1 -name 'svc.data.[0-9]*' -type f -printf '%f %s\n' 2>/dev/null >>"$OUT/chunks.seen"
   sleep 0.1
 done) &
WATCHER=$!

"$PB" record -p "$SVC" --max-size "$SIZE" --max-memory "$MEMORY" -o "$OUT/svc.data" 2>"$OUT/record.log" &
REC=$!
for _ in $(seq 1 600); do [[ -e $OUT/svc.data.attach-maps ]] && break; sleep 0.1; done
[[ -e $OUT/svc.data.attach-maps ]] || { cat "$OUT/record.log" >&2; echo "the recorder did not attach" >&2; exit 1; }
# The recorder's resident memory every second, from the attach to its exit
# (and the service's jitdump's size beside it).
# Meanwhile the folding's own CPU, as bench/fold.sh takes it: utime+stime
# of the recorder's threads named pb-fold, each at its last look.
echo 0 >"$OUT/fold_ticks"
(start=$(date +%s.%N); declare -A fold
 while kill -0 "$REC" 2>/dev/null; do
   while read -r tid tk; do fold[$tid]=$tk; done < <(awk '$2 == "(pb-fold)" {n = split(FILENAME, p, "/"); print p[n-1], $14 + $15}' \
     /proc/"$REC"/task/*/stat 2>/dev/null || true)
   sum=0; for tk in "${fold[@]}"; do sum=$((sum + tk)); done; echo "$sum" >"$OUT/fold_ticks"
   t=$(echo "$(date +%s.%N) - $start" | bc)
   jit=$(stat -c %s "/tmp/jit-$SVC_PID.dump" 2>/dev/null || echo 0)
   awk -v t="$t" -v jit="$jit" '/^VmRSS/ {r = $2} /^RssAnon/ {a = $2}
     END {if (r) printf "%.1f %d %d %d\n", t, r, a, jit}' "/proc/$REC/status" 2>/dev/null >>"$OUT/rss.tsv"
   sleep 1
 done) &
SAMPLER=$!
sleep 2
perf_pid=$(pgrep -x perf -P "$REC" | head -1)
rec_t0=$(ticks "$REC"); perf_t0=$(ticks "${perf_pid:-0}")
"$LOAD" "$PORT" "/work?n=$K" "$RATE" "$SECONDS_" >"$OUT/load.out" &
LOADER=$!
wait "$LOADER"; LOADER=
rec_t1=$(ticks "$REC"); perf_t1=$(ticks "${perf_pid:-0}")
load_end=$(tail -1 "$OUT/rss.tsv" | cut -d' ' -f1)
# The stop: SIGINT to the threads that poll the signalfd (see above).
for t in /proc/"$REC"/task/*; do
  [[ $(cat "$t/wchan" 2>/dev/null) == poll_schedule_timeout* ]] || continue
  python3 -c 'import ctypes, sys; ctypes.CDLL(None).syscall(234, int(sys.argv[1]), int(sys.argv[2]), 2)' "$REC" "${t##*/}"
done
wait_recorder; rc=$?; REC=
wait "$SAMPLER"; SAMPLER=
touch "$OUT/stop"; wait "$WATCHER"; WATCHER=
((rc == 0)) || { tail -3 "$OUT/record.log"; echo "record exited $rc: the summary's figures are missing" >&2; }

log=$OUT/record.log
summary=$(grep -- '^pageblame record: --max-size' "$log")
calls=$(grep -o '[0-9]* memory calls' "$log" | head -1 | cut -d' ' -f1)
read -r wrote_n wrote_u chunks <<<"$(echo "$summary" | sed -n 's/.*perf wrote \([0-9.]*\) \([KMG]*i*B\) in \([0-9]*\) chunks.*/\1 \2 \3/p')"
wrote=$(bytes_of "${wrote_n:-0}" "${wrote_u:-B}")
# perf's chunks as the watcher saw them (each at its largest): a cross-check,
# and the figure when the summary is missing.
read -r seen_n seen_b <<<"$(awk '{if ($2 > m[$1]) m[$1] = $2} END {for (c in m) {n++; s += m[c]} print n + 0, s + 0}' \
  "$OUT/chunks.seen" 2>/dev/null)"
printf 'perf chunks seen by the watcher: %s, %.1f MiB\n' "$seen_n" "$(mib "${seen_b:-0}")"
[[ -n $chunks ]] || { chunks=$seen_n; wrote=$seen_b; }
calls=${calls:-0}
((calls > 0)) || calls=1  # (unknown without the summary: per-call figures are then meaningless)
index_bytes=$(stat -c %s "$OUT/svc.data.index")
avg_ms=$(echo "$summary" | grep -o '[0-9.]* ms a chunk on average' | cut -d' ' -f1)
avg_ms=${avg_ms:-0}
echo "load: $(cat "$OUT/load.out") (GET /work?n=$K at $RATE/s for $SECONDS_ s)"
echo "$summary" | sed 's/^pageblame record: //'
printf 'perf wrote %.1f MiB in %s chunks over %s s: %.2f MiB a minute, %.0f MiB an hour (%s memory calls, %.0f/s)\n' \
  "$(mib "$wrote")" "$chunks" "$SECONDS_" "$(echo "$wrote / 1048576 * 60 / $SECONDS_" | bc -l)" \
  "$(echo "$wrote / 1048576 * 3600 / $SECONDS_" | bc -l)" "$calls" "$(echo "$calls / $SECONDS_" | bc -l)"
printf 'disk at most %.1f MiB (watched every 100 ms) for --max-size %s; index %.2f MiB at the end (%.2f MiB per million calls)\n' \
  "$(mib "$(cat "$OUT/peak")")" "$SIZE" "$(mib "$index_bytes")" "$(echo "$index_bytes / 1048576 * 1000000 / $calls" | bc -l)"
for f in rss heap; do
  [[ -e $OUT/svc.data.$f ]] || { echo "no svc.data.$f"; continue; }
  printf 'svc.data.%s: %.2f MiB\n' "$f" "$(mib "$(stat -c %s "$OUT/svc.data.$f")")"
done
grep -E 'snapshots.* in .*svc\.data\.(rss|heap)' "$log" | sed 's/^pageblame record: /  /'
grep -- 'the folded index took' "$log" | sed 's/^pageblame record: //'
grep -- 'checkpoints of' "$log" | sed 's/^pageblame record: //'
# RSS at 10 s, half way and at the load's end, the most (the stop included),
# and the growth over the load's second half (least squares, MiB a minute).
awk -v half="$(echo "$load_end / 2" | bc -l)" -v end="$load_end" '
  function at(t,   i) { for (i = 1; i <= n; ++i) if (T[i] >= t) return R[i]; return R[n] }
  { ++n; T[n] = $1; R[n] = $2; if ($2 > peak) peak = $2
    if ($1 >= half && $1 <= end) { m++; sx += $1; sy += $2; sxx += $1 * $1; sxy += $1 * $2 } }
  END { slope = (m * sxy - sx * sy) / (m * sxx - sx * sx)
        printf "recorder RSS: %.1f MiB at 10 s, %.1f MiB half way, %.1f MiB at the end of the load, %.1f MiB at most; ", \
          at(10) / 1024, at(half) / 1024, at(end) / 1024, peak / 1024
        printf "over the second half %+.2f MiB a minute\n", slope * 60 / 1024 }' "$OUT/rss.tsv"
load_s=$(echo "$load_end - 2" | bc -l)
fold_s=$(echo "$(cat "$OUT/fold_ticks") / $HZ" | bc -l)
printf 'the folding threads used %.2f s of CPU over %s s: %.2f %% of a core, %.2f ms per 1 k calls\n' \
  "$fold_s" "$SECONDS_" "$(echo "$fold_s * 100 / $SECONDS_" | bc -l)" "$(echo "$fold_s * 1000000 / $calls" | bc -l)"
printf 'folding %.2f s over %s s (the chunks'"'"' wall time): %.2f %% of a core; over the load the recorder %.1f %%, perf %.1f %% of a core (2 shared cores: noisy)\n' \
  "$(echo "$avg_ms * $chunks / 1000" | bc -l)" "$SECONDS_" "$(echo "$avg_ms * $chunks / 10 / $SECONDS_" | bc -l)" \
  "$(echo "($rec_t1 - $rec_t0) * 100 / $HZ / $load_s" | bc -l)" "$(echo "($perf_t1 - $perf_t0) * 100 / $HZ / $load_s" | bc -l)"
# The recording answers: the first command loads the index only. The
# service still runs, idle.
for cmd in "maps -i $OUT/svc.data --pid $SVC_PID" "growth -i $OUT/svc.data"; do
  # shellcheck disable=SC2086
  /usr/bin/time -f '%e %M' -o "$OUT/time.out" "$PB" $cmd >"$OUT/cmd.out" 2>"$OUT/cmd.err"
  rc=$?
  read -r secs kib <<<"$(tail -1 "$OUT/time.out")"
  printf '%-40s exit %d, %.2f s, %.0f MiB at most, %d lines\n' "pageblame ${cmd//$OUT\//}" "$rc" "$secs" \
    "$(echo "$kib / 1024" | bc -l)" "$(wc -l <"$OUT/cmd.out")"
  ((rc == 0)) || tail -3 "$OUT/cmd.err"
done
