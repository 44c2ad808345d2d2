#!/usr/bin/env python3
"""report.py — prints bench/run.sh's results as Markdown tables.

  report.py table   --traces TRACES.tsv --results RESULTS.tsv --trace MAIN_TRACE [--index INDEX.tsv]
  report.py scaling --traces TRACES.tsv --results RESULTS.tsv [--index INDEX.tsv]
  report.py dwarf   --traces TRACES.tsv --results RESULTS.tsv --dwarf T --zstd T --fp T
                    --unwind UNWIND.tsv [--index INDEX.tsv]

INDEX.tsv (run.sh, from `pageblame maps -v`): trace, index_mib — the size of
pageblame's index for that trace, so that RSS can be checked as "64 MiB +
index" and the memory above the index shown at each size.

TRACES.tsv (written by run.sh): trace, scale, bytes, samples, lost_records,
lost_samples. RESULTS.tsv: measure.py's rows.

table: one row per tool on MAIN_TRACE: median wall seconds, samples/s, MB/s
(trace bytes / wall, 1 MB = 10^6 bytes), peak RSS (GNU time's %M), peak
RssAnon (sampled), and wall time as a ratio to `pageblame maps`; then the
targets (docs/performance.md), each PASS/FAIL. A row whose note starts with "extrapolate"
was measured on a smaller trace: its wall time is scaled linearly by the
sample counts (and says so). Tools that are not built are "n/a (not built)".

scaling: `pageblame maps` at each size: wall, ns per sample, RSS, RssAnon.

dwarf: churn recorded with DWARF stacks (plain and -z) and with fp at the
same size: every tool on every trace, then the DWARF targets — maps on
either DWARF trace at least 10x faster than perf script on the plain one
(perf unwinds too), and maps' peak anonymous memory on a DWARF trace no more
than on the fp trace plus the unwinder's caches — and the unwinder's share
of the time from `maps -v` (UNWIND.tsv: trace, its "unwinding:" line).
"""
import argparse
import csv
import re
import sys

MAPS = "pageblame maps --json"


def read_tsv(path):
    with open(path) as f:
        return list(csv.DictReader(f, delimiter="\t"))


def mib(kib):
    return float(kib) / 1024


