// ElfBuildId: the GNU build id of an ELF file on disk (its NT_GNU_BUILD_ID
// note), to check that the DAC beside a runtime's path belongs to the
// runtime the target ran. Reads the ELF header, the program headers and the
// PT_NOTE segments only; 64-bit little-endian files (what .NET ships for
// Linux x64 and arm64). "" when the file is not such an ELF file, or has no
// build id.
using System;
using System.IO;
using System.Text;

static class ElfBuildId
{
    const uint PtNote = 4, NtGnuBuildId = 3;

    public static string Read(string path)
    {
        try
        {
            using FileStream f = File.OpenRead(path);
            using BinaryReader r = new(f);
            byte[] ident = r.ReadBytes(16);
            // "\x7fELF", ELFCLASS64, ELFDATA2LSB
            if (ident.Length < 16 || ident[0] != 0x7f || ident[1] != 'E' || ident[2] != 'L' || ident[3] != 'F' ||
                ident[4] != 2 || ident[5] != 1)
                return "";
            f.Position = 0x20;
            long phoff = r.ReadInt64();
            f.Position = 0x36;
            int phentsize = r.ReadUInt16(), phnum = r.ReadUInt16();
            for (int i = 0; i < phnum; ++i)
            {
                f.Position = phoff + (long)i * phentsize;
                uint type = r.ReadUInt32();
                r.ReadUInt32();  // p_flags
                long offset = r.ReadInt64();
                f.Position += 16;  // p_vaddr, p_paddr
                long size = r.ReadInt64();
                if (type != PtNote || offset < 0 || size <= 0 || size > 1 << 20 || offset + size > f.Length)
                    continue;
                f.Position = offset;
                string id = FindInNotes(r.ReadBytes((int)size));
                if (id != "") return id;
            }
        }
        catch (IOException) { }
        catch (UnauthorizedAccessException) { }
        return "";
    }

    // Notes: namesz, descsz, type, name (padded to 4), desc (padded to 4).
    static string FindInNotes(byte[] notes)
    {
        int at = 0;
        while (at + 12 <= notes.Length)
        {
            long namesz = BitConverter.ToUInt32(notes, at), descsz = BitConverter.ToUInt32(notes, at + 4);
            uint type = BitConverter.ToUInt32(notes, at + 8);
            long name = at + 12, desc = name + ((namesz + 3) & ~3L), next = desc + ((descsz + 3) & ~3L);
            if (next > notes.Length) break;
            if (type == NtGnuBuildId && namesz == 4 && Encoding.ASCII.GetString(notes, (int)name, 3) == "GNU")
            {
                var sb = new StringBuilder();
                for (long i = desc; i < desc + descsz; ++i) sb.Append(notes[i].ToString("x2"));
                return sb.ToString();
            }
            at = (int)next;
        }
        return "";
    }
}
