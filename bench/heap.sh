#!/usr/bin/env bash
# heap.sh — what the glibc heap walker costs (issue 39): builds heap_bench and
# prints its table: walk time of a helper process's heap (median of 7), per
# GiB of arena and per million chunks, the snapshot's size in TRACE.heap and
# the walking process's peak RSS, for three layouts (see
# processor/heap/heap_bench.cc). The goal: at most
# 50 ms per GiB on a typical heap. Run by hand as root; not part of
# scripts/test.
#
#   bench/heap.sh [MIB] [LAYOUT]      (default 1024 MiB, every layout)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cmake --build "$ROOT/build" --target heap_bench >/dev/null
"$ROOT/build/bin/heap_bench" "$@"
