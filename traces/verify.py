#!/usr/bin/env python3
"""verify.py — an independent oracle for the recorded traces.

Replays `perf script`'s text of a trace with the replay rules of
docs/design.md (page sets only, no stacks) and compares every recorded
process's end state with the maps file it wrote as its last act. record.sh
runs it on every trace, so a trace that lacks the information needed for the
acceptance test (lost events, a missing child, a rule the kernel does
differently from the brief) is caught when it is recorded, not later.

  verify.py TRACE MAPSDIR NAME --exe PATH [--manifest FILE --mode MODE]
            [--expect-mismatch] [--data-maps]

MAPSDIR/NAME.<pid>.maps are the end states; MAPSDIR/NAME.<pid>.pre.maps, when
present (attach mode), is the space before perf attached. Left out of the
comparison, as the acceptance test does: [stack], [vdso], [vvar],
[vvar_vclock], [vsyscall], and the ELF images of the executable and its
interpreter as the kernel maps them at exec (PT_LOAD span, bss included). The initial exec-time break is taken
from the first brk return (or, in attach mode, from the [heap] end in the
.pre.maps file).

--data-maps (attach mode recorded with `perf trace record -d`): perf then
synthesizes a PERF_RECORD_MMAP2 (time 0) for every mapping of the attached
process that is executable or readable (tools/perf/util/synthetic-events.c,
perf_event__synthesize_mmap_events: "if (prot[2] != 'x') { if (!mmap_data ||
prot[0] != 'r') continue; }"), so PROT_NONE mappings (guard pages) are the
only ones perf does not see. Checked: the synthesized pages equal the
.pre.maps pages perf can see; the initial break is the synthesized [heap]'s
end (and equals the .pre.maps one); the replay starts from the synthesized
pages (no creating event) plus the unseen ones, moves them with mremap like
any page, and at the end made + before-trace pages equal the whole end maps
(nothing left out but [vsyscall]); so the pages without a creating event are
exactly the pre-attach pages that survived (moved or not).

--manifest appends one manifest.tsv row per process (see MANIFEST.md for the
columns): its role (from PERF_RECORD_FORK / COMM exec), the number of
successful/failed exits per syscall as counted from perf's own output, the
pages made during the trace, the lost-event records, and OK / MISMATCH.
Exit status 0 when every process matches (with --expect-mismatch: when the
trace has lost-event records), 1 otherwise.
"""
import argparse
import glob
import os
import re
import subprocess
import sys

PAGE = 4096
KERNEL_MADE = {"[stack]", "[vdso]", "[vvar]", "[vvar_vclock]", "[vsyscall]"}
MREMAP_MAYMOVE, MREMAP_FIXED, MREMAP_DONTUNMAP = 1, 2, 4

SAMPLE = re.compile(r"^\s*(.*?)\s+(-?\d+)/(-?\d+)\s+([\d.]+):\s+(\S+):\s*(.*)$")
PREFIX = re.compile(r"^\s*.*?\s+(-?\d+)/(-?\d+)\s+[\d.]+:\s+PERF_RECORD_")
TASK = re.compile(r"PERF_RECORD_(FORK|EXIT|COMM|LOST\w*)(.*)$")
FORK = re.compile(r"\((\d+):(\d+)\):\((\d+):(\d+)\)")
# `perf script --show-mmap-events`, e.g. (synthesized at attach: time 0)
#   attach 0/0 0.000000: PERF_RECORD_MMAP2 14902/14902: [0x200000000000(0x8000) @ 0 00:00 0 0]: rw-p //anon
MMAP2 = re.compile(r"^\s*.*?\s+-?\d+/-?\d+\s+([\d.]+):\s+PERF_RECORD_MMAP2 (\d+)/(\d+): "
                   r"\[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ .*?\]: (\S+) (.*)$")


def page_up(x):
    return (x + PAGE - 1) & ~(PAGE - 1)


