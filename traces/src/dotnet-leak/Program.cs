// dotnet-leak — a .NET process whose memory grows through the paths users of
// pageblame meet, each from a named method that is never inlined, so that the
// creating call stacks of its pages end in these names:
//
//   LeakNativeMemory       NativeMemory.Alloc of large blocks (malloc -> mmap in glibc)
//   LeakHGlobal            Marshal.AllocHGlobal of large blocks (the same path on Unix)
//   LeakMemoryMappedFile   a MemoryMappedFile (no name, no file) and a view of it
//   ChurnManagedHeap       garbage, then an aggressive GC: the GC decommits
//   GrowManagedHeap        live managed arrays (SOH and LOH): the GC commits
//   LeakNativeMmap         P/Invoke into libleaknative.so, which calls mmap itself
//   LeakNativeReserveCommit  the same library: mmap PROT_NONE, then mprotect RW
//   BurstNativeMemory      a request handler's buffer, on a thread of its own: Marshal.AllocHGlobal
//                          of 8 MiB, filled, freed, 8 times. The first block is mmapped; its free
//                          raises glibc's dynamic mmap threshold, so the later ones come from the
//                          thread's arena, and glibc keeps that memory when they are freed (free
//                          held by glibc: what users take for a leak)
//   KeepNativeMemory       NativeMemory.Alloc of 1 MiB blocks, kept, on another thread: under
//                          the raised threshold, so in that thread's arena (a leak inside an arena)
// The last two run after the others (whose 3-4 MiB blocks must still be
// mmapped) and their threads stay alive until the release (a thread that
// ends hands its arena to the next new thread).
//
// usage: dotnet dotnet-leak.dll OUTDIR NAME
// Writes OUTDIR/NAME.truth.tsv (which method got which addresses, and the
// /proc/self/maps line around each), OUTDIR/NAME.heap.tsv (the same for the
// burst's blocks, freed, and the kept 1 MiB blocks), OUTDIR/NAME.malloc_info.xml
// (glibc's malloc_info, written without a malloc as its last act on the heap:
// the FILE was opened at the start), then OUTDIR/NAME.ready (its pid) and the
// line "READY <pid>" on stdout, and waits until OUTDIR/NAME.release exists
// (at most 600 s). Markers in the trace: madvise(id << 12, 0, MADV_NORMAL)
// with id 0x1 at the start, 0x2 just before "ready", 0x3 after the release.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.IO.MemoryMappedFiles;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;

static unsafe class Program
{
    const int MiB = 1 << 20;

    [DllImport("leaknative")] static extern IntPtr leak_native_mmap(nuint len);
    [DllImport("leaknative")] static extern IntPtr leak_native_reserve_commit(nuint reserve, nuint commit);
    [DllImport("leaknative")] static extern int leak_native_marker(nuint id);
    [DllImport("leaknative")] static extern int leak_native_info_open(byte* path);
    [DllImport("leaknative")] static extern int leak_native_info_write();

    // What the truth file lists: one row per range a method got.
    record struct Range(string Method, string What, ulong Start, ulong End);
    static readonly List<Range> Truth = new();
    static readonly List<Range> HeapTruth = new();
    // Set at the release: the burst and keep threads wait for it.
    static readonly ManualResetEventSlim Released = new(false);

    // Kept alive until exit: the leak.
    static readonly List<IntPtr> NativeBlocks = new();
    static readonly List<byte[]> LiveArrays = new();
    static readonly List<byte[]> LargeArrays = new();
    static MemoryMappedFile Mmf;
    static MemoryMappedViewAccessor View;

