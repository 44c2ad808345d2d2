#!/usr/bin/env bash
# dotnet_hunt.sh — the .NET hunt live: builds traces/src/dotnet-leak, records
# it under perf with DWARF stacks, takes its core dump (dotnet-dump collect)
# and the runtime's own table from the dump when the app says READY
# (traces/record-dotnet.sh --hunt: pageblame dotnet-regions), then runs the same checks as on the
# bundled recording (tests/dotnet_test.cc: diff of the dump against the
# runtime table, attribute naming each C# method and its bytes) on the fresh
# one.
#
#   tests/dotnet_hunt.sh BUILD_DIR
#
# Exit status: 0 passed; 77 skipped (not root, no perf or tracepoints, no
# dotnet, dotnet-dump not installable: the message says which); else failed.
# Bounded: every step has a timeout; 2-4 minutes on 2 CPUs.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:?usage: tests/dotnet_hunt.sh BUILD_DIR}
. "$(dirname "$0")/live_lib.sh"

[[ $EUID -eq 0 ]] || skip "run as root (perf needs the syscall tracepoints)"
command -v dotnet >/dev/null || skip "dotnet is not installed"
export PATH="$PATH:$HOME/.dotnet/tools"
if ! command -v dotnet-dump >/dev/null; then
  log "installing dotnet-dump (dotnet tool install -g dotnet-dump)"
  timeout 300 dotnet tool install -g dotnet-dump >/dev/null 2>&1 ||
    skip "dotnet-dump is not installed and 'dotnet tool install -g dotnet-dump' failed"
fi

WORK=$(mktemp -d /tmp/dotnet-hunt.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
PAGEBLAME="$BUILD/bin/pageblame" timeout 900 "$ROOT/traces/record-dotnet.sh" --hunt "$WORK/out"
rc=$?
((rc == 77)) && exit 77
((rc == 0)) || { log "recording failed (exit $rc)"; exit 1; }
ls "$WORK/out"/dotnet-leak.*.dotnet-regions.txt >/dev/null 2>&1 ||
  { log "no runtime table (pageblame dotnet-regions failed: is its helper built? scripts/setup)"; exit 1; }
log "recorded: $(ls "$WORK/out" | tr '\n' ' ')"
PAGEBLAME_DOTNET_DIR="$WORK/out" "$BUILD/tests/dotnet_test" --gtest_brief=1
