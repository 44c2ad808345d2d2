#!/usr/bin/env bash
# Writes tests/fuzz/corpus/recording_index/: the bodies (header stripped,
# zstd frame decompressed) of the indexes pageblame writes for a few
# bundled traces (fp, DWARF, several processes, a teardown), the input of
# the recording_index fuzzer (RecordingFile::DecodeBody). Run again when the
# index's body changes (replay/recording_file.cc).
#   tests/fuzz/make_index_seeds.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
out=tests/fuzz/corpus/recording_index
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
for t in alloc-fp rules-trace alloc-dwarf teardown; do
  cp "traces/$t.data" "$tmp/$t.data"
  "$build/bin/pageblame" maps -i "$tmp/$t.data" >/dev/null
  # The header: "PBINDEX\1", u32 version, the replay version (a 1-byte
  # length, 64 hex digits), size, mtime, hash, a flag, the attach table's size and mtime, the
  # checkpoint (a flag, three u64, an empty string: 1 byte), raw and stored sizes.
  tail -c +161 "$tmp/$t.data.index" | zstd -dq >"$out/$t.body"
done
ls -l "$out"
