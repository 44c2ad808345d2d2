#!/usr/bin/env python3
"""make_heap_seeds.py: writes the seeds of the heap_walk and
heap_snapshot_file fuzz targets into corpus/heap_walk/ and
corpus/heap_snapshot_file/ (run from anywhere; the files are checked in).

heap_walk seeds are memory images in heap_walk_fuzzer.cc's input form: a
glibc 2.36 main_arena (its malloc_state, then a brk heap) and a thread arena
(heap_info, malloc_state, chunks), each with a chunk in the unsorted bin, one
in a fastbin, a tcache_perthread_struct listing a tcache'd chunk, and top,
laid out as glibc's malloc.c lays them (processor/heap/heap_test.cc builds
the same heap). heap_snapshot_file seeds: a file of two snapshots.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
STATE_SIZE, BINS, FASTBINS, TOP, NEXT, SYSTEM = 2200, 112, 16, 96, 2160, 2184
KEY = 0x1234567890ABCDEF


def heap_image(arena, heap, first):
    """The malloc_state of `arena` and the bytes of a heap at `heap` whose
    chunks start at `first`: A in use | B unsorted | C in use | D fastbin |
    E tcache struct | F tcache'd | G in use | top."""
    state = bytearray(STATE_SIZE)
    for i in range(1, 128):
        b = arena + BINS + (i - 1) * 16 - 16
        struct.pack_into('<QQ', state, BINS + (i - 1) * 16, b, b)
    sizes = [0x100, 0x2400, 0x40, 0x20, 0x290, 0x30, 0x30]
    at = [first]
    for s in sizes:
        at.append(at[-1] + s)
    A, B, C, D, E, F, G, top = at
    end = top + 0x8000
    mem = bytearray(end - heap)

    def put(addr, v):
        struct.pack_into('<Q', mem, addr - heap, v)

    unsorted = arena + BINS - 16
    struct.pack_into('<QQ', state, BINS, B, B)
    struct.pack_into('<Q', state, FASTBINS, D)
    struct.pack_into('<Q', state, TOP, top)
    struct.pack_into('<Q', state, NEXT, arena)
    struct.pack_into('<Q', state, SYSTEM, end - heap)
    for addr, size, prev_in_use in zip(at, sizes + [0x8000], [1, 1, 0, 1, 1, 1, 1, 1]):
        put(addr + 8, size | prev_in_use)
    put(B + 16, unsorted)
    put(B + 24, unsorted)
    put(D + 16, (D + 16) >> 12)
    struct.pack_into('<H', mem, E + 16 + 2 - heap, 1)
    put(E + 16 + 128 + 8, F + 16)
    put(F + 16, (F + 16) >> 12)
    put(F + 24, KEY)
    return state, mem


def write(dirname, name, data):
    d = os.path.join(HERE, 'corpus', dirname)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), 'wb') as f:
        f.write(data)


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def string(s):
    return varint(len(s)) + s.encode()


def snapshot(pid, time):
    body = bytes([1 | 2 | 4]) + varint(time) + varint(5) + varint(2)
    body += bytes([0, 1]) + varint(1) + string('2.36') + string('/usr/lib/debug/x.debug') + string('')
    body += varint(2) + varint(80 << 20) + varint(0) + varint(8)
    body += varint(1)  # one arena
    body += varint(0x7F0000010000) + bytes([1 | 4])
    for v in (1 << 20, 1 << 19, 1 << 19, 64, 32, 4096, 7, 8192, 4096, 4096, 3, 1, 1, 9, 1, 4):
        body += varint(v)
    body += string('')
    body += varint(2)  # free ranges
    body += varint(0x560000001000 // 16) + varint(3) + varint(0) + bytes([1])
    body += varint(0x1000 // 16 - 3) + varint(0x1000 // 16) + varint(0) + bytes([3])
    return struct.pack('<IIQ', 0x50414548, pid, 16 + len(body)) + body


def main():
    # main_arena in libc's data, a brk heap.
    state, mem = heap_image(0x7F0000010000, 0x560000000000, 0x560000000000)
    write('heap_walk', 'main-2.36', bytes([8, 0]) + bytes(state) + bytes(mem))
    # A thread arena: heap_info (48 bytes: ar_ptr, prev, size, mprotect_size,
    # pagesize, pad), the arena, then chunks from ALIGN_UP(arena + 2200, 16).
    heap = 0x7F0004000000
    arena = heap + 48
    first = (arena + STATE_SIZE + 15) & ~15
    state, mem = heap_image(arena, heap, first)
    mem[48:48 + STATE_SIZE] = state
    struct.pack_into('<QQQQQ', mem, 0, arena, 0, len(mem), len(mem), 4096)
    write('heap_walk', 'thread-2.36', bytes([8, 1]) + bytes(mem))
    header = b'PBHEAP01' + struct.pack('<IiQQ', 1, 1, 0, 0)
    write('heap_snapshot_file', 'two-snapshots', header + snapshot(4242, 123456789) + snapshot(7, 1))


if __name__ == '__main__':
    main()
