# alloc.py — the CPython trace: large bytearrays and a large list made by the
# Python function make_buffers (usage: /usr/bin/python3 alloc.py MAPSDIR
# TRUTHDIR NAME). CPython 3.11 has no perf trampoline (3.12's -X perf), so the
# Python function never appears in a native stack: the truth file names the
# exported C functions of the interpreter that do appear in the DWARF stacks
# (/usr/bin/python3.11 is stripped: only .dynsym names resolve), and its `what`
# column names make_buffers.
#
# Last acts, as the C programs: TRUTHDIR/NAME.PID.tsv, then
# MAPSDIR/NAME.PID.maps read into a bytearray allocated beforehand (the read
# loop's only allocations are small memoryview slices, from pymalloc pools that
# exist by then) and written with os.write, then os._exit.
import ctypes
import gc
import os
import sys

MB = 1 << 20


def make_buffers():
    # > DEFAULT_MMAP_THRESHOLD_MAX (32 MiB): always malloc's mmap path.
    arrays = [bytearray(48 * MB), bytearray(40 * MB)]
    table = [None] * (6 * MB)  # 48 MiB of item pointers
    return arrays, table


def chunk_range(addr):
    """The mapping of glibc's mmapped chunk holding user pointer addr."""
    prev = ctypes.c_size_t.from_address(addr - 16).value
    size = ctypes.c_size_t.from_address(addr - 8).value
    assert size & 2, "chunk not mmapped"
    return addr - 16 - prev, addr - 16 + (size & ~7)


def main():
    mapsdir, truthdir, name = sys.argv[1:4]
    arrays, table = make_buffers()
    rows = []
    for b in arrays:
        addr = ctypes.addressof((ctypes.c_char * len(b)).from_buffer(b))
        rows.append(chunk_range(addr) + ("PyByteArray_Resize",
                                         "make_buffers: bytearray(%d MiB)" % (len(b) // MB)))
    # PyListObject: ob_refcnt, ob_type, ob_size, ob_item.
    items = ctypes.c_void_p.from_address(id(table) + 24).value
    # list_repeat -> list_new_prealloc -> PyMem_Malloc (a tail call: no frame)
    # -> _PyObject_Malloc -> malloc: the statics are unnamed in the stripped
    # binary, so the first named frame is the eval loop.
    rows.append(chunk_range(items) + ("_PyEval_EvalFrameDefault",
                                      "make_buffers: [None] * 6 Mi (list items)"))
    maps = open("/proc/self/maps").read()
    prots = []
    for s, e, _, _ in rows:
        got = set()
        for line in maps.splitlines():
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            if lo < e and hi > s:
                got.add(line.split()[1][:3])
        assert len(got) == 1, got
        prots.append(got.pop())
    pid = os.getpid()
    with open("%s/%s.%d.tsv.tmp" % (truthdir, name, pid), "w") as f:
        f.write("start\tend\tprot\torigin\tcommit\tvia\twhat\n")
        for (s, e, fn, what), prot in zip(rows, prots):
            f.write("%x\t%x\t%s\t%s\t-\tlibc\t%s\n" % (s, e, prot, fn, what))
    os.rename("%s/%s.%d.tsv.tmp" % (truthdir, name, pid), "%s/%s.%d.tsv" % (truthdir, name, pid))

    # The end-state snapshot: everything allocated first, then read, write, exit.
    gc.disable()
    buf = bytearray(1 << 20)
    path = "%s/%s.%d.maps" % (mapsdir, name, pid)
    tmp = path + ".tmp"
    out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    fd = os.open("/proc/self/maps", os.O_RDONLY)
    whole = memoryview(buf)
    n = 0
    while True:  # /proc/PID/maps gives at most a page per read
        k = os.readv(fd, [whole[n:]])
        if k <= 0:
            break
        n += k
    assert n < len(buf)
    os.write(out, buf)
    os.ftruncate(out, n)
    os.close(out)
    os.close(fd)
    os.rename(tmp, path)
    os._exit(0)


main()