def table(traces, results, main_trace, index):
    info = traces[main_trace]
    samples, nbytes = int(info["samples"]), int(info["bytes"])
    rows = [r for r in results if r["trace"] == main_trace or r["note"].startswith("extrapolate")]
    maps = next((r for r in rows if r["label"] == MAPS and r["status"] == "ok"), None)
    maps_wall = float(maps["wall_s"]) if maps else None
    print(f"Trace: `{main_trace}`: {nbytes / 1e6:.1f} MB, {samples:,} samples, "
          f"{info['lost_records']} lost-event records ({info['lost_samples']} lost samples)\n")
    print("| tool | wall s | samples/s | MB/s | peak RSS MiB | peak anon MiB | time ÷ maps | note |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    walls = {}
    for r in rows:
        label, note = r["label"], r["note"]
        if r["status"] == "n/a":
            print(f"| {label} | n/a (not built) | | | | | | {note} |")
            continue
        if r["status"] != "ok":
            print(f"| {label} | {r['status']} after {float(r['wall_s']):.1f} s | | | | | | {note} |")
            continue
        wall = max(float(r["wall_s"]), 1e-6)
        if note.startswith("extrapolate"):
            small = traces[r["trace"]]
            factor = samples / int(small["samples"])
            wall *= factor
            note = (f"EXTRAPOLATED linearly (×{factor:.2f}) from {float(r['wall_s']):.1f} s "
                    f"on a {int(small['samples']):,}-sample trace; RSS is that run's")
        walls[label] = wall
        ratio = f"{wall / maps_wall:.2f}" if maps_wall else "-"
        print(f"| {label} | {wall:.3f} | {samples / wall:,.0f} | {nbytes / 1e6 / wall:,.0f} | "
              f"{mib(r['rss_kib']):.1f} | {mib(r['anon_kib']):.1f} | {ratio} | {note} |")
    print()
    print("Targets:\n")

    def target(what, ok, detail):
        state = "n/a" if ok is None else ("PASS" if ok else "FAIL")
        print(f"- {state}: {what} — {detail}")

    def ratio_target(what, num, den, limit, at_least):
        if num not in walls or den not in walls:
            target(what, None, "not measured")
            return
        x = walls[num] / walls[den]
        target(what, x >= limit if at_least else x <= limit, f"{x:.2f}×")

    for tool in (MAPS, "pageblame attribute"):
        ratio_target(f"{tool} ≥ 100× faster than the Python perf script",
                     "python perf script (find_pages.py)", tool, 100, True)
        ratio_target(f"{tool} ≥ 2× faster than perf script --dlfilter keeping nothing",
                     "perf script --dlfilter null (keeps nothing)", tool, 2, True)
        ratio_target(f"{tool} within 5× of cat", tool, "cat trace > /dev/null", 5, False)
    ratio_target("pageblame query same order as maps (≤ 2× maps)", "pageblame query", MAPS, 2, False)
    if maps:
        rss, anon = mib(maps["rss_kib"]), mib(maps["anon_kib"])
        idx = index.get(main_trace)
        if idx is None:
            target("pageblame maps peak RSS ≤ 64 MiB + index", None, "index size not measured")
        else:
            target("pageblame maps peak RSS ≤ 64 MiB + index", rss <= 64 + idx,
                   f"{rss:.1f} MiB RSS = index {idx:.1f} MiB (`pageblame maps -v`) + "
                   f"{rss - idx:.1f} MiB everything else ({anon:.1f} MiB anonymous in all, "
                   f"~{max(rss - anon, 0):.1f} MiB file-backed: trace pages mapped at the peak, "
                   f"binary, libraries); the trace is {nbytes / 2**20:.0f} MiB")


def scaling(traces, results, index):
    rows = [r for r in results if r["label"] == MAPS]
    rows.sort(key=lambda r: int(traces[r["trace"]]["samples"]))
    print("| trace | scale | MB | samples | maps wall s | ns/sample | MB/s | peak RSS MiB | "
          "peak anon MiB | index MiB | RSS − index MiB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    per = []
    for r in rows:
        t = traces[r["trace"]]
        s, b, wall = int(t["samples"]), int(t["bytes"]), float(r["wall_s"])
        per.append((s, wall, mib(r["rss_kib"]), mib(r["anon_kib"])))
        idx = index.get(r["trace"])
        idx_cols = (f"{idx:.1f} | {mib(r['rss_kib']) - idx:.1f}" if idx is not None else "- | -")
        print(f"| `{r['trace']}` | {t['scale']} | {b / 1e6:.0f} | {s:,} | {wall:.3f} | "
              f"{wall / s * 1e9:.0f} | {b / 1e6 / wall:,.0f} | {mib(r['rss_kib']):.1f} | "
              f"{mib(r['anon_kib']):.1f} | {idx_cols} |")
    if len(per) >= 2:
        (s0, w0, r0, a0), (s1, w1, r1, a1) = per[0], per[-1]
        print()
        print(f"From the smallest to the largest trace: samples ×{s1 / s0:.1f}, "
              f"time ×{w1 / w0:.1f} (linear would be ×{s1 / s0:.1f}), "
              f"peak RSS ×{r1 / r0:.1f}, peak anon ×{a1 / a0:.1f} "
              f"(flat memory would be ×1.0).")
        # time = fixed + marginal × samples: the marginal cost between two
        # sizes is what "linear" is about (the fixed part is start-up and the
        # output, which depend on the end state, not on the trace length).
        print()
        for (sa, wa, ra, aa), (sb, wb, rb, ab) in zip(per, per[1:]):
            ds = sb - sa
            print(f"- {sa:,} → {sb:,} samples: marginal time {(wb - wa) / ds * 1e9:.0f} ns/sample, "
                  f"marginal peak anon {(ab - aa) * 2**20 / ds:.0f} bytes/sample, "
                  f"marginal peak RSS {(rb - ra) * 2**20 / ds:.0f} bytes/sample")


def dwarf(traces, results, dw, dz, fp, unwind, index):
    short = {dw: "dwarf", dz: "dwarf -z", fp: "fp"}
    print("| tool | trace | MB | samples | wall s | samples/s | peak RSS MiB | peak anon MiB | note |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    got = {}
    for r in results:
        t = traces[r["trace"]]
        if r["status"] != "ok":
            print(f"| {r['label']} | {short.get(r['trace'], r['trace'])} | | | "
                  f"{r['status']} after {float(r['wall_s']):.1f} s | | | | {r['note']} |")
            continue
        wall = max(float(r["wall_s"]), 1e-6)
        got[(r["label"], r["trace"])] = r
        print(f"| {r['label']} | {short.get(r['trace'], r['trace'])} | {int(t['bytes']) / 1e6:.1f} | "
              f"{int(t['samples']):,} | {wall:.3f} | {int(t['samples']) / wall:,.0f} | "
              f"{mib(r['rss_kib']):.1f} | {mib(r['anon_kib']):.1f} | {r['note']} |")
    for trace in (dw, dz, fp):
        t = traces[trace]
        if t["lost_records"] != "0" or t["lost_samples"] != "0":
            print(f"\n`{trace}` lost events: {t['lost_records']} PERF_RECORD_LOST, "
                  f"{t['lost_samples']} lost samples.")
    print("\nTargets (DWARF stacks):\n")

    def state(ok):
        return "n/a" if ok is None else ("PASS" if ok else "FAIL")

    for trace in (dw, dz):
        perf = got.get(("perf script (every event)", trace))
        maps = got.get((MAPS, trace))
        if perf and maps:
            x = float(perf["wall_s"]) / float(maps["wall_s"])
            print(f"- {state(x >= 10)}: pageblame maps ≥ 10× faster than perf script on the "
                  f"{short[trace]} trace — {x:.1f}×")
        else:
            print(f"- n/a: pageblame maps vs perf script on the {short[trace]} trace — not measured")
    fp_maps = got.get((MAPS, fp))
    for trace in (dw, dz):
        maps = got.get((MAPS, trace))
        line = unwind.get(trace, "")
        m = re.search(r"([0-9.]+) KiB", line)
        if not (fp_maps and maps and m):
            print(f"- n/a: peak memory on the {short[trace]} trace — not measured")
            continue
        cache = float(m.group(1)) / 1024
        w = re.search(r"([0-9]+) waited for mapping", line)
        waited = int(w.group(1)) if w else 0
        h = re.search(r"at most ([0-9.]+) MiB held", line)
        held = h.group(1) if h else "?"
        extra = mib(maps["anon_kib"]) - mib(fp_maps["anon_kib"])
        print(f"- {state(extra <= cache + 1)}: pageblame maps' peak anonymous memory on the "
              f"{short[trace]} trace ≤ the fp trace's + the unwinder's caches — "
              f"{mib(maps['anon_kib']):.1f} MiB vs {mib(fp_maps['anon_kib']):.1f} MiB (fp): "
              f"{extra:+.1f} MiB; CFI rule cache {cache:.2f} MiB; {waited} samples waited for "
              f"their process's mappings, {held} MiB held for them at most "
              f"(peak RSS {mib(maps['rss_kib']):.1f} vs {mib(fp_maps['rss_kib']):.1f} MiB, "
              f"index {index.get(trace, float('nan')):.1f} vs {index.get(fp, float('nan')):.1f} MiB)")
    plain = got.get((MAPS + " --no-inline", dw))
    if plain and fp_maps:
        extra = mib(plain["anon_kib"]) - mib(fp_maps["anon_kib"])
        print(f"- with --no-inline (no DWARF debug info read for inlined frames) on the dwarf trace: "
              f"{float(plain['wall_s']):.3f} s, peak anonymous memory "
              f"{mib(plain['anon_kib']):.1f} MiB, {extra:+.1f} MiB over the fp trace's")
    print("\nUnwinding (`pageblame maps -v`, an untimed run):\n")
    for trace in (dw, dz):
        line = unwind.get(trace, "none")
        print(f"- {short[trace]}: {line}")
        m = re.search(r"([0-9,]+) samples unwound in ([0-9.]+) ms", line)
        maps = got.get((MAPS, trace))
        if m and maps:
            n, ms = int(m.group(1).replace(",", "")), float(m.group(2))
            wall = float(maps["wall_s"])
            print(f"  — {ms / 1e3 / wall * 100:.0f} % of maps' {wall:.3f} s, "
                  f"{ms * 1e3 / max(n, 1):.1f} µs per sample")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["table", "scaling", "dwarf"])
    ap.add_argument("--dwarf")
    ap.add_argument("--zstd")
    ap.add_argument("--fp")
    ap.add_argument("--unwind")
    ap.add_argument("--traces", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--trace")
    ap.add_argument("--index")
    a = ap.parse_args()
    traces = {t["trace"]: t for t in read_tsv(a.traces)}
    results = read_tsv(a.results)
    index = {}
    if a.index:
        index = {r["trace"]: float(r["index_mib"]) for r in read_tsv(a.index)}
    if a.mode == "table":
        table(traces, results, a.trace, index)
    elif a.mode == "dwarf":
        unwind = {r["trace"]: r["unwinding"] for r in read_tsv(a.unwind)}
        dwarf(traces, results, a.dwarf, a.zstd, a.fp, unwind, index)
    else:
        scaling(traces, results, index)
    return 0


if __name__ == "__main__":
    sys.exit(main())
