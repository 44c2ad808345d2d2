#!/usr/bin/env python3
"""maps_equal.py — does `pageblame maps --json` equal a /proc/PID/maps copy?

  maps_equal.py PROC_MAPS MAPS_JSON [PID]

Both are reduced to runs of pages with one protection (rwx; neighbouring
rows with the same protection are one run: the kernel merges VMAs that
pageblame keeps apart, by their creating calls), and compared run by run.
Prints one line, then each difference; exit status 0 when they are equal.
"""
import json
import sys


def runs(rows):
    """Sorted (start, end, prot) with touching same-prot rows merged."""
    out = []
    for start, end, prot in sorted(rows):
        if out and out[-1][1] == start and out[-1][2] == prot:
            out[-1][1] = end
        elif out and start < out[-1][1]:
            raise SystemExit(f"overlapping rows at {start:#x}")
        else:
            out.append([start, end, prot])
    return out


def proc_rows(path):
    rows = []
    for line in open(path):
        f = line.split()
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        rows.append((lo, hi, f[1][:3]))
    return rows


def json_rows(path, pid):
    return [(int(r["start"], 16), int(r["end"], 16), r["prot"]) for r in json.load(open(path))
            if pid is None or r["pid"] == pid]


def diff(a, b):
    """The ranges where a and b differ, as (start, end, a_prot, b_prot)."""
    points = sorted({p for r in a + b for p in r[:2]})
    def at(rs, lo):
        for s, e, p in rs:
            if s <= lo < e:
                return p
        return None
    out = []
    for lo, hi in zip(points, points[1:]):
        pa, pb = at(a, lo), at(b, lo)
        if pa != pb:
            if out and out[-1][1] == lo and out[-1][2:] == [pa, pb]:
                out[-1][1] = hi
            else:
                out.append([lo, hi, pa, pb])
    return out


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    pid = int(sys.argv[3]) if len(sys.argv) == 4 else None
    kernel, ours = runs(proc_rows(sys.argv[1])), runs(json_rows(sys.argv[2], pid))
    d = diff(kernel, ours)
    pages = sum(e - s for s, e, *_ in kernel) // 4096
    print(f"{'EQUAL' if not d else 'DIFFERENT'}: {len(kernel)} runs, {pages} pages in the kernel's table; "
          f"{len(d)} differences")
    for lo, hi, pk, po in d[:20]:
        print(f"  {lo:#x}-{hi:#x} ({(hi - lo) // 1024} KiB): kernel {pk or 'unmapped'}, maps {po or 'unmapped'}")
    return 0 if not d else 1


if __name__ == "__main__":
    sys.exit(main())
