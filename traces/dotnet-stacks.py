#!/usr/bin/env python3
"""dotnet-stacks.py TRACE PERF_MAP [--pid PID] [--samples N] — what the memory
syscalls of a .NET process look like in a perf trace, and how far perf's own
unwinding gets.

Runs `perf script --show-mmap-events -i TRACE`, pairs each sys_enter_X with
the next sys_exit_X of the same thread, and groups the calls by pattern
(syscall + prot/flags/advice) and by the frames that made them. perf prints
callchain addresses relative to their mapping (file offset for a file); for
JIT code in `/memfd:doublemapper` that is an offset in the memfd, so this
maps it back to the address of the executable view (from the trace's MMAP2
records) and names it from PERF_MAP (DOTNET_PerfMapEnabled=1's
/tmp/perf-PID.map). An independent check of the findings in docs/dotnet.md,
not part of pageblame.
"""
import argparse
import bisect
import collections
import re
import subprocess
import sys

PROT = {0: "NONE", 1: "R", 2: "W", 4: "X"}
MAP_FLAGS = [(0x01, "SHARED"), (0x02, "PRIVATE"), (0x10, "FIXED"), (0x20, "ANONYMOUS"),
             (0x100, "GROWSDOWN"), (0x800, "DENYWRITE"), (0x1000, "EXECUTABLE"),
             (0x2000, "LOCKED"), (0x4000, "NORESERVE"), (0x8000, "POPULATE"),
             (0x20000, "STACK"), (0x40000, "HUGETLB"), (0x100000, "FIXED_NOREPLACE")]
MADV = {0: "NORMAL", 1: "RANDOM", 2: "SEQUENTIAL", 3: "WILLNEED", 4: "DONTNEED", 8: "FREE",
        9: "REMOVE", 10: "DONTFORK", 11: "DOFORK", 12: "MERGEABLE", 13: "UNMERGEABLE",
        14: "HUGEPAGE", 15: "NOHUGEPAGE", 16: "DONTDUMP", 17: "DODUMP", 18: "WIPEONFORK",
        19: "KEEPONFORK", 20: "COLD", 21: "PAGEOUT", 22: "POPULATE_READ", 23: "POPULATE_WRITE",
        25: "COLLAPSE"}
APP_METHODS = ("LeakNativeMemory", "LeakHGlobal", "LeakMemoryMappedFile", "ChurnManagedHeap",
               "GrowManagedHeap", "LeakNativeMmap", "LeakNativeReserveCommit", "Main")

HEAD = re.compile(r"^(?P<comm>.*?)\s+(?P<pid>\d+)(?:/(?P<tid>\d+))?\s+(?:\[\d+\]\s+)?"
                  r"(?P<time>\d+\.\d+):\s+(?P<event>\S+):\s*(?P<rest>.*)$")
FRAME = re.compile(r"^\s+(?P<ip>[0-9a-f]+)\s+(?P<sym>.*?)\s+\((?P<dso>.*)\)$")
MMAP2 = re.compile(r"PERF_RECORD_MMAP2 (?P<pid>\d+)/(?P<tid>\d+): \[0x(?P<start>[0-9a-f]+)\(0x(?P<len>[0-9a-f]+)\) "
                   r"@ (?P<pgoff>\S+) .*?\]: (?P<prot>\S+) (?P<path>.*)$")


def prot_str(p):
    if p == 0:
        return "PROT_NONE"
    return "|".join("PROT_" + n for b, n in ((1, "READ"), (2, "WRITE"), (4, "EXEC")) if p & b)


def flags_str(f):
    names = [n for b, n in MAP_FLAGS if f & b]
    return "|".join("MAP_" + n for n in names) or hex(f)


def fields(rest):
    return {k: int(v, 16) for k, v in re.findall(r"(\w+): (0x[0-9a-f]+)", rest)}


class PerfMap:
    def __init__(self, path):
        self.rows = []
        if path:
            for line in open(path, errors="replace"):
                a, s, name = line.rstrip("\n").split(" ", 2)
                self.rows.append((int(a, 16), int(s, 16), name))
        self.rows.sort()
        self.starts = [r[0] for r in self.rows]

    def name(self, addr):
        i = bisect.bisect_right(self.starts, addr) - 1
        if i >= 0 and self.rows[i][0] <= addr < self.rows[i][0] + self.rows[i][1]:
            return self.rows[i][2]
        return None


