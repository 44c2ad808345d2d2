// clr-regions — what the .NET runtime in a core dump says it owns, as an
// address range list that `pageblame diff` reads (its "ranges" format):
//
//   7f1b51000000-7f1b51400000  # GCHeap Generation2 committed
//
// usage: dotnet clr-regions.dll CORE [--no-images]
//
// Why: SOS `maddress` (the runtime's own region table) needs WinDbg/cdb; under
// dotnet-dump on Linux it fails ("The memory region service does not exists").
// maddress takes the debugger's region list and tags the parts the runtime
// knows; the tags come from ClrMD (ClrMemoryPointer.EnumerateClrMemoryAddresses
// in dotnet/diagnostics). This prints those runtime-known ranges directly, from
// the same ClrMD calls: the GC's segments/regions (committed part, and the
// reserved rest as GCHeapReserve), the runtime's native heaps (loader heaps,
// stub and precode heaps, code heaps, handle table, GC bookkeeping, free GC
// regions), and, unless --no-images, every module's image range (maddress
// shows those as "Image"). Thread stacks are not listed (maddress names them
// "Stack" from each thread's stack pointer). END is exclusive.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using Microsoft.Diagnostics.Runtime;

static class Program
{
    static int Main(string[] args)
    {
        if (args.Length < 1 || args.Length > 2 || (args.Length == 2 && args[1] != "--no-images"))
        {
            Console.Error.WriteLine("usage: clr-regions CORE [--no-images]");
            return 2;
        }
        bool images = args.Length == 1;
        using DataTarget dt = DataTarget.LoadDump(args[0]);
        if (dt.ClrVersions.Length == 0)
        {
            Console.Error.WriteLine($"clr-regions: {args[0]}: no .NET runtime in this dump");
            return 1;
        }
        ClrInfo clr = dt.ClrVersions[0];
        // The DAC beside the dump's libcoreclr.so (this machine's runtime). The
        // dump's runtime reads its version as 0.0, so the check is turned off.
        string dac = Path.Combine(Path.GetDirectoryName(clr.ModuleInfo.FileName), "libmscordaccore.so");
        using ClrRuntime rt = clr.CreateRuntime(dac, ignoreMismatch: true);

        var rows = new List<(ulong Start, ulong End, string What)>();
        void Add(ulong start, ulong end, string what)
        {
            if (end > start) rows.Add((start, end, what));
        }
        foreach (ClrSegment s in rt.Heap.Segments)
        {
            Add(s.CommittedMemory.Start, s.CommittedMemory.End, $"GCHeap {s.Kind} committed");
            Add(s.ReservedMemory.Start, s.ReservedMemory.End, $"GCHeapReserve {s.Kind}");
        }
        foreach (ClrNativeHeapInfo h in rt.EnumerateClrNativeHeaps())
            Add(h.MemoryRange.Start, h.MemoryRange.End, $"{h.Kind} {h.State}");
        foreach (ClrJitManager jm in rt.EnumerateJitManagers())
            foreach (ClrNativeHeapInfo h in jm.EnumerateNativeHeaps())
                Add(h.MemoryRange.Start, h.MemoryRange.End, $"{h.Kind} {h.State} (JIT manager)");
        if (images)
            foreach (ModuleInfo m in dt.DataReader.EnumerateModules())
                Add(m.ImageBase, m.ImageBase + (ulong)m.ImageSize, $"Image {m.Kind} {m.FileName}");

        Console.WriteLine($"# clr-regions {args[0]}: runtime {clr.ModuleInfo.FileName}, " +
                          $"ClrMD {typeof(DataTarget).Assembly.GetName().Version}");
        Console.WriteLine("# START-END (END exclusive)  # what the runtime says it is");
        foreach (var (start, end, what) in rows.Distinct().OrderBy(r => r.Start).ThenBy(r => r.End))
            Console.WriteLine($"{start:x}-{end:x}  # {what}");
        foreach (var g in rows.Distinct().GroupBy(r => r.What.Split(' ')[0]).OrderBy(g => g.Key))
            Console.WriteLine($"# total {g.Key}: {g.Count()} ranges, {g.Sum(r => (double)(r.End - r.Start)) / (1 << 20):F1} MiB (overlaps counted twice)");
        return 0;
    }
}
