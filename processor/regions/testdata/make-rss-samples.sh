#!/bin/sh
# Rewrites rss-sample.* here: runs rss-sample.c until it stops itself, then
# saves, of that one state, pmap -XX (with and without its header), pmap -X
# without its header, and /proc/PID/smaps. Run from anywhere.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O1 -o "$tmp/rss-sample" "$here/rss-sample.c"
"$tmp/rss-sample" > "$here/rss-sample.truth" &
pid=$!
while [ "$(awk '{print $3}' /proc/$pid/stat)" != T ]; do sleep 0.05; done
pmap -XX $pid > "$here/rss-sample.pmap-XX"
pmap -XX -q $pid > "$here/rss-sample.pmap-XX-q"
pmap -X -q $pid > "$here/rss-sample.pmap-X-q"
cat /proc/$pid/smaps > "$here/rss-sample.smaps"
kill -KILL $pid
wait $pid 2>/dev/null || true
