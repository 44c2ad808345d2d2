// Grow.java — the JVM trace: `java -XX:+UseSerialGC -Xms16m -Xmx512m -Xint
// -Xlog:gc+heap+coops=info:file=LOG Grow MAPSDIR TRUTHDIR NAME LOG`. growHeap
// keeps 1 MiB arrays until the heap has grown far past -Xms (HotSpot commits
// each growth with mmap(MAP_FIXED) RW inside its PROT_NONE reservation), then
// the program writes its truth file and /proc/self/maps, and halts at once
// (Runtime.halt: no shutdown hooks, no further VM work).
//
// Truth (truth.h's format): Java cannot see addresses, but the VM logged the
// heap reservation it got ("Heap address: 0x..., size: 512 MB" in LOG, written
// at start-up): one row per /proc/self/maps row inside it, prot from the maps,
// origin = the VM's reserving function, commit = os::commit_memory for the
// committed rows ("-" for the reserved-only ones).
import java.io.FileOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class Grow {
  static final List<byte[]> KEEP = new ArrayList<>();

  static void growHeap() {
    for (int i = 0; i < 160; i++) {
      byte[] b = new byte[1 << 20];
      b[i] = (byte) i;
      KEEP.add(b);
    }
  }

  static final String RESERVE = "ReservedHeapSpace::ReservedHeapSpace";
  static final String COMMIT = "os::commit_memory";

  public static void main(String[] args) throws Exception {
    String mapsdir = args[0], truthdir = args[1], name = args[2], log = args[3];
    growHeap();
    long pid = ProcessHandle.current().pid();
    Matcher m = Pattern.compile("Heap address: 0x([0-9a-f]+), size: (\\d+) MB")
        .matcher(Files.readString(Path.of(log)));
    if (!m.find()) throw new IllegalStateException("no heap address in " + log);
    long base = Long.parseUnsignedLong(m.group(1), 16);
    long end = base + (Long.parseLong(m.group(2)) << 20);
    StringBuilder truth = new StringBuilder("start\tend\tprot\torigin\tcommit\tvia\twhat\n");
    long covered = base;
    for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
      String[] f = line.split("\\s+");
      String[] se = f[0].split("-");
      long s = Long.parseUnsignedLong(se[0], 16), e = Long.parseUnsignedLong(se[1], 16);
      if (e <= base || s >= end) continue;
      if (s < base || e > end || s != covered) throw new IllegalStateException("heap maps: " + line);
      covered = e;
      String prot = f[1].substring(0, 3);
      boolean committed = !prot.equals("---");
      truth.append(String.format("%x\t%x\t%s\t%s\t%s\tlibc\tJava heap (-Xmx512m) %s%n", s, e, prot,
          RESERVE, committed ? COMMIT : "-", committed ? "committed" : "reserved"));
    }
    if (covered != end) throw new IllegalStateException("heap not covered by the maps");
    Path tmp = Path.of(truthdir, name + "." + pid + ".tsv.tmp");
    Files.writeString(tmp, truth);
    Files.move(tmp, Path.of(truthdir, name + "." + pid + ".tsv"));

    // The end state: read and write with what is allocated by now, in 8 KiB
    // pieces (java.io's native readBytes/writeBytes use a stack buffer up to
    // 8 KiB and malloc above it: a 1 MiB read would mmap a buffer during the
    // snapshot and munmap it after), then halt.
    byte[] buf = new byte[1 << 20];
    Path path = Path.of(mapsdir, name + "." + pid + ".maps");
    Path part = Path.of(mapsdir, name + "." + pid + ".maps.tmp");
    try (FileOutputStream out = new FileOutputStream(part.toFile());
         java.io.FileInputStream in = new java.io.FileInputStream("/proc/self/maps")) {
      int n = 0, r;
      while ((r = in.read(buf, n, Math.min(8192, buf.length - n))) > 0) n += r;
      for (int off = 0; off < n; off += 8192) out.write(buf, off, Math.min(8192, n - off));
    }
    Files.move(part, path);
    Runtime.getRuntime().halt(0);
  }
}
