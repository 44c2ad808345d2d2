#!/usr/bin/env python3
"""trim_core.py CORE OUT [--keep-data VADDR]: keeps only what pageblame reads of an ELF core.

Lays CORE (a 64-bit little-endian core, as gcore writes on x86-64) out the
way the kernel writes a core -- ELF header, program headers, notes, then the
segments' data in the same order and spacing as before -- and writes only
the part up to the end of the notes to OUT. So OUT is that core cut short
after its notes: every PT_LOAD keeps its sizes and points at data past the
end of OUT, and the parser must not need segment data. Section headers (gdb
writes some at the end) are dropped: e_shoff, e_shnum, e_shstrndx become 0.
A few KB instead of the whole process's memory.
"""
import struct
import sys

PT_NOTE = 4


def main(src, dst, keep=None):
    data = open(src, 'rb').read()
    if data[:4] != b'\x7fELF' or data[4] != 2 or data[5] != 1:
        sys.exit('trim_core.py: %s is not a 64-bit little-endian ELF file' % src)
    ehdr = bytearray(data[:64])
    e_type, = struct.unpack_from('<H', ehdr, 16)
    e_phoff, = struct.unpack_from('<Q', ehdr, 32)
    e_phentsize, e_phnum = struct.unpack_from('<HH', ehdr, 54)
    if e_type != 4 or e_phentsize != 56 or e_phnum == 0xFFFF:
        sys.exit('trim_core.py: %s: not a core with plain program headers' % src)
    phdrs = [bytearray(data[e_phoff + 56 * i:e_phoff + 56 * (i + 1)]) for i in range(e_phnum)]
    out_phoff = 64
    pos = out_phoff + 56 * e_phnum
    notes = b''
    loads = []
    for p in phdrs:
        p_type, offset = struct.unpack_from('<I4xQ', p, 0)
        if p_type != PT_NOTE:
            loads.append((p, offset))
            continue
        size, = struct.unpack_from('<Q', p, 32)
        struct.pack_into('<Q', p, 8, pos + len(notes))
        notes += data[offset:offset + size]
        notes += b'\0' * (-len(notes) % 4)
    data_start = pos + len(notes)
    kept = b''
    for p, offset in loads:
        vaddr, filesz = struct.unpack_from('<Q', p, 16)[0], struct.unpack_from('<Q', p, 32)[0]
        if keep is not None and vaddr == keep:
            struct.pack_into('<Q', p, 8, data_start)
            kept = data[offset:offset + filesz]
    if keep is not None and not kept:
        sys.exit('trim_core.py: no PT_LOAD with data at 0x%x' % keep)
    rest = [(p, offset) for p, offset in loads if struct.unpack_from('<Q', p, 16)[0] != keep]
    first = min((offset for _, offset in rest), default=0)
    for p, offset in rest:
        struct.pack_into('<Q', p, 8, data_start + len(kept) + offset - first)
    struct.pack_into('<Q', ehdr, 32, out_phoff)
    struct.pack_into('<Q', ehdr, 40, 0)            # e_shoff
    struct.pack_into('<HHH', ehdr, 58, 0, 0, 0)    # e_shentsize, e_shnum, e_shstrndx
    with open(dst, 'wb') as f:
        f.write(bytes(ehdr) + b''.join(bytes(p) for p in phdrs) + notes + kept)


if __name__ == '__main__':
    if len(sys.argv) == 5 and sys.argv[3] == '--keep-data':
        main(sys.argv[1], sys.argv[2], int(sys.argv[4], 16))
    elif len(sys.argv) == 3:
        main(sys.argv[1], sys.argv[2])
    else:
        sys.exit('usage: trim_core.py CORE OUT [--keep-data VADDR]')
