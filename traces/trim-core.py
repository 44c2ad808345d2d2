#!/usr/bin/env python3
"""trim-core.py CORE OUT — copy an ELF core dump without its memory contents.

Keeps the ELF header, the program headers and the PT_NOTE data (NT_PRSTATUS,
NT_FILE, NT_AUXV, ...) and drops the PT_LOAD data: OUT ends right after the
last of them. The program headers are copied unchanged, so each PT_LOAD still
says which memory range the dump held (p_vaddr, p_memsz, p_flags) and where its
bytes were (p_offset, p_filesz), now past the end of OUT. This is the dump's
region table: what a debugger's `!address` shows of a Linux core.
"""
import struct
import sys

PT_LOAD, PT_NOTE, PN_XNUM = 1, 4, 0xFFFF


def trim(src, dst):
    with open(src, "rb") as f:
        ehdr = f.read(64)
        if ehdr[:4] != b"\x7fELF":
            sys.exit(f"{src}: not an ELF file")
        if ehdr[4] != 2 or ehdr[5] != 1:
            sys.exit(f"{src}: only 64-bit little-endian ELF is handled")
        (e_type,) = struct.unpack_from("<H", ehdr, 16)
        if e_type != 4:
            sys.exit(f"{src}: e_type {e_type} is not ET_CORE")
        e_phoff, e_shoff = struct.unpack_from("<QQ", ehdr, 32)
        e_phentsize, e_phnum, e_shentsize, e_shnum = struct.unpack_from("<HHHH", ehdr, 54)
        if e_phnum == PN_XNUM:
            # More than 65534 program headers: the count is in section 0's sh_info.
            f.seek(e_shoff)
            sh0 = f.read(e_shentsize)
            (e_phnum,) = struct.unpack_from("<I", sh0, 44)
        end = max(64, e_phoff + e_phnum * e_phentsize)
        if e_shoff:
            end = max(end, e_shoff + max(e_shnum, 1) * e_shentsize)
        f.seek(e_phoff)
        phdrs = f.read(e_phnum * e_phentsize)
        loads = notes = 0
        load_bytes = 0
        for i in range(e_phnum):
            p_type, _flags, p_offset, _vaddr, _paddr, p_filesz, p_memsz = struct.unpack_from(
                "<IIQQQQQ", phdrs, i * e_phentsize)
            if p_type == PT_NOTE:
                notes += 1
                end = max(end, p_offset + p_filesz)
            elif p_type == PT_LOAD:
                loads += 1
                load_bytes += p_filesz
        f.seek(0)
        data = f.read(end)
    with open(dst, "wb") as out:
        out.write(data)
    print(f"{dst}: {end} bytes: ELF header, {e_phnum} program headers "
          f"({notes} PT_NOTE kept, {loads} PT_LOAD whose {load_bytes} bytes were dropped)")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: trim-core.py CORE OUT")
    trim(sys.argv[1], sys.argv[2])
