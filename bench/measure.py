#!/usr/bin/env python3
"""measure.py — runs one command K times under /usr/bin/time and appends a
row of results to a TSV file (used by bench/run.sh; bench/report.py prints it).

  measure.py --tsv FILE --label TOOL --trace T [--runs K] [--timeout S]
             [--stdout PATH] [--note TEXT] -- CMD ARGS...
  measure.py --tsv FILE --plan PLAN [--runs K]
             (every tool of PLAN, round-robin: run 1 of each, then run 2...;
              see read_plan for the format; a tool that is not built gets
              an "n/a" row)

Per run: peak RSS from `/usr/bin/time -f '%e %M'` (GNU time's maximum
resident set size in KiB); wall seconds measured here with a monotonic clock
around the /usr/bin/time process (GNU time's %e has 10 ms resolution, too
coarse for `cat` or a small trace; the clock includes time's own ~1 ms of
fork/exec, and %e is kept in the time_e column as a cross-check); and peak
RssAnon / RssFile sampled from /proc/PID/status every 5 ms while the command
runs. RSS counts the pages of an mmap()ed input file that were touched, so a
zero-copy reader shows the trace size in RSS even when its own memory is
small: RssAnon is the part the program allocated itself (heap, tables). The
sampled peaks can miss a spike shorter than 5 ms.

--mem-limit-mib caps the address space of the command (RLIMIT_AS, inherited
through /usr/bin/time): the machine is shared, and a tool that runs away
must fail alone rather than wake the OOM killer for everybody. Default: half
of MemTotal.

Before each run the trace (--trace, or the plan's TRACE column) is read
once, untimed, so that every run starts with it in the page cache.

Exit status: 0 ok, 3 timed out, 1 the command failed.
The row holds the median of each column over the runs, every run's wall
time, and the exit status of the last run. A run that exceeds --timeout is
killed and the row says so (wall = the timeout, status "timeout").
"""
import argparse
import os
import resource
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

COLUMNS = ["label", "trace", "runs", "wall_s", "time_e", "rss_kib", "anon_kib", "file_kib",
           "walls", "status", "note", "command"]


def child_of(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = f.read().split()
        return int(kids[0]) if kids else None
    except (OSError, ValueError):
        return None


def rss_of(pid):
    anon = file_ = None
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    anon = int(line.split()[1])
                elif line.startswith("RssFile:"):
                    file_ = int(line.split()[1])
    except (OSError, ValueError):
        pass
    return anon, file_


def warm(path):
    """Reads the trace once, untimed, right before each timed run: every tool
    is measured reading from the page cache. Between runs the kernel may page
    a cold file out (on the benchmark machine DAMON's proactive reclaim took
    a quarter of the 596 MB trace out of the cache within 20 s, and the runs
    after a 40 s Python run then read part of it from disk)."""
    if not path or not os.path.isfile(path):
        return
    with open(path, "rb", buffering=0) as f:
        while f.read(8 << 20):
            pass


def half_of_ram_mib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024 // 2
    return 8192


def run_once(cmd, stdout_path, timeout, mem_limit_mib):
    def limit():
        lim = mem_limit_mib << 20
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))

    # stderr goes to a file, not a pipe: a chatty tool must not block on it.
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf, \
            tempfile.TemporaryFile() as errf, open(stdout_path, "wb") as out:
        start = time.monotonic()
        proc = subprocess.Popen(["/usr/bin/time", "-f", "%e %M", "-o", tf.name] + cmd,
                                stdout=out, stderr=errf, start_new_session=True,
                                preexec_fn=limit)
        peak = {"anon": 0, "file": 0}
        done = threading.Event()

        def sample():  # a thread, so the wall clock stops the moment wait() returns
            target = None
            while not done.is_set():
                if target is None:
                    target = child_of(proc.pid)
                if target is not None:
                    anon, file_ = rss_of(target)
                    if anon is not None:
                        peak["anon"] = max(peak["anon"], anon)
                        peak["file"] = max(peak["file"], file_ or 0)
                done.wait(0.005)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        # A blocking wait, with the time limit on a timer: Popen.wait(timeout=)
        # polls with sleeps of up to 50 ms, which rounded every wall time up
        # to the next ~50 ms step (cat of the 596 MB bench trace read 0.066 s
        # instead of ~0.045 s).
        expired = threading.Event()

        def kill():
            expired.set()
            os.killpg(proc.pid, signal.SIGKILL)

        killer = threading.Timer(timeout, kill) if timeout else None
        if killer:
            killer.start()
        proc.wait()
        end = time.monotonic()
        if killer:
            killer.cancel()
        timed_out = expired.is_set()
        done.set()
        sampler.join()
        errf.seek(0)
        err = errf.read().decode(errors="replace")
        if timed_out:
            return {"wall": float(timeout), "time_e": float(timeout), "rss": 0,
                    "anon": peak["anon"], "file": peak["file"], "status": "timeout",
                    "stderr": err}
        fields = tf.read().strip().splitlines()
        # GNU time prints "Command exited with non-zero status N" first on failure.
        last = fields[-1].split() if fields else ["nan", "0"]
        status = "ok" if proc.returncode == 0 else f"exit {proc.returncode}"
        return {"wall": end - start, "time_e": float(last[0]), "rss": int(last[1]),
                "anon": peak["anon"], "file": peak["file"], "status": status, "stderr": err}


