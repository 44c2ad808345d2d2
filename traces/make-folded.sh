#!/bin/bash
# make-folded.sh — traces/folded/: a folded recording (record --max-size) as
# a build of pageblame made it, for the test that later builds still read it
# (tests/recording_index_test.cc, RecordingIndexTest.ABundledFoldedRecording*).
# Run as root (perf needs the tracepoints) after building pageblame:
#
#   sudo traces/make-folded.sh [path/to/pageblame]   (default build/bin/pageblame)
#
# Builds src/rotate.c as bin/rotate, runs it (tests find it in any checkout
# with --symfs, tests/trace_fixtures.h LocalPath) for 15 s under `pageblame record --max-size 1M --max-memory 1M`
# (perf writes ~20-25 MiB; the folded state is thinned in memory), and keeps
#   folded/rotate.data.index, .rss, .heap   what the recording left (no trace)
#   folded/rotate.PID.tsv                   the program's truth (truth.h)
#   folded/rotate.PID.maps                  its /proc/self/maps at the end
# Make it again only when the index format changes (a new
# RecordingFile::kFormatVersion): the test is that an index of a format
# this build reads, made by another build, still answers.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PB=${1:-$HERE/../build/bin/pageblame}
[[ $EUID -eq 0 ]] || { echo "make-folded.sh: run as root" >&2; exit 1; }
cc -O1 -g -Wall -Werror -o "$HERE/bin/rotate" "$HERE/src/rotate.c"
WORK=$(mktemp -d /tmp/pageblame-folded.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
"$PB" record --max-size 1M --max-memory 1M -o "$WORK/rotate.data" -- "$HERE/bin/rotate" "$WORK" 15 2>"$WORK/record.log" ||
  { tail -5 "$WORK/record.log"; exit 1; }
grep -q 'thinned in memory' "$WORK/record.log" || { echo "make-folded.sh: not thinned; record longer" >&2; exit 1; }
rm -rf "$HERE/folded"
mkdir "$HERE/folded"
cp "$WORK"/rotate.data.index "$WORK"/rotate.data.rss "$WORK"/rotate.data.heap "$WORK"/rotate.*.tsv \
  "$WORK"/rotate.*.maps "$HERE/folded/"
chmod 0600 "$HERE"/folded/rotate.data.*
"$PB" --version
ls -l "$HERE/folded"
