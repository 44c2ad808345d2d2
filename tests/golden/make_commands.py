#!/usr/bin/env python3
"""Writes tests/golden/commands.txt: every command the golden-output test
(tests/golden_outputs_test.cc) runs on the bundled traces, one per line as
`GROUP<TAB>ARGS` (ARGS relative to the source directory). Run again only
when traces are added; the outputs' hashes are in outputs.tsv (the test
rewrites it with PAGEBLAME_UPDATE_GOLDEN=1).

For each trace: maps (text, JSON, at its peak), growth (text, JSON, folded,
--detail), and for each process the manifest gives with its kernel maps file:
attribute of that table (text, JSON, folded, --detail, --by create), query of
three addresses from the table (text --history, JSON), maps --pid; the .NET
recording's hunt (diff, --unaccounted --maddress); region-table diffs.
Twins with `--group stack` of the text first screens (growth of every trace,
attribute of every table, the hunt's and the residency attribute, and a few
--detail ones): they must print what the same command printed before
grouping by method became the default (issue 41), so their hashes are the
plain commands' as recorded before that change."""
import csv, os, sys

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.chdir(SRC)
BUILDID = "--buildid-dir traces/buildid-cache"

def maps_addresses(path):
    """Three addresses of a /proc maps table: the first region's start, the
    middle page of the largest, the last page of the last."""
    rows = []
    for line in open(path):
        f = line.split()
        if not f or "-" not in f[0]:
            continue
        a, b = f[0].split("-")
        try:
            rows.append((int(a, 16), int(b, 16)))
        except ValueError:
            continue
    if not rows:
        return []
    big = max(rows, key=lambda r: r[1] - r[0])
    mid = (big[0] + (big[1] - big[0]) // 2) & ~0xfff
    return ["0x%x" % rows[0][0], "0x%x" % mid, "0x%x" % (rows[-1][1] - 0x1000)]

def stack_twins(commands):
    """`--group stack` twins of the text first screens (see above)."""
    detail = ("dotnet_dotnet-leak", "node-dwarf", "alloc-dwarf")
    twins = []
    for g, c in commands:
        plain_growth = c.startswith("growth ") and c.endswith(BUILDID)
        plain_attribute = c.startswith("attribute ") and "--format" not in c and "--detail" not in c
        detail_twin = g in detail and "--detail" in c
        if plain_growth or plain_attribute or detail_twin:
            twins.append((g, c + " --group stack"))
    return twins

def main():
    out = []
    traces = sorted(t for t in os.listdir("traces") if t.endswith(".data"))
    traces += ["dotnet/" + t for t in sorted(os.listdir("traces/dotnet")) if t.endswith(".data")]
    for t in traces:
        g = t.replace("/", "_").replace(".data", "")
        i = f"-i traces/{t} {BUILDID}"
        out += [(g, f"maps {i}"), (g, f"maps {i} --json"), (g, f"maps {i} --at peak"),
                (g, f"growth {i}"), (g, f"growth {i} --json"), (g, f"growth {i} --format folded"),
                (g, f"growth {i} --detail --frames all")]
    rows = list(csv.DictReader(open("traces/manifest.tsv"), delimiter="\t"))
    for r in rows:
        t, pid, maps = r["trace"], r["pid"], r["maps"]
        if not maps or not os.path.exists("traces/" + maps) or not os.path.exists("traces/" + t):
            continue
        g = t.replace("/", "_").replace(".data", "")
        i = f"-i traces/{t} {BUILDID} --pid {pid}"
        table = "traces/" + maps
        out += [(g, f"attribute {i} --regions {table}"), (g, f"attribute {i} --regions {table} --format json"),
                (g, f"attribute {i} --regions {table} --format folded"),
                (g, f"attribute {i} --regions {table} --detail --by create"),
                (g, f"maps {i}")]
        addrs = maps_addresses(table)
        if addrs:
            out += [(g, f"query {i} --history {' '.join(addrs)}"), (g, f"query {i} --json {' '.join(addrs)}")]
    d = "traces/dotnet"
    out += [("dotnet_hunt", f"diff {d}/dotnet-leak.23474.pmap {d}/dotnet-leak.23474.maddress.txt"),
            ("dotnet_hunt", f"diff --json {d}/dotnet-leak.23474.pmap {d}/dotnet-leak.23474.maddress.txt"),
            ("dotnet_hunt", f"attribute -i {d}/dotnet-leak.data --pid 23474 --perf-map-dir {d} "
                            f"--unaccounted --maddress {d}/dotnet-leak.23474.maddress.txt"),
            ("dotnet_hunt", f"attribute -i {d}/dotnet-leak.data --pid 23474 --perf-map-dir {d} "
                            f"--address {d}/dotnet-leak.23474.pmap --maddress {d}/dotnet-leak.23474.maddress.txt "
                            f"--format json"),
            ("residency", "attribute -i traces/residency.data --pid 32331 --at 12502.830600 "
                          "--regions traces/maps/residency.32331.pause.smaps"),
            ("residency", "growth -i traces/residency.data --pid 32331 --json")]
    out += stack_twins(out)
    with open("tests/golden/commands.txt", "w") as f:
        f.write("# group<TAB>pageblame arguments, run from the source directory (tests/golden/make_commands.py)\n")
        for g, c in out:
            f.write(f"{g}\t{c}\n")
    print(f"{len(out)} commands", file=sys.stderr)

main()