    static int Main(string[] args)
    {
        if (args.Length != 2)
        {
            Console.Error.WriteLine("usage: dotnet-leak OUTDIR NAME");
            return 2;
        }
        string outdir = args[0], name = args[1];
        int pid = Environment.ProcessId;
        leak_native_marker(0x1);
        byte[] infoPath = Encoding.UTF8.GetBytes(Path.Combine(outdir, name + ".malloc_info.xml") + "\0");
        fixed (byte* p = infoPath)
        {
            if (leak_native_info_open(p) != 0) throw new IOException("cannot open the malloc_info file");
        }

        LeakNativeMemory(8, 4 * MiB);
        LeakHGlobal(6, 3 * MiB);
        LeakMemoryMappedFile(16 * MiB);
        ChurnManagedHeap(192 * MiB);
        GrowManagedHeap(48 * MiB, 32 * MiB);
        LeakNativeMmap(24 * MiB);
        LeakNativeReserveCommit(64 * MiB, 8 * MiB);
        OnThreadOfItsOwn("burst", () => BurstNativeMemory(8, 8 * MiB));
        OnThreadOfItsOwn("keep", () => KeepNativeMemory(16, MiB));

        RecordManagedTruth();
        WriteTruth(Path.Combine(outdir, name + ".truth.tsv"), pid, Truth);
        WriteTruth(Path.Combine(outdir, name + ".heap.tsv"), pid, HeapTruth);
        if (leak_native_info_write() != 0) throw new IOException("malloc_info failed");
        leak_native_marker(0x2);
        File.WriteAllText(Path.Combine(outdir, name + ".ready"), pid + "\n");
        Console.WriteLine("READY " + pid);
        Console.Out.Flush();

        string release = Path.Combine(outdir, name + ".release");
        var sw = Stopwatch.StartNew();
        while (!File.Exists(release) && sw.Elapsed < TimeSpan.FromSeconds(600))
            Thread.Sleep(100);
        leak_native_marker(0x3);
        Released.Set();
        GC.KeepAlive(View);
        GC.KeepAlive(Mmf);
        return File.Exists(release) ? 0 : 1;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void LeakNativeMemory(int count, int size)
    {
        for (int i = 0; i < count; i++)
        {
            void* p = NativeMemory.Alloc((nuint)size);
            new Span<byte>(p, size).Fill(0x11);
            NativeBlocks.Add((IntPtr)p);
            Add("LeakNativeMemory", "NativeMemory.Alloc", (ulong)p, size);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void LeakHGlobal(int count, int size)
    {
        for (int i = 0; i < count; i++)
        {
            IntPtr p = Marshal.AllocHGlobal(size);
            new Span<byte>((void*)p, size).Fill(0x22);
            NativeBlocks.Add(p);
            Add("LeakHGlobal", "Marshal.AllocHGlobal", (ulong)p, size);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void LeakMemoryMappedFile(int size)
    {
        Mmf = MemoryMappedFile.CreateNew(null, size);
        View = Mmf.CreateViewAccessor(0, size);
        byte* p = null;
        View.SafeMemoryMappedViewHandle.AcquirePointer(ref p);
        p += View.PointerOffset;
        new Span<byte>(p, size).Fill(0x33);
        Add("LeakMemoryMappedFile", "MemoryMappedViewAccessor", (ulong)p, size);
    }

    // Garbage the GC must commit memory for, then an aggressive full GC that
    // compacts and gives the free regions back (decommit).
    [MethodImpl(MethodImplOptions.NoInlining)]
    static void ChurnManagedHeap(int bytes)
    {
        var keep = new List<byte[]>();
        for (int done = 0; done < bytes; done += 64 * 1024)
        {
            keep.Add(new byte[64 * 1024]);
            if (keep.Count == 256) keep.Clear();
        }
        keep.Clear();
        GC.Collect(2, GCCollectionMode.Aggressive, blocking: true, compacting: true);
        GC.WaitForPendingFinalizers();
    }

    // Live arrays: small ones (the small object heap, gen0 regions that the GC
    // commits as they fill) and 1 MiB ones (the large object heap).
    [MethodImpl(MethodImplOptions.NoInlining)]
    static void GrowManagedHeap(int smallBytes, int largeBytes)
    {
        for (int done = 0; done < smallBytes; done += 8 * 1024)
        {
            var a = new byte[8 * 1024 - 24];
            a.AsSpan().Fill(0x44);
            LiveArrays.Add(a);
        }
        for (int done = 0; done < largeBytes; done += MiB)
        {
            var a = new byte[MiB];
            a.AsSpan().Fill(0x55);
            LargeArrays.Add(a);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void LeakNativeMmap(int size)
    {
        IntPtr p = leak_native_mmap((nuint)size);
        if (p == IntPtr.Zero) throw new OutOfMemoryException("leak_native_mmap");
        NativeBlocks.Add(p);
        Add("LeakNativeMmap", "leak_native_mmap", (ulong)p, size);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void LeakNativeReserveCommit(int reserve, int commit)
    {
        IntPtr p = leak_native_reserve_commit((nuint)reserve, (nuint)commit);
        if (p == IntPtr.Zero) throw new OutOfMemoryException("leak_native_reserve_commit");
        NativeBlocks.Add(p);
        Add("LeakNativeReserveCommit", "leak_native_reserve_commit (committed part)", (ulong)p, commit);
        Add("LeakNativeReserveCommit", "leak_native_reserve_commit (reserved part)", (ulong)p + (ulong)commit, reserve - commit);
    }

    // Runs work on a new thread, waits until it is done; the thread then
    // waits for the release, keeping its arena.
    static void OnThreadOfItsOwn(string name, Action work)
    {
        var done = new ManualResetEventSlim(false);
        var t = new Thread(() => { work(); done.Set(); Released.Wait(); }) { IsBackground = true, Name = name };
        t.Start();
        done.Wait();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void BurstNativeMemory(int requests, int size)
    {
        for (int i = 0; i < requests; i++)
        {
            IntPtr p = Marshal.AllocHGlobal(size);
            new Span<byte>((void*)p, size).Fill(0x66);
            HeapTruth.Add(new Range("BurstNativeMemory", $"Marshal.AllocHGlobal, freed (request {i})",
                                    (ulong)p, (ulong)p + (ulong)size));
            Marshal.FreeHGlobal(p);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void KeepNativeMemory(int count, int size)
    {
        for (int i = 0; i < count; i++)
        {
            void* p = NativeMemory.Alloc((nuint)size);
            new Span<byte>(p, size).Fill(0x77);
            NativeBlocks.Add((IntPtr)p);
            HeapTruth.Add(new Range("KeepNativeMemory", "NativeMemory.Alloc, kept", (ulong)p, (ulong)p + (ulong)size));
        }
    }

    // The managed arrays' data, taken last (the GC may have moved small ones
    // before); adjacent arrays are merged into one range.
    [MethodImpl(MethodImplOptions.NoInlining)]
    static void RecordManagedTruth()
    {
        AddArrays("GrowManagedHeap", "byte[8168] (small object heap)", LiveArrays);
        AddArrays("GrowManagedHeap", "byte[1048576] (large object heap)", LargeArrays);
    }

    static void AddArrays(string method, string what, List<byte[]> arrays)
    {
        var ranges = new List<(ulong, ulong)>();
        foreach (var a in arrays)
        {
            fixed (byte* p = a)
            {
                // The object: method table pointer and length before the data.
                ulong start = (ulong)p - 16, end = (ulong)p + (ulong)a.Length;
                ranges.Add((start, end));
            }
        }
        ranges.Sort();
        ulong s = 0, e = 0;
        int n = 0;
        foreach (var (rs, re) in ranges)
        {
            // A gap under 64 bytes is alignment padding (LOH objects are 8-byte
            // aligned and follow each other 40 bytes apart here).
            if (n > 0 && rs <= e + 64) { e = Math.Max(e, re); n++; continue; }
            if (n > 0) Truth.Add(new Range(method, $"{what} x{n}", s, e));
            (s, e, n) = (rs, re, 1);
        }
        if (n > 0) Truth.Add(new Range(method, $"{what} x{n}", s, e));
    }

    static void Add(string method, string what, ulong start, int size) =>
        Truth.Add(new Range(method, what, start, start + (ulong)size));

    // TSV: method, what, start, end (exclusive), bytes, and the
    // /proc/self/maps lines that the range overlaps (';'-separated).
    static void WriteTruth(string path, int pid, List<Range> rows)
    {
        var maps = new List<(ulong, ulong, string)>();
        foreach (var line in File.ReadAllLines("/proc/self/maps"))
        {
            int dash = line.IndexOf('-'), sp = line.IndexOf(' ');
            maps.Add((ulong.Parse(line.AsSpan(0, dash), NumberStyles.HexNumber),
                      ulong.Parse(line.AsSpan(dash + 1, sp - dash - 1), NumberStyles.HexNumber),
                      string.Join(" ", line.Split(' ', StringSplitOptions.RemoveEmptyEntries))));
        }
        var sb = new StringBuilder();
        sb.Append("# dotnet-leak truth, pid ").Append(pid).Append(": which method got which bytes\n");
        sb.Append("method\twhat\tstart\tend\tbytes\tmaps\n");
        foreach (var r in rows)
        {
            var hits = new List<string>();
            foreach (var (ms, me, text) in maps)
                if (ms < r.End && r.Start < me) hits.Add(text);
            sb.Append(r.Method).Append('\t').Append(r.What)
              .Append("\t0x").Append(r.Start.ToString("x"))
              .Append("\t0x").Append(r.End.ToString("x"))
              .Append('\t').Append(r.End - r.Start)
              .Append('\t').Append(string.Join(" ; ", hits)).Append('\n');
        }
        File.WriteAllText(path, sb.ToString());
    }
}