def short(name):
    # "void [dotnet-leak] Program::LeakNativeMmap(int32)[QuickJitted]" -> "Program::LeakNativeMmap[QuickJitted]"
    m = re.search(r"\] (\S+?)\(.*\)(\[\w+\])?$", name)
    return (m.group(1) + (m.group(2) or "")) if m else name


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("perf_map")
    ap.add_argument("--pid", type=int)
    ap.add_argument("--samples", type=int, default=0, help="print N example stacks per pattern")
    ap.add_argument("--truth", help="the app's truth file: show the call that made (mmap) and the one "
                    "that last made accessible (mprotect) the middle page of each of its ranges")
    args = ap.parse_args()
    pmap = PerfMap(args.perf_map)
    out = subprocess.run(["perf", "script", "-F", "comm,pid,tid,time,event,trace,ip,sym,dso",
                          "--show-mmap-events", "-i", args.trace],
                         capture_output=True, text=True, errors="replace").stdout

    memfd_x = []  # (pgoff, len, start) of executable doublemapper views
    calls = []    # dicts
    pending = {}  # tid -> call waiting for its exit
    cur = None
    for line in out.splitlines():
        if "PERF_RECORD_MMAP2" in line:
            m = MMAP2.search(line)
            if m and "doublemapper" in m["path"] and "x" in m["prot"]:
                memfd_x.append((int(m["pgoff"], 16), int(m["len"], 16), int(m["start"], 16)))
            continue
        if line.startswith("\t") or (line.startswith(" ") and FRAME.match(line) and cur is not None
                                       and not HEAD.match(line)):
            f = FRAME.match(line)
            if f and cur is not None:
                cur["frames"].append((int(f["ip"], 16), f["sym"], f["dso"]))
            continue
        h = HEAD.match(line.strip())
        if not h or not h["event"].startswith("syscalls:"):
            cur = None
            continue
        pid = int(h["pid"])
        tid = int(h["tid"] or h["pid"])
        ev = h["event"].split(":")[1]
        if ev.startswith("sys_enter_"):
            cur = {"sys": ev[len("sys_enter_"):], "pid": pid, "tid": tid, "comm": h["comm"],
                   "time": float(h["time"]), "args": fields(h["rest"]), "frames": [], "ret": None}
            pending[tid] = cur
            calls.append(cur)
        else:
            cur = None
            c = pending.pop(tid, None)
            if c is not None:
                m = re.match(r"(0x[0-9a-f]+|-?\d+)", h["rest"])
                if m:
                    c["ret"] = int(m.group(1), 0)
    if args.pid:
        calls = [c for c in calls if c["pid"] == args.pid]

    def jit_name(off):
        for pg, ln, start in memfd_x:
            if pg <= off < pg + ln:
                n = pmap.name(start + off - pg)
                if n:
                    return n
        return None

    def describe(c):
        a = c["args"]
        s = c["sys"]
        if s == "mmap":
            fixed = "FIXED " if a.get("flags", 0) & 0x10 else ""
            fd = "" if a.get("fd") == 0xFFFFFFFF else " fd"
            return f"mmap {fixed}{prot_str(a.get('prot', 0))} {flags_str(a.get('flags', 0))}{fd}"
        if s in ("mprotect", "pkey_mprotect"):
            return f"{s} {prot_str(a.get('prot', 0))}"
        if s == "madvise":
            b = a.get("behavior", -1)
            return f"madvise MADV_{MADV.get(b, hex(b))}"
        return s

    def length(c):
        a = c["args"]
        return a.get("len", a.get("len_in", a.get("new_len", 0)))

    def frame_names(c):
        names = []
        for ip, sym, dso in c["frames"]:
            if "doublemapper" in dso:
                n = jit_name(ip)
                names.append(("jit", short(n) if n else f"[memfd+{ip:#x}]"))
            elif dso.endswith(".dll"):
                names.append(("r2r", f"[{dso.rsplit('/', 1)[-1]}+{ip:#x}]"))
            elif sym == "[unknown]" and dso == "[unknown]":
                continue
            else:
                names.append(("native", sym if sym != "[unknown]" else f"[{dso.rsplit('/', 1)[-1]}+{ip:#x}]"))
        return names

    groups = collections.OrderedDict()
    for c in calls:
        if c["ret"] is not None and c["ret"] < 0 and c["ret"] > -4096:
            continue
        names = frame_names(c)
        managed = [n for k, n in names if k in ("jit", "r2r")]
        app = [n for k, n in names if k == "jit" and any(("Program::" + m) in n for m in APP_METHODS)]
        key = (describe(c), c["comm"])
        g = groups.setdefault(key, {"n": 0, "bytes": 0, "reach": collections.Counter(),
                                     "first_managed": collections.Counter(), "app": collections.Counter(),
                                     "depth": [], "ex": []})
        g["n"] += 1
        g["bytes"] += length(c)
        g["depth"].append(len(names))
        g["reach"]["managed frame" if managed else "no managed frame"] += 1
        g["first_managed"][managed[0] if managed else "-"] += 1
        for n in set(app):
            g["app"][n] += 1
        if len(g["ex"]) < args.samples:
            g["ex"].append((c, names))

    if args.truth:
        print_truth(args.truth, calls, describe, frame_names)
        return 0

    print(f"{len(calls)} calls; {len(memfd_x)} executable doublemapper MMAP2 records; "
          f"{len(pmap.rows)} perf-map symbols")
    for (desc, comm), g in sorted(groups.items(), key=lambda kv: -kv[1]["n"]):
        d = sorted(g["depth"])
        print(f"\n{desc}  [{comm}]  calls={g['n']} bytes={g['bytes']:#x} frames median={d[len(d) // 2]} max={d[-1]}"
              f"  reached a managed frame: {g['reach']['managed frame']}/{g['n']}")
        for n, k in g["first_managed"].most_common(6):
            print(f"    innermost managed frame {k:5d}x  {n}")
        for n, k in g["app"].most_common():
            print(f"    app method on stack     {k:5d}x  {n}")
        for c, names in g["ex"]:
            print(f"    e.g. {c['time']:.6f} tid {c['tid']} args {dict((k, hex(v)) for k, v in c['args'].items())}"
                  f" = {c['ret'] if c['ret'] is None else hex(c['ret'])}")
            for kind, n in names:
                print(f"        {kind:6s} {n}")


