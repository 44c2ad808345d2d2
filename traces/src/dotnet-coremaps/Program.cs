// dotnet-coremaps: a small .NET process for traces/make-dotnet-core.sh. It
// allocates 16 MiB of managed arrays (so the GC heap has committed regions),
// writes its pid to the file named by its argument, and sleeps until killed,
// while dotnet-dump collects a core of it.
using System;
using System.Collections.Generic;
using System.IO;
using System.Threading;

var keep = new List<byte[]>();
for (int i = 0; i < 64; i++) keep.Add(new byte[256 * 1024]);
File.WriteAllText(args[0], Environment.ProcessId.ToString());
Thread.Sleep(Timeout.Infinite);
GC.KeepAlive(keep);
