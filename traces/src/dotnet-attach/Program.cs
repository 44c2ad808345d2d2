// dotnet-attach — a .NET process that keeps making memory, for attaching to
// (tests/dotnet_attach.sh, bench/attach_overhead.sh): every 20 ms a round of
// MapAndUnmap calls (mmap and munmap of 64 KiB: 2 memory calls each) and,
// every 8th round, MapAndKeep (an mmap of 64 KiB that it keeps). mmap and
// munmap are P/Invokes into libc, inlined into the JIT'd methods, so a call's
// first managed frame is the method; every 8th round, four rounds later,
// AllocAndKeep: 256 KiB of NativeMemory.Alloc (malloc's mmap through the
// framework's ReadyToRun code), kept. Both are compiled long before anyone
// attaches: it prints "READY <pid>" after 50 rounds.
//
// usage: dotnet dotnet-attach.dll [SECONDS [CALLS_PER_SECOND [THREAD_EXIT]]]
//   SECONDS (default 300) then it exits; CALLS_PER_SECOND (default 100)
//   memory calls after READY, 0: idle (sleeps, nothing else); THREAD_EXIT
//   (default none): a thread started before READY ends this many seconds
//   after it, as an idle thread-pool worker does (perf 6.1 attached with -p
//   then spins: bench/attach_overhead.sh).
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

static class Program
{
    const int Size = 64 << 10;
    const int ProtRw = 3, MapPrivateAnon = 0x22;

    [DllImport("libc", SetLastError = true)]
    static extern IntPtr mmap(IntPtr addr, nuint len, int prot, int flags, int fd, nint off);
    [DllImport("libc", SetLastError = true)]
    static extern int munmap(IntPtr addr, nuint len);

    static readonly List<IntPtr> Kept = new();

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void MapAndKeep()
    {
        IntPtr p = mmap(IntPtr.Zero, Size, ProtRw, MapPrivateAnon, -1, 0);
        if (p == new IntPtr(-1)) throw new InvalidOperationException("mmap failed");
        Marshal.WriteByte(p, 1);
        Kept.Add(p);
    }

    // Through the framework: NativeMemory.Alloc is ReadyToRun code of
    // System.Private.CoreLib.dll, which only the runtime's jitdump names;
    // 256 KiB is above glibc's mmap threshold, so malloc maps it.
    [MethodImpl(MethodImplOptions.NoInlining)]
    static unsafe void AllocAndKeep()
    {
        byte* p = (byte*)NativeMemory.Alloc(256 << 10);
        p[0] = 1;
        Kept.Add((IntPtr)p);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void MapAndUnmap()
    {
        IntPtr p = mmap(IntPtr.Zero, Size, ProtRw, MapPrivateAnon, -1, 0);
        if (p == new IntPtr(-1)) throw new InvalidOperationException("mmap failed");
        Marshal.WriteByte(p, 1);
        munmap(p, Size);
    }

    static int Main(string[] args)
    {
        double seconds = args.Length > 0 ? double.Parse(args[0]) : 300;
        int rate = args.Length > 1 ? int.Parse(args[1]) : 100;
        int perRound = Math.Max(1, rate / 50 / 2);
        double threadExit = args.Length > 2 ? double.Parse(args[2]) : -1;
        if (threadExit >= 0)
        {
            var waiter = new Thread(() => Thread.Sleep(TimeSpan.FromSeconds(threadExit + 1.2)));
            waiter.Start();  // READY comes after 50 rounds of 20 ms: about 1.2 s
        }
        var sw = Stopwatch.StartNew();
        for (int round = 0; sw.Elapsed.TotalSeconds < seconds; ++round)
        {
            bool warm = round <= 50;
            if (warm || rate > 0)
            {
                if (round % 8 == 0) MapAndKeep();
                if (round % 8 == 4) AllocAndKeep();
                for (int i = 0; i < (warm ? 1 : perRound); ++i) MapAndUnmap();
            }
            if (round == 50)
            {
                Console.WriteLine("READY " + Environment.ProcessId);
                Console.Out.Flush();
            }
            Thread.Sleep(20);
        }
        return 0;
    }
}
