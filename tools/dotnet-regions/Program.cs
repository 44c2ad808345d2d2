// dotnet-regions: the .NET runtime's own memory ranges in a core dump or a
// live process, read through ClrMD, for `pageblame dotnet-regions` (which
// runs this helper, clips its ranges to the process's mappings and writes the
// table users pass to `pageblame diff` and `attribute`).
//
//   dotnet dotnet-regions.dll --core CORE
//   dotnet dotnet-regions.dll --pid PID     (the process is stopped while read)
//
// Output: one record per line, fields separated by tabs, addresses in hex
// without 0x, END exclusive (the contract processor/regions/clr_helper_output.h
// parses; change both together):
//   pageblame-dotnet-regions 1              first line: the protocol and its version
//   target  core|pid  CORE-or-PID
//   runtime RUNTIME_MODULE  BUILD_ID  DAC  CLRMD_VERSION   (BUILD_ID may be empty)
//   range   START  END  KIND  DETAIL        what the runtime says it owns
//   image   START  END  PATH                an image the runtime loaded, as ClrMD sizes it
//   maps    LINE                            with --pid: /proc/PID/maps, read
//                                           while the process was stopped
//   warning TEXT
//   end     N                               N = the number of range and image lines
// KIND: GCHeap (a GC segment's or region's committed part), GCHeapReserve (its
// reserved rest), or ClrMD's NativeHeapKind (LowFrequencyHeap, LoaderCodeHeap,
// HandleTable, GCBookkeeping, GCFreeRegion, ...). Thread stacks are not
// listed: they are the threads', and a leaking stack is worth seeing. Images
// are those the runtime loaded: the native ELF libraries (the loader maps
// them) and the assemblies the runtime lists; ClrMD names every mapped file
// a module on Linux, so a file the app mapped itself (a MemoryMappedFile of
// its data) would pass for one, and hide the app's own memory as the
// runtime's.
//
// Exit status: 0 listed; 1 the target cannot be read or holds no .NET runtime
// (the message on stderr says which); 2 usage.
//
// Why ClrMD: SOS `!maddress` (the runtime's own table) needs WinDbg or cdb;
// dotnet-dump and lldb cannot run it on Linux. maddress tags the debugger's
// regions with what ClrMD says (dotnet/diagnostics NativeAddressHelper.cs,
// EnumerateClrMemoryAddresses): the same calls as here.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using Microsoft.Diagnostics.Runtime;

static class Program
{
    const int ExitBadInput = 1, ExitUsage = 2;

    static int Main(string[] args)
    {
        if (args.Length != 2 || (args[0] != "--core" && args[0] != "--pid"))
        {
            Console.Error.WriteLine("usage: dotnet-regions (--core CORE | --pid PID)");
            return ExitUsage;
        }
        bool live = args[0] == "--pid";
        string name = live ? $"pid {args[1]}" : args[1];
        int pid = 0;
        if (live && (!int.TryParse(args[1], out pid) || pid <= 0))
        {
            Console.Error.WriteLine($"dotnet-regions: bad pid '{args[1]}'");
            return ExitUsage;
        }
        try
        {
            using DataTarget dt = live ? DataTarget.AttachToProcess(pid, suspend: true)
                                       : DataTarget.LoadDump(args[1]);
            return List(dt, live, name, args[1], pid);
        }
        catch (Exception e)
        {
            Console.Error.WriteLine($"dotnet-regions: {name}: {Explain(e, live)}");
            return ExitBadInput;
        }
    }

    // ClrMD's message, with what to do where the cause is known.
    static string Explain(Exception e, bool live)
    {
        string why = e.Message.Trim();
        if (live && (e is UnauthorizedAccessException || why.Contains("ptrace") || why.Contains("Operation not permitted")))
            why += " (attaching needs the process's user or root, and kernel.yama.ptrace_scope allowing it)";
        return why;
    }

    static int List(DataTarget dt, bool live, string name, string target, int pid)
    {
        var o = Console.Out;
        if (dt.ClrVersions.Length == 0)
        {
            int modules = dt.DataReader.EnumerateModules().Count();
            Console.Error.WriteLine($"dotnet-regions: {name}: no .NET runtime in this " +
                                    $"{(live ? "process" : "dump")} (none of its {modules} modules is " +
                                    "libcoreclr.so or a single-file .NET host)");
            return ExitBadInput;
        }
        var warnings = new List<string>();
        ClrInfo clr = dt.ClrVersions[0];
        if (dt.ClrVersions.Length > 1)
            warnings.Add($"{dt.ClrVersions.Length} .NET runtimes; listing the first, {clr.ModuleInfo.FileName}");
        (ClrRuntime rt, string dac) = CreateRuntime(clr, warnings);
        using (rt)
        {
            o.WriteLine("pageblame-dotnet-regions 1");
            o.WriteLine($"target\t{(live ? "pid" : "core")}\t{Clean(target)}");
            o.WriteLine($"runtime\t{Clean(clr.ModuleInfo.FileName)}\t{Hex(clr.ModuleInfo.BuildId)}\t{Clean(dac)}\t" +
                        $"{typeof(DataTarget).Assembly.GetName().Version}");
            int n = 0;
            // A domain's loader heaps are also every module's: list each range once.
            var seen = new HashSet<(ulong, ulong, string)>();
            foreach (ClrSegment s in rt.Heap.Segments)
            {
                string what = rt.Heap.IsServer ? $"{s.Kind} heap {s.SubHeap.Index}" : $"{s.Kind}";
                n += Range(o, seen, s.CommittedMemory, "GCHeap", what);
                n += Range(o, seen, s.ReservedMemory, "GCHeapReserve", what);
            }
            foreach (ClrNativeHeapInfo h in rt.EnumerateClrNativeHeaps())
            {
                string what = h.GCHeap >= 0 ? $"{h.State} heap {h.GCHeap}" : $"{h.State}";
                n += Range(o, seen, h.MemoryRange, h.Kind.ToString(), what);
            }
            var assemblies = LoadedAssemblies(rt);
            foreach (ModuleInfo m in dt.DataReader.EnumerateModules())
            {
                if (m.ImageSize <= 0 || string.IsNullOrEmpty(m.FileName)) continue;
                if (!LoadedByTheRuntime(dt, m, assemblies)) continue;
                o.WriteLine($"image\t{m.ImageBase:x}\t{m.ImageBase + (ulong)m.ImageSize:x}\t{Clean(m.FileName)}");
                ++n;
            }
            // Read while the process is stopped, so the mappings and the
            // runtime's ranges are of one moment.
            if (live)
                foreach (string line in File.ReadLines($"/proc/{pid}/maps"))
                    o.WriteLine($"maps\t{Clean(line)}");
            foreach (string w in warnings) o.WriteLine($"warning\t{Clean(w)}");
            o.WriteLine($"end\t{n}");
        }
        return 0;
    }

