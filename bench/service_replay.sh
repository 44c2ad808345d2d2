#!/usr/bin/env bash
# service_replay.sh — the folding's CPU per call on the ASP.NET service's
# DWARF stacks (issue 42), repeatably: records traces/src/dotnet-service once
# under the loopback load bench/service_fold.sh runs (RATE requests/s of GET
# /work?n=K: 2K memory calls each, so K=50 is ~10 k calls/s) for SECONDS with
# `pageblame record -p` (no --max-size: one trace, no snapshots), then replays
# it REPEAT times with `pageblame maps --no-index` (the folding's code: read,
# decompress, sort, unwind, intern, replay; and the symbolizing of maps'
# few stacks, ~8 %) and prints each replay's CPU (perf stat's task-clock,
# every thread) in ms per 1 k calls, then the least, median and most. The
# recording is kept in OUT (default bench/out/service_replay) and reused
# while it is there: RECORD=1 records again. PB=path: another pageblame binary for the replays. Run by
# hand as root; not part of scripts/test. CPU times hold on a shared machine
# better than wall times, but say the load (printed) with them.
#
#   bench/service_replay.sh [SECONDS] [K] [REPEAT]   (default 20 s, 50, 5)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_=${1:-20}
K=${2:-50}
REPEAT=${3:-5}
RATE=${RATE:-100}
BUILD=${BUILD:-$ROOT/build}
PB=${PB:-$BUILD/bin/pageblame}
OUT=${OUT:-$ROOT/bench/out/service_replay}
APP=$ROOT/traces/src/dotnet-service
TRACE=$OUT/svc.data
[[ $EUID -eq 0 ]] || { echo "run as root" >&2; exit 77; }
mkdir -p "$OUT"

record() {
  cmake --build "$BUILD" -j2 --target pageblame http_load >/dev/null || return 1
  (cd "$APP" && dotnet build -c Release --nologo -v q -nodeReuse:false -p:UseSharedCompilation=false >/dev/null) || return 1
  rm -rf "$TRACE"* "$OUT/calls"
  head -c $((12 << 20)) /dev/urandom >"$OUT/data.bin"
  local port svc rec
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  env $(env | sed -n 's/^\(DOTNET_[^=]*\|COMPlus_[^=]*\)=.*/-u \1/p') \
    dotnet "$APP/bin/Release/net10.0/dotnet-service.dll" "$port" "$OUT/data.bin" 4 >"$OUT/app.out" 2>&1 &
  svc=$!
  for _ in $(seq 1 300); do grep -qs "READY $svc" "$OUT/app.out" && break; sleep 0.1; done
  grep -q "READY $svc" "$OUT/app.out" || { cat "$OUT/app.out" >&2; kill "$svc"; return 1; }
  "$BUILD/tests/http_load" "$port" "/work?n=$K" "$RATE" 10 >/dev/null  # warm: the load's path compiled
  "$PB" record -p "$svc" --rss-every 0 -o "$TRACE" 2>"$OUT/record.log" &
  rec=$!
  for _ in $(seq 1 600); do [[ -e $TRACE.attach-maps ]] && break; sleep 0.1; done
  sleep 2
  "$BUILD/tests/http_load" "$port" "/work?n=$K" "$RATE" "$SECONDS_" >"$OUT/load.out"
  kill -INT "$rec"; wait "$rec"
  kill "$svc"; wait "$svc" 2>/dev/null
  rm -f "/tmp/perf-$svc.map" "/tmp/jit-$svc.dump"
  echo "load: $(cat "$OUT/load.out") (GET /work?n=$K at $RATE/s for $SECONDS_ s)"
}

if [[ ${RECORD:-0} == 1 || ! -e $TRACE ]]; then record || exit 1; fi
# The calls replayed: the summary's count (the same as the replay's).
calls=$(grep -o '[0-9]* memory calls' "$OUT/record.log" | head -1 | cut -d' ' -f1)
((${calls:-0} > 0)) || { echo "no call count in $OUT/record.log" >&2; exit 1; }
printf 'trace %s: %.1f MiB, %d memory calls\n' "$TRACE" "$(stat -c %s "$TRACE" | awk '{print $1 / 1048576}')" "$calls"
# Each replay's CPU: perf stat's task-clock (every thread's, to the
# microsecond; /usr/bin/time's user+sys counts in 10 ms ticks).
: >"$OUT/ms_per_k"
for i in $(seq 1 "$REPEAT"); do
  load=$(cut -d' ' -f1 /proc/loadavg)
  perf stat -x, -e task-clock -o "$OUT/stat.out" /usr/bin/time -f '%e %M' -o "$OUT/time.out" \
    "$PB" maps --no-index -i "$TRACE" >"$OUT/maps.out" 2>"$OUT/maps.err" || { tail -3 "$OUT/maps.err"; exit 1; }
  read -r e m <"$OUT/time.out"
  cpu_ms=$(awk -F, '/task-clock/ {print $1}' "$OUT/stat.out")
  awk -v cpu="$cpu_ms" -v e="$e" -v m="$m" -v c="$calls" -v l="$load" -v i="$i" 'BEGIN {
    printf "replay %d: %.0f ms of CPU (wall %.2f s, %d MiB at most, load %s): %.2f ms per 1 k calls\n",
      i, cpu, e, m / 1024, l, cpu * 1000 / c }'
  awk -v cpu="$cpu_ms" -v c="$calls" 'BEGIN { printf "%.3f\n", cpu * 1000 / c }' >>"$OUT/ms_per_k"
done
sort -n "$OUT/ms_per_k" | awk '{v[NR] = $1} END {
  printf "ms of CPU per 1 k calls: least %.2f, median %.2f, most %.2f (%d replays)\n", v[1], v[int((NR + 1) / 2)], v[NR], NR }'
md5sum <"$OUT/maps.out" | sed 's/ .*/ the last replay'"'"'s maps output (md5)/'