def print_truth(path, calls, describe, frame_names):
    """For each truth row: the latest successful mmap whose result covers the
    page in the middle of the row, and the latest mprotect to an accessible
    prot covering it."""
    pid = None
    rows = []
    for line in open(path):
        if line.startswith("#"):
            m = re.search(r"pid (\d+)", line)
            pid = int(m.group(1)) if m else pid
            continue
        f = line.rstrip("\n").split("\t")
        if f[0] == "method":
            continue
        rows.append((f[0], f[1], int(f[2], 16), int(f[3], 16)))
    seen = set()
    for method, what, start, end in rows:
        page = ((start + end) // 2) & ~0xFFF
        if (method, what.split(" x")[0]) in seen:
            continue  # one example per kind of row
        seen.add((method, what.split(" x")[0]))
        made = touched = None
        for c in calls:
            if c["pid"] != pid or c["ret"] is None:
                continue
            a = c["args"]
            if c["sys"] == "mmap" and 0 <= c["ret"] <= page < c["ret"] + a.get("len", 0):
                made = c
            if c["sys"] in ("mprotect", "pkey_mprotect") and c["ret"] == 0 and a.get("prot", 0) and \
                    a["start"] <= page < a["start"] + a.get("len", 0):
                touched = c
        print(f"\n{method}: {what} [{start:#x}, {end:#x})")
        for label, c in (("mapped by", made), ("made accessible by", touched)):
            if c is None:
                print(f"    {label}: -")
                continue
            names = frame_names(c)
            print(f"    {label}: {describe(c)} len={c['args'].get('len', 0):#x} at {c['time']:.6f} tid {c['tid']} ({c['comm']})")
            for kind, n in names[:3] + ([("...", f"{len(names) - 5} more")] if len(names) > 5 else []) + \
                    (names[-2:] if len(names) > 5 else names[3:]):
                print(f"        {kind:6s} {n}")


if __name__ == "__main__":
    sys.exit(main())
