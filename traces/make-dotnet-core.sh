#!/bin/bash
# make-dotnet-core.sh — the .NET core test files in traces/cores/ (run as
# root, with the .NET SDK and dotnet-dump: `dotnet tool install -g dotnet-dump`):
#
#   sudo traces/make-dotnet-core.sh
#
# Builds src/dotnet-coremaps, runs it, and when it is ready takes a heap dump
# with `dotnet-dump collect --type Heap` (the runtime's createdump writes it),
# saving /proc/PID/maps right after. Keeps
#   cores/dotnet-dump-heap.core   the core trimmed by trim_core.py to its
#                                 headers and notes, plus the data of
#                                 createdump's diagnostics page
#   cores/dotnet-dump-heap.maps   /proc/PID/maps after the dump
# The tests compare the two (processor/regions/core_file_parser_test.cc).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
OUT="$HERE/cores"
WORK=$(mktemp -d /tmp/pageblame-dotnet-core.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 PATH="$PATH:$HOME/.dotnet/tools"
mkdir -p "$OUT"
cp "$HERE"/src/dotnet-coremaps/{Program.cs,dotnet-coremaps.csproj} "$WORK/"
dotnet build -c Release -o "$WORK/out" "$WORK/dotnet-coremaps.csproj" >/dev/null

"$WORK/out/dotnet-coremaps" "$WORK/ready" >"$WORK/app.log" 2>&1 &
app=$!
for _ in $(seq 100); do
  [[ -s "$WORK/ready" ]] && break
  sleep 0.2
done
pid=$(cat "$WORK/ready")
dotnet-dump collect -p "$pid" --type Heap -o "$WORK/core" >/dev/null 2>&1
cat "/proc/$pid/maps" > "$OUT/dotnet-dump-heap.maps"
kill -TERM "$app"
wait "$app" || true

# createdump's diagnostics page (specialdiaginfo.h) keeps its data.
python3 "$HERE/trim_core.py" "$WORK/core" "$OUT/dotnet-dump-heap.core" --keep-data 0x7ffffff10000
echo "make-dotnet-core.sh: pid $pid: $(stat -c %s "$WORK/core") byte core trimmed to" \
     "$(stat -c %s "$OUT/dotnet-dump-heap.core") bytes in $OUT" >&2
