#include "processor/heap/libc_image.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "processor/base/status_macros.h"
#include "processor/heap/dwarf_layout.h"
#include "processor/heap/elf_facts.h"
#include "processor/symbols/build_id.h"

namespace pageblame::heap {
namespace {

const std::set<std::string> kSymbols = {"main_arena", "mp_", "tcache_key"};

// DIR/.build-id/xx/rest.debug of the first directory that has it.
std::string DebugFileFor(const std::string& hex, const std::vector<std::string>& dirs) {
  if (hex.size() < 3) return "";
  for (const std::string& d : dirs) {
    const std::string p = absl::StrCat(d, "/.build-id/", hex.substr(0, 2), "/", hex.substr(2), ".debug");
    if (access(p.c_str(), R_OK) == 0) return p;
  }
  return "";
}

// The NT_GNU_BUILD_ID of the ELF image mapped at `base` in the target, read
// from its memory (a live process; a core holds libc's first segment
// too): "" when it cannot be read.
std::string BuildIdInMemory(const TargetMemory& memory, uint64_t base) {
  TargetMemory& m = const_cast<TargetMemory&>(memory);
  uint8_t ehdr[64];
  if (!m.Read(base, ehdr, sizeof(ehdr)) || std::memcmp(ehdr, "\x7f" "ELF", 4) != 0 || ehdr[4] != 2) return "";
  uint64_t phoff;
  uint16_t phentsize, phnum;
  std::memcpy(&phoff, ehdr + 32, 8);
  std::memcpy(&phentsize, ehdr + 54, 2);
  std::memcpy(&phnum, ehdr + 56, 2);
  if (phentsize != 56 || phnum > 64 || phoff > (1 << 20)) return "";
  for (uint16_t i = 0; i < phnum; ++i) {
    uint8_t ph[56];
    if (!m.Read(base + phoff + i * 56u, ph, sizeof(ph))) return "";
    uint32_t type;
    uint64_t vaddr, size;
    std::memcpy(&type, ph, 4);
    std::memcpy(&vaddr, ph + 16, 8);
    std::memcpy(&size, ph + 32, 8);
    if (type != 4 /* PT_NOTE */ || size > 4096) continue;
    std::string notes(size, '\0');
    if (!m.Read(base + vaddr, notes.data(), size)) continue;
    for (size_t at = 0; at + 12 <= notes.size();) {
      uint32_t namesz, descsz, ntype;
      std::memcpy(&namesz, notes.data() + at, 4);
      std::memcpy(&descsz, notes.data() + at + 4, 4);
      std::memcpy(&ntype, notes.data() + at + 8, 4);
      const size_t name_at = at + 12, desc_at = name_at + ((namesz + 3) & ~3u);
      if (namesz > 64 || descsz > 256 || desc_at + descsz > notes.size()) break;
      if (ntype == 3 /* NT_GNU_BUILD_ID */ && namesz == 4 && notes.compare(name_at, 3, "GNU") == 0)
        return notes.substr(desc_at, descsz);
      at = desc_at + ((descsz + 3) & ~3u);
    }
  }
  return "";
}

void TakeSymbols(const ElfFacts& f, uint64_t bias, LibcImage* l) {
  if (!l->main_arena && f.Symbol("main_arena")) l->main_arena = *f.Symbol("main_arena") + bias;
  if (!l->mp && f.Symbol("mp_")) l->mp = *f.Symbol("mp_") + bias;
  if (!l->tcache_key && f.Symbol("tcache_key")) l->tcache_key = *f.Symbol("tcache_key") + bias;
}

// What a debug file gives: its layout (or why not) and its symbols'
// link-time addresses.
struct DebugFacts {
  absl::StatusOr<GlibcLayout> layout = absl::UnknownError("not read");
  std::optional<uint64_t> main_arena, mp, tcache_key;
};

// The debug file's facts, read once per process: reading its DWARF (libdw,
// inflating compressed sections) costs tens of ms, more than walking a heap
// of large chunks, and `record` walks at every residency snapshot. Keyed by
// the file's identity (device, inode, size, mtime) as well as its path, so
// a replaced file is read again.
DebugFacts ReadDebugFile(const std::string& debug, int major, int minor) {
  struct stat st {};
  const bool known = stat(debug.c_str(), &st) == 0;
  using Key = std::tuple<std::string, int, int, uint64_t, uint64_t, int64_t, int64_t, int64_t>;
  const Key key{debug, major, minor, st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
  static std::mutex mu;
  static std::map<Key, DebugFacts>* cache = new std::map<Key, DebugFacts>;
  if (known) {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache->find(key); it != cache->end()) return it->second;
  }
  DebugFacts f;
  f.layout = DwarfLayout::Read(debug, major, minor);
  if (absl::StatusOr<ElfFacts> df = ElfFacts::Read(debug, kSymbols, {}, false); df.ok()) {
    f.main_arena = df->Symbol("main_arena");
    f.mp = df->Symbol("mp_");
    f.tcache_key = df->Symbol("tcache_key");
  }
  if (known) {
    std::lock_guard<std::mutex> lock(mu);
    if (cache->size() >= 16) cache->clear();  // a handful of libc builds at most
    cache->emplace(key, f);
  }
  return f;
}

}  // namespace

absl::StatusOr<LibcImage> LibcImage::Load(const TargetMemory& memory, const std::string& path, uint64_t base,
                                          const LibcOptions& options) {
  LibcImage l;
  l.path = path;
  ASSIGN_OR_RETURN(ElfFacts libc, ElfFacts::Read(memory.HostPath(path), kSymbols, {}, true));
  l.build_id_hex = symbols::BuildIdToHex(libc.build_id);
  // The file read must be the build the target runs (a core from another
  // machine, a libc upgraded on disk since the process started).
  const std::string mapped = BuildIdInMemory(memory, base);
  if (!mapped.empty() && !libc.build_id.empty() && mapped != libc.build_id)
    return absl::FailedPreconditionError(absl::StrCat(
        memory.HostPath(path), " is build ", l.build_id_hex, ", but the target's libc is build ",
        symbols::BuildIdToHex(mapped), ": its malloc layout and addresses cannot be taken from this file"));
  l.bias = base - libc.first_load;
  int major = 0, minor = 0;
  const bool versioned = ParseGlibcVersion(libc.version, &major, &minor);
  if (options.use_debug_info) TakeSymbols(libc, l.bias, &l);
  const std::string debug = options.use_debug_info ? DebugFileFor(l.build_id_hex, options.debug_dirs) : "";
  if (!debug.empty() && versioned) {
    const DebugFacts d = ReadDebugFile(debug, major, minor);
    if (d.layout.ok()) {
      l.layout = *d.layout;
      l.source = LayoutSource::kDwarf;
      l.layout_from = debug;
    }
    if (!l.main_arena && d.main_arena) l.main_arena = *d.main_arena + l.bias;
    if (!l.mp && d.mp) l.mp = *d.mp + l.bias;
    if (!l.tcache_key && d.tcache_key) l.tcache_key = *d.tcache_key + l.bias;
  }
  if (l.source == LayoutSource::kNone) {
    if (!versioned)
      return absl::NotFoundError(absl::StrCat(path, ": no glibc version banner in it, and no debug file for build id ",
                                              l.build_id_hex, ": its malloc layout is unknown"));
    std::optional<GlibcLayout> t = BuiltinLayout(major, minor);
    if (!t)
      return absl::UnimplementedError(absl::StrCat(path, " is glibc ", libc.version, ": the built-in layouts cover ",
                                                   "2.28 to 2.40 (install its debug file, e.g. libc6-dbg, for others)"));
    l.layout = *t;
    l.source = LayoutSource::kTable;
    l.layout_from = absl::StrCat("built-in table for glibc ", libc.version);
  }
  return l;
}

}  // namespace pageblame::heap
