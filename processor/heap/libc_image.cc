#include "processor/heap/libc_image.h"

#include <unistd.h>

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

void TakeSymbols(const ElfFacts& f, uint64_t bias, LibcImage* l) {
  if (!l->main_arena && f.Symbol("main_arena")) l->main_arena = *f.Symbol("main_arena") + bias;
  if (!l->mp && f.Symbol("mp_")) l->mp = *f.Symbol("mp_") + bias;
  if (!l->tcache_key && f.Symbol("tcache_key")) l->tcache_key = *f.Symbol("tcache_key") + bias;
}

}  // namespace

absl::StatusOr<LibcImage> LibcImage::Load(const TargetMemory& memory, const std::string& path, uint64_t base,
                                          const LibcOptions& options) {
  LibcImage l;
  l.path = path;
  ASSIGN_OR_RETURN(ElfFacts libc, ElfFacts::Read(memory.HostPath(path), kSymbols, {}, true));
  l.build_id_hex = symbols::BuildIdToHex(libc.build_id);
  l.bias = base - libc.first_load;
  int major = 0, minor = 0;
  const bool versioned = ParseGlibcVersion(libc.version, &major, &minor);
  if (options.use_debug_info) TakeSymbols(libc, l.bias, &l);
  const std::string debug = options.use_debug_info ? DebugFileFor(l.build_id_hex, options.debug_dirs) : "";
  if (!debug.empty() && versioned) {
    absl::StatusOr<GlibcLayout> d = DwarfLayout::Read(debug, major, minor);
    if (d.ok()) {
      l.layout = *d;
      l.source = LayoutSource::kDwarf;
      l.layout_from = debug;
    }
    absl::StatusOr<ElfFacts> df = ElfFacts::Read(debug, kSymbols, {}, false);
    if (df.ok()) TakeSymbols(*df, l.bias, &l);
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