class Pages:
    """A set of pages as sorted disjoint half-open [start, end) ranges."""

    def __init__(self, ranges=()):
        self.r = []
        for s, e in ranges:
            self.add(s, e)

    def copy(self):
        p = Pages()
        p.r = list(self.r)
        return p

    def remove(self, s, e):
        out = []
        for a, b in self.r:
            if b <= s or a >= e:
                out.append((a, b))
                continue
            if a < s:
                out.append((a, s))
            if b > e:
                out.append((e, b))
        self.r = out

    def add(self, s, e):
        if s >= e:
            return
        self.remove(s, e)
        self.r.append((s, e))
        self.r.sort()
        merged = []
        for a, b in self.r:
            if merged and merged[-1][1] == a:
                merged[-1] = (merged[-1][0], b)
            else:
                merged.append((a, b))
        self.r = merged

    def slice(self, s, e):
        """The ranges of this set inside [s, e)."""
        return [(max(a, s), min(b, e)) for a, b in self.r if a < e and b > s]

    def minus(self, other):
        p = self.copy()
        for s, e in other.r:
            p.remove(s, e)
        return p

    def pages(self):
        return sum(e - s for s, e in self.r) // PAGE

    def __eq__(self, other):
        return self.r == other.r

    def describe(self, limit=8):
        parts = ["%x-%x" % (s, e) for s, e in self.r[:limit]]
        if len(self.r) > limit:
            parts.append("... (%d ranges)" % len(self.r))
        return " ".join(parts) if parts else "(none)"


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def parse_args_text(text):
    out = {}
    for part in text.split(","):
        if ":" in part:
            k, v = part.split(":", 1)
            out[k.strip()] = int(v.strip(), 16)
    return out