    // The runtime through the DAC beside the target's libcoreclr.so, on this
    // machine. ClrMD's own search finds none on Linux (it reads the runtime's
    // version as 0.0 and downloads nothing), so the match is checked here:
    // the target's runtime and the file at its path must have one build id.
    static (ClrRuntime, string) CreateRuntime(ClrInfo clr, List<string> warnings)
    {
        string runtime = clr.ModuleInfo.FileName;
        string dac = Path.Combine(Path.GetDirectoryName(runtime) ?? "", "libmscordaccore.so");
        if (!File.Exists(dac))
            throw new FileNotFoundException($"no DAC (libmscordaccore.so) beside {runtime} on this machine: " +
                                            "run dotnet-regions where the target's .NET runtime is installed");
        string wanted = Hex(clr.ModuleInfo.BuildId);
        string here = ElfBuildId.Read(runtime);
        if (wanted != "" && here != "" && wanted != here)
            throw new InvalidOperationException(
                $"the target's runtime {runtime} (build id {wanted}) is another build than that file on this " +
                $"machine (build id {here}), so its DAC cannot read the target: run dotnet-regions on the " +
                "machine the dump was taken on, or where that .NET build is installed at the same path");
        if (wanted == "" || here == "")
            warnings.Add($"cannot compare the target's runtime build with {runtime} here (no build id); used {dac}");
        return (clr.CreateRuntime(dac, ignoreMismatch: true), dac);
    }

    // The assemblies the runtime has loaded: their image bases and files.
    static (HashSet<ulong> Bases, HashSet<string> Files) LoadedAssemblies(ClrRuntime rt)
    {
        var bases = new HashSet<ulong>();
        var files = new HashSet<string>(StringComparer.Ordinal);
        foreach (ClrModule m in rt.EnumerateModules())
        {
            if (m.IsDynamic) continue;
            if (m.ImageBase != 0) bases.Add(m.ImageBase);
            if (!string.IsNullOrEmpty(m.Name)) files.Add(m.Name);
        }
        return (bases, files);
    }

    // A native library (ELF: the loader maps those, the runtime's own among
    // them), or an assembly the runtime says it loaded. Anything else is a
    // file the app mapped.
    static bool LoadedByTheRuntime(DataTarget dt, ModuleInfo m, (HashSet<ulong> Bases, HashSet<string> Files) assemblies)
    {
        if (assemblies.Bases.Contains(m.ImageBase) || assemblies.Files.Contains(m.FileName)) return true;
        return m.Kind == ModuleKind.Elf && StartsAsElf(dt, m);
    }

    // ClrMD calls every mapped file that is not a PE file an ELF module on
    // Linux, a data file too: an ELF image begins with its magic, in memory
    // (the loader maps the file's first page), or else (a core without that
    // page) in the file. Unknown either way: ClrMD's word is taken.
    static bool StartsAsElf(DataTarget dt, ModuleInfo m)
    {
        Span<byte> head = stackalloc byte[4];
        if (dt.DataReader.Read(m.ImageBase, head) != head.Length)
        {
            try
            {
                using FileStream f = File.OpenRead(m.FileName);
                if (f.Read(head) != head.Length) return false;
            }
            catch (Exception e) when (e is IOException || e is UnauthorizedAccessException)
            {
                return true;
            }
        }
        return head[0] == 0x7f && head[1] == (byte)'E' && head[2] == (byte)'L' && head[3] == (byte)'F';
    }

    static string Hex(System.Collections.Immutable.ImmutableArray<byte> bytes) =>
        bytes.IsDefaultOrEmpty ? "" : string.Concat(bytes.Select(b => b.ToString("x2")));

    static int Range(TextWriter o, HashSet<(ulong, ulong, string)> seen, MemoryRange r, string kind, string what)
    {
        if (r.End <= r.Start || !seen.Add((r.Start, r.End, kind))) return 0;
        o.WriteLine($"range\t{r.Start:x}\t{r.End:x}\t{kind}\t{Clean(what)}");
        return 1;
    }

    // One field: no tab or line break inside.
    static string Clean(string s) => (s ?? "").Replace('\t', ' ').Replace('\n', ' ').Replace('\r', ' ');
}
