#!/usr/bin/env bash
# diff_table.sh — what `pageblame diff` costs on a huge region table: writes a
# pmap with its header of N rows (1M and 10M by default: the issue 44 attack
# that took 8.2 GB and super-linear time), diffs it against a one-range table,
# text and --json, and prints wall and CPU seconds, peak RSS (/usr/bin/time
# -v's maximum resident set size) and bytes per row. The targets: at most
# ~100 bytes a row (the table's own text, kept while it is parsed, is 56 of
# them for -x rows), a 10M-row table in at most 1 GB, time linear in N.
# No root needed; not part of scripts/test.
#
#   bench/diff_table.sh [ROWS...]        (default 1000000 10000000)
#   LAYOUT=X bench/diff_table.sh 1000000 # pmap -X rows (this kernel's 22 columns, ~190 bytes a row)
# Environment: BENCH_BUILD_DIR (default build), BENCH_OUT (bench/out).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
BUILD=${BENCH_BUILD_DIR:-$ROOT/build}
[[ $BUILD == /* ]] || BUILD=$ROOT/$BUILD
PB=$BUILD/bin/pageblame
OUT=${BENCH_OUT:-$HERE/out}/diff
LAYOUT=${LAYOUT:-x}
[[ -x $PB ]] || { echo "diff_table.sh: no $PB: build pageblame first (BENCH_BUILD_DIR)" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "diff_table.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
mkdir -p "$OUT"
ROWS=("$@")
[[ ${#ROWS[@]} -gt 0 ]] || ROWS=(1000000 10000000)

# table ROWS FILE: one page a row with a page's gap after it (nothing
# coalesces), every row resident, as `pmap -x` or `pmap -X` prints them.
table() {
  python3 - "$1" "$LAYOUT" > "$2" <<'EOF'
import sys
n, layout = int(sys.argv[1]), sys.argv[2]
out = sys.stdout
out.write("1234:   bench\n")
if layout == "x":
    out.write("Address           Kbytes     RSS   Dirty Mode  Mapping\n")
    row = "%016x       4       4       0 rw--- [ anon ]\n"
else:
    out.write("         Address Perm   Offset Device  Inode Size  Rss Pss Pss_Dirty Referenced Anonymous KSM "
              "LazyFree ShmemPmdMapped FilePmdMapped Shared_Hugetlb Private_Hugetlb Swap SwapPss Locked "
              "THPeligible Mapping\n")
    row = ("    %012x rw-p 00000000  00:00      0    4    4   4         4          4         4   0        0"
           "              0             0              0               0    0       0      0           0 \n")
base = 0x10000000
chunk = []
for i in range(n):
    chunk.append(row % (base + i * 0x2000))
    if len(chunk) == 100000:
        out.write("".join(chunk))
        chunk = []
out.write("".join(chunk))
EOF
}

echo "0x10000000-0x10001000" > "$OUT/one-range.txt"
printf '| %-9s | %-6s | %9s | %8s | %8s | %10s | %9s |\n' rows output "file MB" "wall s" "cpu s" "peak MB" "B per row"
printf '|%s|%s|%s|%s|%s|%s|%s|\n' ----------- -------- ----------- ---------- ---------- ------------ -----------
for n in "${ROWS[@]}"; do
  file=$OUT/pmap-$LAYOUT-$n.txt
  [[ -s $file ]] || table "$n" "$file"
  mb=$(( $(stat -c %s "$file") / 1000000 ))
  for output in text json; do
    flag=; [[ $output == json ]] && flag=--json
    /usr/bin/time -v "$PB" diff $flag "$file" "$OUT/one-range.txt" > /dev/null 2> "$OUT/time.txt"
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$OUT/time.txt")
    cpu=$(awk -F': ' '/User time/ {u = $2} /System time/ {s = $2} END {print u + s}' "$OUT/time.txt")
    kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$OUT/time.txt")
    printf '| %9d | %-6s | %9d | %8.2f | %8.2f | %10.1f | %9.1f |\n' "$n" "$output" "$mb" "$wall" "$cpu" \
      "$(echo "$kb / 1000" | bc -l)" "$(echo "$kb * 1024 / $n" | bc -l)"
  done
done