def readelf_l(path):
    try:
        return subprocess.run(["readelf", "-lW", path], capture_output=True,
                              text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return ""


def interpreter_of(exe):
    """PT_INTERP of exe (resolved); None for static binaries."""
    m = re.search(r"Requesting program interpreter: ([^\]]+)\]", readelf_l(exe))
    return os.path.realpath(m.group(1)) if m else None


def load_span(path):
    """(first LOAD's page-aligned offset, lowest vaddr, end of the highest
    vaddr+memsz), page aligned: the image the kernel maps at exec (bss too)."""
    loads = []
    for line in readelf_l(path).splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            off, vaddr, memsz = int(f[1], 16), int(f[2], 16), int(f[5], 16)
            loads.append((vaddr, off, memsz))
    if not loads:
        return None
    loads.sort()
    lo = loads[0][0] & ~(PAGE - 1)
    hi = page_up(max(v + m for v, _, m in loads))
    return loads[0][1] & ~(PAGE - 1), lo, hi


def read_maps(path, exe, interp, keep_all=False):
    """Pages of a maps file. Unless keep_all, the kernel-made ones are left
    out: the [special] mappings and the ELF images of the executable and its
    interpreter as mapped at exec (their PT_LOAD span at the load bias, which
    covers the bss). Other mappings of the same files (node maps its own
    binary again for V8's embedded builtins) count as made by the process."""
    rows = []
    for line in open(path).read().splitlines():
        f = line.split(None, 5)
        s, e = (int(x, 16) for x in f[0].split("-"))
        rows.append((s, e, int(f[2], 16), f[5] if len(f) > 5 else ""))
    kernel = Pages()
    for image in (exe, interp):
        span = load_span(image) if image else None
        if not span:
            continue
        first_off, lo, hi = span
        # The image's first mapping: lowest mapping of the file at that offset.
        starts = [s for s, _, off, name in rows if name == image and off == first_off]
        if starts:
            bias = min(starts) - lo
            kernel.add(bias + lo, bias + hi)
    pages = Pages()
    for s, e, _, name in rows:
        if s >= 1 << 47:
            continue  # [vsyscall] lies above user space
        if not keep_all and name in KERNEL_MADE:
            continue
        pages.add(s, e)
    return pages if keep_all else pages.minus(kernel)


def perf_visible(path):
    """Pages of a maps file that `perf record -d` synthesizes at attach:
    executable mappings, and the others only when readable (see --data-maps)."""
    pages = Pages()
    for line in open(path).read().splitlines():
        f = line.split(None, 5)
        s, e = (int(x, 16) for x in f[0].split("-"))
        if s < 1 << 47 and (f[1][2] == "x" or f[1][0] == "r"):
            pages.add(s, e)
    return pages


def synthesized(text):
    """pid -> (Pages, [heap] end or None) of the MMAP2 records at time 0: the
    ones perf synthesized from /proc/PID/maps when it attached."""
    out = {}
    for line in text.splitlines():
        m = MMAP2.match(line)
        if not m or float(m.group(1)) != 0.0:
            continue
        pid, start, size = int(m.group(2)), int(m.group(4), 16), int(m.group(5), 16)
        pages, heap = out.setdefault(pid, (Pages(), None))
        if start < 1 << 47:  # [vsyscall], as read_maps
            pages.add(start, start + size)
        if m.group(7).strip() == "[heap]":
            heap = start + size
        out[pid] = (pages, heap)
    return out


class Replay:
    """Page-set replay. `space` holds the pages made during the trace. With
    `before` (pid -> [Pages, ...], --data-maps), the pages that existed
    before the trace are tracked too: every call removes from all sets, and
    an mremap move carries each page's set along (a moved page keeps its
    history: design.md), so only the grown tail of a move is made. Without
    it (no knowledge of the space before the trace) a move's whole target
    counts as made, as the acceptance test of attach mode allows."""

    def __init__(self, initial_breaks, before=None):
        self.space = {}  # pid -> Pages
        self.before = before or {}  # pid -> [Pages] that existed before
        self.brk = dict(initial_breaks)  # pid -> current break
        self.pending = {}  # (tid, syscall) -> args
        self.counts = {}  # pid -> {syscall: [ok, failed]}
        self.parent = {}  # pid -> parent pid (new processes only)
        self.execed = set()  # pids seen with COMM exec
        self.first_exec = None
        self.lost = 0  # PERF_RECORD_LOST / LOST_SAMPLES lines

    def sp(self, pid):
        return self.space.setdefault(pid, Pages())

    def sets(self, pid):
        return [self.sp(pid)] + self.before.get(pid, [])

    def create(self, pid, s, e):
        for p in self.sets(pid):
            p.remove(s, e)
        self.sp(pid).add(s, e)

    def drop(self, pid, s, e):
        for p in self.sets(pid):
            p.remove(s, e)

    def move(self, pid, src, old_len, dst, new_len, keep_src):
        n = min(old_len, new_len)
        sets = self.sets(pid)
        parts = [p.slice(src, src + n) for p in sets]
        if not keep_src:
            self.drop(pid, src, src + old_len)
        self.drop(pid, dst, dst + new_len)  # MREMAP_FIXED unmaps the target
        if pid not in self.before:
            self.sp(pid).add(dst, dst + new_len)
            return
        for p, part in zip(sets, parts):
            for a, b in part:
                p.add(a - src + dst, b - src + dst)
        self.sp(pid).add(dst + n, dst + new_len)

    def role(self, pid, attached):
        if attached:
            return "attached", ""
        if pid == self.first_exec and pid not in self.parent:
            return "main", ""
        parent = str(self.parent.get(pid, ""))
        if pid in self.execed:
            return "fork+exec child", parent
        return "fork child", parent

    def task(self, kind, rest, pid):
        if kind.startswith("LOST"):
            self.lost += 1
        elif kind == "FORK":
            m = FORK.search(rest)
            child, ctid, parent, _ = (int(x) for x in m.groups())
            if child != parent:  # a new process, not a thread
                self.parent[child] = parent
                self.space[child] = self.sp(parent).copy()
                if parent in self.before:
                    self.before[child] = [b.copy() for b in self.before[parent]]
                if parent in self.brk:
                    self.brk[child] = self.brk[parent]
        elif kind == "COMM" and rest.startswith(" exec"):
            self.execed.add(pid)
            if self.first_exec is None:
                self.first_exec = pid
            self.space[pid] = Pages()
            self.before.pop(pid, None)
            self.brk.pop(pid, None)

    def sample(self, pid, tid, event, text):
        m = re.match(r"syscalls:sys_(enter|exit)_(mmap|munmap|brk|mremap)$", event)
        if not m:
            return
        phase, call = m.groups()
        if phase == "enter":
            self.pending[(tid, call)] = parse_args_text(text)
            return
        args = self.pending.pop((tid, call), None)
        ret = signed(int(text.strip(), 16))
        ok = ret >= 0 if call != "brk" else True
        if call == "brk" and args is not None and pid in self.brk:
            ok = ret == args["brk"] or args["brk"] == 0
        c = self.counts.setdefault(pid, {}).setdefault(call, [0, 0])
        c[0 if ok else 1] += 1
        if args is None:
            return  # exit without its enter (attached mid-call)
        if call == "mmap" and ret >= 0:
            self.create(pid, ret, ret + page_up(args["len"]))
        elif call == "munmap" and ret == 0:
            self.drop(pid, args["addr"], args["addr"] + page_up(args["len"]))
        elif call == "brk":
            old = self.brk.get(pid)
            if old is not None and ret != old:
                if ret > old:
                    self.create(pid, page_up(old), page_up(ret))
                else:
                    self.drop(pid, page_up(ret), page_up(old))
            self.brk[pid] = ret
        elif call == "mremap" and ret >= 0:
            old, old_len = args["addr"], page_up(args["old_len"])
            new_len, flags = page_up(args["new_len"]), args["flags"]
            if flags & MREMAP_DONTUNMAP:
                self.move(pid, old, old_len, ret, new_len, keep_src=True)
            elif ret == old:
                if new_len < old_len:
                    self.drop(pid, old + new_len, old + old_len)
                else:
                    self.create(pid, old + old_len, old + new_len)
            else:
                self.move(pid, old, old_len, ret, new_len, keep_src=False)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("mapsdir")
    ap.add_argument("name")
    ap.add_argument("--exe", required=True)
    ap.add_argument("--manifest", help="append manifest.tsv rows here")
    ap.add_argument("--mode", default="", help="mode column of the manifest")
    ap.add_argument("--expect-mismatch", action="store_true",
                    help="lost-events fixture: succeed only if lost events "
                         "were recorded")
    ap.add_argument("--data-maps", action="store_true",
                    help="attach mode recorded with -d: the synthesized "
                         "MMAP2 records give the space before the trace")
    a = ap.parse_args()
    exe = os.path.realpath(a.exe)
    interp = interpreter_of(exe)

    maps = {}
    for path in glob.glob(os.path.join(a.mapsdir, a.name + ".*.maps")):
        m = re.match(re.escape(a.name) + r"\.(\d+)\.maps$", os.path.basename(path))
        if m:
            maps[int(m.group(1))] = path
    if not maps:
        print("verify: no %s.<pid>.maps in %s" % (a.name, a.mapsdir))
        return 1

    pre = {}
    initial_breaks = {}
    for pid in maps:
        p = os.path.join(a.mapsdir, "%s.%d.pre.maps" % (a.name, pid))
        if os.path.exists(p):
            pre[pid] = read_maps(p, exe, interp, keep_all=True)
            for line in open(p):
                if line.rstrip().endswith("[heap]"):
                    initial_breaks[pid] = int(line.split()[0].split("-")[1], 16)

    text = subprocess.run(
        ["perf", "script", "-i", a.trace, "--show-task-events",
         "--show-lost-events"] +
        (["--show-mmap-events"] if a.data_maps else []) +
        ["-F", "comm,pid,tid,time,event,trace"],
        capture_output=True, text=True, check=True).stdout
    before = {}  # pid -> [synthesized pages, pages perf did not synthesize]
    problems = {}  # pid -> what the synthesized records got wrong
    if a.data_maps:
        synth = synthesized(text)
        for pid in pre:
            pre_path = os.path.join(a.mapsdir, "%s.%d.pre.maps" % (a.name, pid))
            got, heap = synth.get(pid, (Pages(), None))
            visible = perf_visible(pre_path)
            problems[pid] = []
            if got != visible:
                problems[pid].append(
                    "synthesized MMAP2 vs readable/executable .pre.maps: only "
                    "MMAP2 %s; only maps %s" % (got.minus(visible).describe(),
                                                visible.minus(got).describe()))
            if heap is None or heap != initial_breaks.get(pid):
                problems[pid].append("synthesized [heap] end %s, .pre.maps %s" % (
                    heap and hex(heap), pid in initial_breaks and hex(initial_breaks[pid])))
            if heap is not None:
                initial_breaks[pid] = heap  # the trace's own initial break
            before[pid] = [got.copy(), pre[pid].minus(got)]
    rp = Replay(initial_breaks, before)
    for line in text.splitlines():
        t = TASK.search(line)
        if t:
            m = PREFIX.match(line)
            if m:
                rp.task(t.group(1), t.group(2), int(m.group(1)))
            continue
        m = SAMPLE.match(line)
        if m:
            _, pid, tid, _, event, rest = m.groups()
            rp.sample(int(pid), int(tid), event, rest)

    failures = 0
    facts = []
    for pid in sorted(maps):
        end = read_maps(maps[pid], exe, interp)
        made = rp.space.get(pid, Pages())
        if pid in before:
            # Attach with -d: the whole end space is made + before-trace, and
            # the pages without a creating event are exactly the pre-attach
            # pages that survived (where mremap moved them).
            known, unseen = rp.before[pid]
            end_all = read_maps(maps[pid], exe, interp, keep_all=True)
            without = end_all.minus(made)
            old_pages = Pages(known.r + unseen.r)
            ok = not made.minus(end_all).r and without == old_pages and not problems[pid]
            detail = "; ".join(problems[pid] + [
                "made-but-gone: %s" % made.minus(end_all).describe(),
                "no creating event but not from before: %s" % without.minus(old_pages).describe(),
                "from before but gone: %s" % old_pages.minus(without).describe()])
            print("verify: %s pid %d: %d pages before the trace survive (%d synthesized "
                  "by perf, %d not: PROT_NONE)" % (a.name, pid, old_pages.pages(),
                                                   known.pages(), unseen.pages()))
            end = end_all
        elif pid in pre:
            # Attach mode: what the trace made must be there at the end, and
            # everything else at the end must have existed before the attach.
            extra = made.minus(end)
            unexplained = end.minus(made).minus(pre[pid])
            ok = not extra.r and not unexplained.r
            detail = "made-but-gone: %s; unexplained: %s" % (
                extra.describe(), unexplained.describe())
        else:
            ok = made == end
            detail = "only in replay: %s; only in maps: %s" % (
                made.minus(end).describe(), end.minus(made).describe())
        status = "OK" if ok else "MISMATCH"
        print("verify: %s pid %d: %s (%d pages made during the trace, %d in maps)%s" % (
            a.name, pid, status, made.pages(), end.pages(),
            "" if ok else "\n  " + detail))
        failures += 0 if ok else 1
        c = rp.counts.get(pid, {})
        role, parent = rp.role(pid, pid in pre)
        tdir = os.path.dirname(os.path.abspath(a.trace))
        rel = lambda p: os.path.relpath(os.path.abspath(p), tdir)
        pre_path = os.path.join(a.mapsdir, "%s.%d.pre.maps" % (a.name, pid))
        row = [os.path.basename(a.trace), str(pid), rel(maps[pid]),
               rel(pre_path) if pid in pre else "", exe, a.mode, role, parent]
        for call in ("mmap", "munmap", "brk", "mremap"):
            ok_n, bad_n = c.get(call, [0, 0])
            row.append("%d/%d" % (ok_n, bad_n))
        row += [str(made.pages()), str(rp.lost), status]
        facts.append("\t".join(row))
    if a.manifest:
        with open(a.manifest, "a") as f:
            for row in facts:
                f.write(row + "\n")
    if a.expect_mismatch:
        print("verify: %s: %d lost-event records" % (a.name, rp.lost))
        return 0 if rp.lost else 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
