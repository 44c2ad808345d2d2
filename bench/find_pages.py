# find_pages.py — the seed tool's per-event work, as a `perf script` Python
# script, for the benchmark's "Python perf script" row (bench/run.sh):
#
#   FIND_PAGES=0x200000040000,0x200000080000 \
#     perf script -i trace.data -s bench/find_pages.py > out.txt
#
# What it does per event, like the seed's find-specific-memory-allocation.py
# (/work/shared/seeds/perf-script-find-allocation-readme.md): remember each
# thread's sys_enter_{mmap,munmap,brk,mremap} arguments, pair them with the
# same tid's sys_exit, work out the address range the call touched, and if
# any page of the page set lies in it print the event, its parameters, its
# return value and its symbolized call stack. FIND_PAGES empty or unset means
# "every page" (the seed's `memory_pages_to_consider = None`).
#
# perf itself resolves every sample's call chain to symbols before calling a
# handler (tools/perf/util/scripting-engines/trace-event-python.c,
# python_process_callchain), which is most of this script's cost — as it is
# the seed tool's.
from __future__ import print_function

import os
import sys

PAGE = 4096

_pages_env = os.environ.get("FIND_PAGES", "").strip()
memory_pages_to_consider = (
    sorted({int(p, 16) & ~(PAGE - 1) for p in _pages_env.split(",") if p})
    if _pages_env else None)

pending = {}   # tid -> (syscall, args dict)
breaks = {}    # pid -> current program break
matched = 0
pairs = 0


def _tid(perf_sample_dict):
    return perf_sample_dict["sample"]["tid"]


def _touches(start, end):
    if end <= start:
        return False
    if memory_pages_to_consider is None:
        return True
    for page in memory_pages_to_consider:
        if start <= page < end or (page < start < page + PAGE):
            return True
    return False


def _print_stack(callchain):
    for node in callchain:
        if "sym" in node:
            print("\t[%x] %s" % (node["ip"], node["sym"]["name"]))
        else:
            print("\t[%x]" % node["ip"])


def _exit(event_name, secs, nsecs, cpu, pid, comm, callchain, ret, sample):
    global matched, pairs
    tid = _tid(sample)
    entry = pending.pop(tid, None)
    if entry is None:
        return
    pairs += 1
    syscall, args = entry
    ranges = []
    if syscall == "brk":
        old = breaks.get(pid)
        breaks[pid] = ret
        if old is not None and ret != old:
            ranges.append((min(old, ret), max(old, ret)))
    elif ret < 0 and ret > -4096:
        return  # failed: changed nothing
    elif syscall == "mmap":
        ranges.append((ret, ret + args["len"]))
    elif syscall == "munmap":
        ranges.append((args["addr"], args["addr"] + args["len"]))
    elif syscall == "mremap":
        ranges.append((args["addr"], args["addr"] + args["old_len"]))
        ranges.append((ret, ret + args["new_len"]))
    if not any(_touches(s, e) for s, e in ranges):
        return
    matched += 1
    print("%-20s %5u %05u.%09u %8u %-20s" % (event_name, cpu, secs, nsecs, pid, comm))
    print("Parameters: " + ", ".join("%s=%#x" % kv for kv in sorted(args.items())))
    print("ret=%x" % (ret & 0xFFFFFFFFFFFFFFFF))
    _print_stack(callchain)
    print()


def _enter(syscall, sample, args):
    pending[_tid(sample)] = (syscall, args)


def trace_begin():
    pass


def trace_end():
    print("find_pages: %d pairs, %d matched" % (pairs, matched), file=sys.stderr)


def syscalls__sys_enter_mmap(event_name, context, common_cpu, common_secs, common_nsecs,
                             common_pid, common_comm, common_callchain, __syscall_nr,
                             addr, len, prot, flags, fd, off, perf_sample_dict):
    _enter("mmap", perf_sample_dict,
           {"addr": addr, "len": len, "prot": prot, "flags": flags, "fd": fd, "off": off})


def syscalls__sys_exit_mmap(event_name, context, common_cpu, common_secs, common_nsecs,
                            common_pid, common_comm, common_callchain, __syscall_nr, ret,
                            perf_sample_dict):
    _exit(event_name, common_secs, common_nsecs, common_cpu, common_pid, common_comm,
          common_callchain, ret, perf_sample_dict)


def syscalls__sys_enter_munmap(event_name, context, common_cpu, common_secs, common_nsecs,
                               common_pid, common_comm, common_callchain, __syscall_nr,
                               addr, len, perf_sample_dict):
    _enter("munmap", perf_sample_dict, {"addr": addr, "len": len})


def syscalls__sys_enter_brk(event_name, context, common_cpu, common_secs, common_nsecs,
                            common_pid, common_comm, common_callchain, __syscall_nr, brk,
                            perf_sample_dict):
    _enter("brk", perf_sample_dict, {"brk": brk})


def syscalls__sys_enter_mremap(event_name, context, common_cpu, common_secs, common_nsecs,
                               common_pid, common_comm, common_callchain, __syscall_nr,
                               addr, old_len, new_len, flags, new_addr, perf_sample_dict):
    _enter("mremap", perf_sample_dict,
           {"addr": addr, "old_len": old_len, "new_len": new_len, "flags": flags,
            "new_addr": new_addr})


# Every exit is handled alike: perf looks handlers up by name.
syscalls__sys_exit_munmap = syscalls__sys_exit_mmap
syscalls__sys_exit_brk = syscalls__sys_exit_mmap
syscalls__sys_exit_mremap = syscalls__sys_exit_mmap


def trace_unhandled(event_name, context, event_fields_dict, perf_sample_dict):
    pass  # raw_syscalls:* (perf trace record adds them): the seed ignores them too
