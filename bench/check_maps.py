#!/usr/bin/env python3
"""check_maps.py — does `pageblame maps --json` reproduce churn's end state?

  check_maps.py MAPS_JSON CHURN_MAPS_FILE

CHURN_MAPS_FILE is OUTDIR/NAME.PID.maps, the /proc/self/maps copy churn
writes as its last act (the pid is taken from the name). Compared page by
page, with the protection of every page: churn's arenas (the
0x200000000000 + 64 GiB range, where every region was made by a traced
mmap/mremap) and the [heap] (made by the traced brk calls). The kernel merges
neighbouring regions that pageblame keeps apart (different creating stacks),
so pages are compared, not lines. Prints one line; exit status 0 on a match.
"""
import json
import os
import re
import sys

PAGE = 4096
ARENA_LO, ARENA_HI = 0x200000000000, 0x200000000000 + (64 << 30)


def pages_of_maps(path):
    """{page: prot} for churn's arenas and heap; the heap's [lo, hi)."""
    pages, heap = {}, None
    for line in open(path):
        parts = line.split()
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        name = parts[5] if len(parts) > 5 else ""
        if name == "[heap]":
            heap = (lo, hi)
        elif not (ARENA_LO <= lo < ARENA_HI):
            continue
        for p in range(lo, hi, PAGE):
            pages[p] = parts[1][:3]
    return pages, heap


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    regions = json.load(open(sys.argv[1]))
    m = re.search(r"\.(\d+)\.maps$", os.path.basename(sys.argv[2]))
    pid = int(m.group(1))
    want, heap = pages_of_maps(sys.argv[2])
    got = {}
    for r in regions:
        if r["pid"] != pid:
            continue
        lo, hi = int(r["start"], 16), int(r["end"], 16)
        in_heap = heap and lo < heap[1] and heap[0] < hi
        if not (ARENA_LO <= lo < ARENA_HI or in_heap):
            continue
        for p in range(lo, hi, PAGE):
            got[p] = r["prot"]
    missing = sorted(set(want) - set(got))
    extra = sorted(set(got) - set(want))
    prot = sorted(p for p in set(want) & set(got) if want[p] != got[p])
    status = "OK" if not (missing or extra or prot) else "MISMATCH"
    print(f"check_maps: {status}: pid {pid}, {len(want)} pages in churn's arenas + heap; "
          f"{len(missing)} missing, {len(extra)} extra, {len(prot)} with another protection"
          + (f" (first: {hex((missing + extra + prot)[0])})" if status != "OK" else ""))
    return 0 if status == "OK" else 1


if __name__ == "__main__":
    sys.exit(main())