class Tool:
    def __init__(self, label, trace, cmd, stdout="/dev/null", timeout=0.0, note="", na=False):
        self.label, self.trace, self.cmd = label, trace, cmd
        self.stdout, self.timeout, self.note, self.na = stdout, timeout, note, na
        self.results = []

    def failed(self):
        return bool(self.results) and self.results[-1]["status"] != "ok"

    def run(self, i, runs, mem_limit_mib):
        warm(self.trace)
        r = run_once(self.cmd, self.stdout, self.timeout, mem_limit_mib)
        self.results.append(r)
        print(f"  {self.label}: run {i + 1}/{runs}: {r['wall']:.3f} s, "
              f"RSS {r['rss'] / 1024:.1f} MiB (anon {r['anon'] / 1024:.1f}), {r['status']}",
              file=sys.stderr)
        if r["status"] != "ok":
            sys.stderr.write("".join("    | " + l + "\n" for l in r["stderr"].splitlines()[-5:]))

    def row(self):
        if self.na:
            return {c: "" for c in COLUMNS} | {"label": self.label, "trace": self.trace,
                                               "runs": "0", "status": "n/a", "note": self.note}
        results = self.results
        ok = [r for r in results if r["status"] == "ok"] or results
        status = results[-1]["status"]
        return {
            "label": self.label,
            "trace": self.trace,
            "runs": str(len(ok)),
            "wall_s": f"{statistics.median(r['wall'] for r in ok):.4f}",
            "time_e": f"{statistics.median(r['time_e'] for r in ok):.2f}",
            "rss_kib": str(int(statistics.median(r["rss"] for r in ok))),
            "anon_kib": str(int(statistics.median(r["anon"] for r in ok))),
            "file_kib": str(int(statistics.median(r["file"] for r in ok))),
            "walls": ",".join(f"{r['wall']:.3f}" for r in results),
            "status": status,
            "note": self.note if status == "ok" else
                    (self.note + " " + last_line(results[-1]["stderr"])).strip(),
            "command": " ".join(self.cmd),
        }


def read_plan(path):
    """One tool a line: LABEL<TAB>TRACE<TAB>NOTE<TAB>STDOUT<TAB>TIMEOUT<TAB>COMMAND,
    the command in shell words (shlex); COMMAND "-" = not built (an n/a row)."""
    tools = []
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            label, trace, note, stdout, timeout, command = line.rstrip("\n").split("\t")
            tools.append(Tool(label, trace, shlex.split(command) if command != "-" else [],
                              stdout or "/dev/null", float(timeout or 0), note,
                              na=command == "-"))
    return tools


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tsv", required=True)
    ap.add_argument("--label")
    ap.add_argument("--trace")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=0)
    ap.add_argument("--stdout", default="/dev/null")
    ap.add_argument("--note", default="")
    ap.add_argument("--mem-limit-mib", type=int, default=half_of_ram_mib())
    ap.add_argument("--plan")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    if a.plan:
        tools = read_plan(a.plan)
    else:
        cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
        tools = [Tool(a.label, a.trace, cmd, a.stdout, a.timeout, a.note)]
    # Round-robin: run i of every tool before run i+1 of any, so a burst of
    # load from elsewhere on the machine hits all tools alike, not one.
    for i in range(a.runs):
        for t in tools:
            if not t.na and not t.failed():  # a failing or timed-out tool is not retried
                t.run(i, a.runs, a.mem_limit_mib)
    for t in tools:
        append_row(a.tsv, t.row())
    if a.plan:
        return 0
    return {"ok": 0, "timeout": 3}.get(tools[0].results[-1]["status"], 1)


def last_line(text):
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    return ("stderr: " + lines[-1][:160]) if lines else ""


def append_row(path, row):
    new = not os.path.exists(path)
    with open(path, "a") as f:
        if new:
            f.write("\t".join(COLUMNS) + "\n")
        f.write("\t".join(row[c].replace("\t", " ") for c in COLUMNS) + "\n")


if __name__ == "__main__":
    sys.exit(main())
