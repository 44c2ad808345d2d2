// dotnet-service — an ASP.NET Core service on 127.0.0.1:PORT, to keep
// `pageblame record -p` attached to (tests/attach_service.sh,
// bench/service_overhead.sh). Its handlers are named methods never inlined,
// so the stacks of their memory calls end in these names:
//
//   GET /work?n=K  Handlers.Work: K rounds of mmap + munmap of 64 KiB (2K memory
//                  calls; P/Invokes into libc, inlined into the method)
//   GET /leak      Handlers.Leak: 256 KiB of NativeMemory.Alloc (malloc maps it), kept
//   GET /view      Handlers.MapView: DATA_FILE mapped through MemoryMappedFile (a
//                  file-backed view the app owns, not the runtime), every page read,
//                  the view kept; answers "START-END" (hex) of the view
//   GET /ping      nothing
//   GET /end       the WAITERS threads started before READY end, as idle
//                  thread-pool workers do after 20 s (perf attached per thread
//                  spun on a core once one had: docs/performance.md)
//
// usage: dotnet dotnet-service.dll PORT DATA_FILE [WAITERS]   (WAITERS default 4)
// Prints "READY <pid> <port>" once it listens; runs until killed.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.IO.MemoryMappedFiles;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;

static unsafe class Handlers
{
    const int Size = 64 << 10;
    const int ProtRw = 3, MapPrivateAnon = 0x22;

    [DllImport("libc", SetLastError = true)]
    static extern IntPtr mmap(IntPtr addr, nuint len, int prot, int flags, int fd, nint off);
    [DllImport("libc", SetLastError = true)]
    static extern int munmap(IntPtr addr, nuint len);

    static readonly object Lock = new();
    static readonly List<IntPtr> Leaked = new();
    static readonly List<MemoryMappedViewAccessor> Views = new();
    public static string DataFile = "";
    public static readonly ManualResetEventSlim EndWaiters = new(false);

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static string Work(int rounds)
    {
        for (int i = 0; i < rounds; ++i)
        {
            IntPtr p = mmap(IntPtr.Zero, Size, ProtRw, MapPrivateAnon, -1, 0);
            if (p == new IntPtr(-1)) throw new InvalidOperationException("mmap failed");
            Marshal.WriteByte(p, 1);
            munmap(p, Size);
        }
        return "ok";
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static string Leak()
    {
        byte* p = (byte*)NativeMemory.Alloc(256 << 10);
        for (int i = 0; i < 256 << 10; i += 4096) p[i] = 1;
        lock (Lock) Leaked.Add((IntPtr)p);
        return ((ulong)p).ToString("x", CultureInfo.InvariantCulture);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static string MapView()
    {
        var file = MemoryMappedFile.CreateFromFile(DataFile, FileMode.Open, null, 0, MemoryMappedFileAccess.Read);
        MemoryMappedViewAccessor view = file.CreateViewAccessor(0, 0, MemoryMappedFileAccess.Read);
        byte* p = null;
        view.SafeMemoryMappedViewHandle.AcquirePointer(ref p);
        ulong length = view.SafeMemoryMappedViewHandle.ByteLength;
        long sum = 0;
        for (ulong i = 0; i < length; i += 4096) sum += p[i];
        lock (Lock) Views.Add(view);
        ulong mapStart = (ulong)p;
        return $"{mapStart:x}-{mapStart + length:x} {sum}";
    }
}

static class Program
{
    static int Main(string[] args)
    {
        if (args.Length < 2)
        {
            Console.Error.WriteLine("usage: dotnet-service PORT DATA_FILE [WAITERS]");
            return 2;
        }
        int port = int.Parse(args[0], CultureInfo.InvariantCulture);
        Handlers.DataFile = args[1];
        int waiters = args.Length > 2 ? int.Parse(args[2], CultureInfo.InvariantCulture) : 4;
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.UseUrls($"http://127.0.0.1:{port}");
        WebApplication app = builder.Build();
        app.MapGet("/work", (int? n) => Handlers.Work(n ?? 1));
        app.MapGet("/leak", () => Handlers.Leak());
        app.MapGet("/view", () => Handlers.MapView());
        app.MapGet("/ping", () => "pong");
        app.MapGet("/end", () =>
        {
            Handlers.EndWaiters.Set();
            return "ended";
        });
        app.Lifetime.ApplicationStarted.Register(() =>
        {
            for (int i = 0; i < waiters; ++i)
                new Thread(() => Handlers.EndWaiters.Wait()) { Name = "waiter", IsBackground = true }.Start();
            Console.WriteLine($"READY {Environment.ProcessId} {port}");
            Console.Out.Flush();
        });
        app.Run();
        return 0;
    }
}
