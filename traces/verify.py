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

--prot (traces that record mprotect, pkey_mprotect and madvise too): also
replays each made page's prot, origin and commit (docs/design.md, "Reserve
vs commit"): mmap gives prot and origin; MAP_FIXED onto PROT_NONE pages
keeps their origin and commits them (page by page), MAP_FIXED PROT_NONE over
committed pages (a commit set) keeps the origin and decommits them, any other
MAP_FIXED replaces; mprotect/pkey_mprotect set prot (to non-NONE from NONE:
commit = that call; to NONE: commit cleared), and one that returns -ENOMEM
has changed the mapped prefix of its range (mm/mprotect.c applies VMA by VMA
and stops at the first hole); madvise changes no prot. brk and mremap
growth are rw-/the region's prot; moves carry prot, origin and commit. Then
the prot of every made page is compared with the maps file, page-exact.

--truth DIR: checks DIR/NAME.<pid>.tsv (the program's own ground truth,
traces/src/truth.h) against the replay and perf's stacks: every truth range
is made, has the truth's prot, its origin call's stack names the origin
function and its commit call's stack the commit function ('-': no commit).
perf script prints the stacks (`-F ...,ip,sym,dso`: with DWARF recordings
perf unwinds them itself). Rows whose syscall is inside glibc (via = libc)
cannot be named by frame-pointer stacks (glibc has no frame pointers): in an
fp trace (a mode without "dwarf") such a row passes when its stack's leaf is
in libc or ld.so, and is counted as "fp-hidden". perf's own DWARF unwinder
(libdw) stops at the first JIT frame (no CFI for V8's code): a row whose
stack ends in a perf-PID.map frame without naming the function is counted as
"jit-cut", not failed (pageblame's unwinder goes on through JIT frames by
frame pointers).

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
            # An event without a call chain has perf's ip/sym/dso after it.
            out[k.strip()] = int(v.split()[0], 16)
    return out


# A call-chain line of `perf script -F ...,ip,sym,dso`:
#   "\t    7f3b5a1e2d07 __mmap (/usr/lib/x86_64-linux-gnu/libc.so.6)"
#   "\t            2948 sc6 (inlined)"
FRAME = re.compile(r"^\s+([0-9a-f]+) (.*) \((.*)\)$")
PROT_NONE = "---"


def prot_str(prot):
    return ("r" if prot & 1 else "-") + ("w" if prot & 2 else "-") + ("x" if prot & 4 else "-")


def function_of(sym):
    """The function name in a perf symbol: C++ parameters, JIT prefixes
    (perf-PID.map "JS:~name /path:1:2") and "+0x.." offsets dropped."""
    if sym.startswith("JS:"):
        sym = sym[3:].lstrip("~*^+")
        return sym.split()[0] if sym.split() else sym
    depth = 0
    for i, ch in enumerate(sym):
        if ch == "(" and i > 0 and depth == 0 and not sym.startswith("(anonymous", i):
            return sym[:i]
        depth += ch == "<"
        depth -= ch == ">"
    return sym.split("+0x")[0]


def names(frames, fn):
    return any(function_of(sym) == fn for sym, _ in frames)


class Attrs:
    """Sorted disjoint [s, e) pieces of one process's made pages, each with
    (prot, origin event, commit event or None)."""

    def __init__(self):
        self.r = []

    def copy(self):
        a = Attrs()
        a.r = list(self.r)
        return a

    def slice(self, s, e):
        return [(max(a, s), min(b, e), v) for a, b, v in self.r if a < e and b > s]

    def remove(self, s, e):
        out = []
        for a, b, v in self.r:
            if b <= s or a >= e:
                out.append((a, b, v))
                continue
            if a < s:
                out.append((a, s, v))
            if b > e:
                out.append((e, b, v))
        self.r = out

    def put(self, pieces):
        for a, b, _ in pieces:
            self.remove(a, b)
        self.r.extend(p for p in pieces if p[0] < p[1])
        self.r.sort(key=lambda p: p[0])

    def at(self, addr):
        for a, b, v in self.r:
            if a <= addr < b:
                return v
        return None

    def prefix(self, s, e):
        """End of the mapped run that starts at s (s if s is unmapped)."""
        end = s
        for a, b, _ in self.r:
            if a <= end < b:
                end = b
        return min(end, e)

    def segments(self):
        """[(s, e, prot)] with equal neighbours merged."""
        out = []
        for a, b, v in self.r:
            if out and out[-1][1] == a and out[-1][2] == v[0]:
                out[-1] = (out[-1][0], b, v[0])
            else:
                out.append((a, b, v[0]))
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
        self.attrs = {}  # pid -> Attrs (prot, origin, commit of made pages)
        self.events = []  # event id -> (call, time, tid, frames)
        self.last_event = {}  # tid -> (phase, call, text) of its last syscalls:* sample

    def sp(self, pid):
        return self.space.setdefault(pid, Pages())

    def at(self, pid):
        return self.attrs.setdefault(pid, Attrs())

    def map_attrs(self, pid, s, e, prot, ev):
        """An mmap's effect on prot/origin/commit, page by page."""
        pieces = []
        holes = Pages([(s, e)])
        for a, b, (p, o, c) in self.at(pid).slice(s, e):
            holes.remove(a, b)
            if p == PROT_NONE and prot != PROT_NONE:
                v = (prot, o, ev)  # committed onto a reservation: origin stays
            elif p == PROT_NONE:
                v = (prot, o, None)  # PROT_NONE again: still the reservation
            elif prot == PROT_NONE and c is not None:
                v = (prot, o, None)  # decommit of committed pages
            else:
                v = (prot, ev, None)  # replaced
            pieces.append((a, b, v))
        pieces += [(a, b, (prot, ev, None)) for a, b in holes.r]
        self.at(pid).put(pieces)

    def protect(self, pid, s, e, prot, ev):
        pieces = []
        for a, b, (p, o, c) in self.at(pid).slice(s, e):
            if prot != PROT_NONE and p == PROT_NONE:
                c = ev
            elif prot == PROT_NONE:
                c = None
            pieces.append((a, b, (prot, o, c)))
        self.at(pid).put(pieces)

    def sets(self, pid):
        return [self.sp(pid)] + self.before.get(pid, [])

    def create(self, pid, s, e):
        for p in self.sets(pid):
            p.remove(s, e)
        self.sp(pid).add(s, e)

    def drop(self, pid, s, e):
        for p in self.sets(pid):
            p.remove(s, e)
        self.at(pid).remove(s, e)

    def move(self, pid, src, old_len, dst, new_len, keep_src, ev=None):
        n = min(old_len, new_len)
        sets = self.sets(pid)
        parts = [p.slice(src, src + n) for p in sets]
        # prot/origin/commit travel with the pages; the grown tail is new,
        # with the prot of the region's last page (the kernel grows that VMA).
        moved = [(a - src + dst, b - src + dst, v) for a, b, v in self.at(pid).slice(src, src + n)]
        last = self.at(pid).at(src + old_len - 1)
        tail = [(dst + n, dst + new_len, ((last[0] if last else "rw-"), ev, None))]
        if not keep_src:
            self.drop(pid, src, src + old_len)
        self.drop(pid, dst, dst + new_len)  # MREMAP_FIXED unmaps the target
        self.at(pid).put(moved + tail)
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
                self.attrs[child] = self.at(parent).copy()
                if parent in self.before:
                    self.before[child] = [b.copy() for b in self.before[parent]]
                if parent in self.brk:
                    self.brk[child] = self.brk[parent]
        elif kind == "COMM" and rest.startswith(" exec"):
            self.execed.add(pid)
            if self.first_exec is None:
                self.first_exec = pid
            self.space[pid] = Pages()
            self.attrs[pid] = Attrs()
            self.before.pop(pid, None)
            self.brk.pop(pid, None)

    def sample(self, pid, tid, event, text, time=0.0, frames=()):
        m = re.match(r"syscalls:sys_(enter|exit)_(mmap|munmap|brk|mremap|mprotect|pkey_mprotect|madvise)$",
                     event)
        if not m:
            return
        phase, call = m.groups()
        # The same event twice in a row on a thread: `perf trace record -e
        # 'syscalls:*_mprotect'` also selects sys_*_pkey_mprotect (and
        # '*_madvise' sys_*_process_madvise), so next to an explicit
        # '*_pkey_mprotect' that tracepoint has two attrs and each of its
        # enters and exits is written twice (microseconds apart). Counted once.
        key = (phase, call, text.split("   ")[0].strip())
        if self.last_event.get(tid) == key:
            return
        self.last_event[tid] = key
        if phase == "enter":
            self.pending[(tid, call)] = (parse_args_text(text), list(frames))
            return
        args, enter_frames = self.pending.pop((tid, call), (None, []))
        ret = signed(int(text.split()[0], 16))
        ok = ret >= 0 if call != "brk" else True
        if call == "brk" and args is not None and pid in self.brk:
            ok = ret == args["brk"] or args["brk"] == 0
        c = self.counts.setdefault(pid, {}).setdefault(call, [0, 0])
        c[0 if ok else 1] += 1
        if args is None:
            return  # exit without its enter (attached mid-call)
        ev = len(self.events)
        self.events.append((call, time, tid, enter_frames or list(frames)))
        if call == "mmap" and ret >= 0:
            self.create(pid, ret, ret + page_up(args["len"]))
            self.map_attrs(pid, ret, ret + page_up(args["len"]), prot_str(args["prot"]), ev)
        elif call == "munmap" and ret == 0:
            self.drop(pid, args["addr"], args["addr"] + page_up(args["len"]))
        elif call == "brk":
            old = self.brk.get(pid)
            if old is not None and ret != old:
                if ret > old:
                    self.create(pid, page_up(old), page_up(ret))
                    self.at(pid).put([(page_up(old), page_up(ret), ("rw-", ev, None))])
                else:
                    self.drop(pid, page_up(ret), page_up(old))
            self.brk[pid] = ret
        elif call == "mremap" and ret >= 0:
            old, old_len = args["addr"], page_up(args["old_len"])
            new_len, flags = page_up(args["new_len"]), args["flags"]
            if flags & MREMAP_DONTUNMAP:
                self.move(pid, old, old_len, ret, new_len, keep_src=True, ev=ev)
            elif ret == old:
                if new_len < old_len:
                    self.drop(pid, old + new_len, old + old_len)
                else:
                    last = self.at(pid).at(old + old_len - 1)
                    self.create(pid, old + old_len, old + new_len)
                    self.at(pid).put([(old + old_len, old + new_len,
                                       ((last[0] if last else "rw-"), ev, None))])
            else:
                self.move(pid, old, old_len, ret, new_len, keep_src=False, ev=ev)
        elif call in ("mprotect", "pkey_mprotect"):
            s, e = args["start"], args["start"] + page_up(args["len"])
            if ret == 0:
                self.protect(pid, s, e, prot_str(args["prot"]), ev)
            elif ret == -12:  # ENOMEM: the mapped prefix was changed
                self.protect(pid, s, self.at(pid).prefix(s, e), prot_str(args["prot"]), ev)
        # madvise: no prot change (history only)


def read_prot_segments(path, made):
    """[(s, e, prot)] of a maps file inside the page set `made`, merged."""
    out = []
    for line in open(path).read().splitlines():
        f = line.split(None, 5)
        a, b = (int(x, 16) for x in f[0].split("-"))
        for s, e in made.slice(a, b):
            if out and out[-1][1] == s and out[-1][2] == f[1][:3]:
                out[-1] = (out[-1][0], e, f[1][:3])
            else:
                out.append((s, e, f[1][:3]))
    return out


def check_truth(path, rp, pid, dwarf):
    """Checks a truth file (traces/src/truth.h) of pid. Returns (failures,
    summary, [problem lines])."""
    rows = [l.rstrip("\n").split("\t") for l in open(path)][1:]
    attrs = rp.at(pid)
    bad, named, hidden, cut, problems = 0, 0, 0, 0, []
    for row in rows:
        s, e = int(row[0], 16), int(row[1], 16)
        prot, origin, commit, via, what = row[2], row[3], row[4], row[5], row[6]
        pieces = attrs.slice(s, e)
        why = []
        if sum(b - a for a, b, _ in pieces) != e - s:
            why.append("not all made during the trace")
        fp_hidden = jit_cut = False
        for a, b, (p, o, c) in pieces:
            if p != prot:
                why.append("%x-%x prot %s, truth %s" % (a, b, p, prot))
            for fn, evid, label in ((origin, o, "origin"), (commit, c, "commit")):
                if fn == "-":
                    if evid is not None:
                        why.append("%x-%x has a commit (%s at %.6f), truth none" % (
                            a, b, rp.events[evid][0], rp.events[evid][1]))
                    continue
                if evid is None:
                    why.append("%x-%x has no %s, truth %s" % (a, b, label, fn))
                    continue
                frames = rp.events[evid][3]
                if names(frames, fn):
                    continue
                leaf_dso = frames[0][1] if frames else ""
                if via == "libc" and not dwarf and re.search(r"/(libc|ld-linux[^/]*)\.so", leaf_dso):
                    fp_hidden = True
                    continue
                if dwarf and frames and re.search(r"/perf-\d+\.map$", frames[-1][1]):
                    jit_cut = True  # perf's DWARF unwinder stops at JIT code
                    continue
                why.append("%x-%x %s %s at %.6f: stack does not name %s (%s)" % (
                    a, b, label, rp.events[evid][0], rp.events[evid][1], fn,
                    " <- ".join(sym for sym, _ in frames[:6]) or "no stack"))
        if why:
            bad += 1
            problems.append("truth %s-%s %s: %s" % (row[0], row[1], what, "; ".join(why[:4])))
        elif fp_hidden:
            hidden += 1
        elif jit_cut:
            cut += 1
        else:
            named += 1
    summary = ("%d truth rows: %d named by their stacks, %d fp-hidden (syscall in libc), "
               "%d jit-cut (DWARF stack ends in JIT code), %d FAILED") % (
        len(rows), named, hidden, cut, bad)
    return bad, summary, problems


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
    ap.add_argument("--prot", action="store_true",
                    help="also check every made page's prot against the maps")
    ap.add_argument("--truth", metavar="DIR",
                    help="check DIR/NAME.<pid>.tsv against the replay and the stacks")
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

    # JIT symbols: perf looks for perf-PID.map in /tmp only.
    copied = []
    if a.truth:
        for m in glob.glob(os.path.join(os.path.dirname(os.path.abspath(a.trace)), "perf-*.map")):
            dst = os.path.join("/tmp", os.path.basename(m))
            pid_of_map = int(re.search(r"perf-(\d+)\.map", m).group(1))
            if pid_of_map in maps and not os.path.exists(dst):
                import shutil
                shutil.copy(m, dst)
                copied.append(dst)
    try:
        text = subprocess.run(
            ["perf", "script", "-i", a.trace, "--show-task-events",
             "--show-lost-events"] +
            (["--show-mmap-events"] if a.data_maps else []) +
            ["-F", "comm,pid,tid,time,event,trace" + (",ip,sym,dso" if a.truth else "")],
            capture_output=True, text=True, check=True).stdout
    finally:
        for c in copied:
            if os.path.exists(c):
                os.unlink(c)
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
    # Each sample line is replayed once its call chain (the indented frame
    # lines after it, with --truth) has been read.
    cur = None

    def flush():
        if cur:
            rp.sample(*cur)

    for line in text.splitlines():
        t = TASK.search(line)
        if t:
            flush()
            cur = None
            m = PREFIX.match(line)
            if m:
                rp.task(t.group(1), t.group(2), int(m.group(1)))
            continue
        m = SAMPLE.match(line)
        if m:
            flush()
            _, pid, tid, time, event, rest = m.groups()
            cur = (int(pid), int(tid), event, rest, float(time), [])
            continue
        f = FRAME.match(line)
        if f and cur:
            cur[5].append((f.group(2), f.group(3)))
    flush()

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
        if ok and a.prot and pid not in pre:
            want = read_prot_segments(maps[pid], made)
            got = rp.at(pid).segments()
            if want != got:
                ok = False
                diff = [x for x in got if x not in want][:4]
                detail = "prot: replay %s; maps %s" % (
                    " ".join("%x-%x %s" % x for x in diff),
                    " ".join("%x-%x %s" % x for x in [y for y in want if y not in got][:4]))
            else:
                print("verify: %s pid %d: prot of %d made pages equals the maps (%d segments)" % (
                    a.name, pid, made.pages(), len(want)))
        truth_note = ""
        truth_path = a.truth and os.path.join(a.truth, "%s.%d.tsv" % (a.name, pid))
        if truth_path and os.path.exists(truth_path):
            bad, summary, problems = check_truth(truth_path, rp, pid, "dwarf" in a.mode)
            print("verify: %s pid %d: %s" % (a.name, pid, summary))
            for p in problems:
                print("  " + p)
            truth_note = "%s/%s" % (bad and "FAILED" or "OK", summary.split(" truth")[0])
            if bad:
                ok = False
                detail = "truth: %d rows failed" % bad
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
        for call in ("mprotect", "pkey_mprotect", "madvise"):
            ok_n, bad_n = c.get(call, [0, 0])
            row.append("%d/%d" % (ok_n, bad_n) if a.prot else "")
        row.append(os.path.relpath(truth_path, tdir) if truth_note else "")
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
