#include "processor/symbols/symbolizer.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "processor/base/text_escape.h"
#include "processor/symbols/absl_compat.h"
#include "processor/symbols/demangle.h"
#include "processor/symbols/directory_of.h"
#include "processor/symbols/dso_locator.h"
#include "processor/symbols/elf_symbol_table.h"
#include "processor/symbols/inline_prefetcher.h"
#include "processor/symbols/inline_resolver.h"
#include "processor/symbols/jit_dump.h"
#include "processor/symbols/perf_map.h"
#include "processor/symbols/mapping_history.h"

namespace pageblame::symbols {
namespace {

// Mappings perf treats as JIT code and names "/tmp/perf-PID.map": anonymous
// memory (is_anon_memory()) and the no-DSO kernel names (is_no_dso_memory()),
// see map__new() in tools/perf/util/map.c. "[anon:NAME]" is a named anonymous
// mapping (PR_SET_VMA_ANON_NAME, Linux 5.17).
bool IsAnonymous(absl::string_view path) {
  return path == "//anon" || absl::StartsWith(path, "/dev/zero") ||
         absl::StartsWith(path, "/anon_hugepage") || absl::StartsWith(path, "[anon:") ||
         path == "[heap]" || absl::StartsWith(path, "[stack") || absl::StartsWith(path, "/SYSV");
}

// memfd-backed code (.NET's W^X double mapping, some JITs): there is no file
// to open, but a perf map may name it.
bool IsMemfd(absl::string_view path) { return absl::StartsWith(path, "/memfd:"); }

// Names that stand for a file we should be able to find (others, like
// "[vsyscall]", have no ELF and are not "missing").
bool ExpectsFile(absl::string_view path) {
  return absl::StartsWith(path, "/") || path == "[vdso]";
}

// A PE file (a .NET assembly: "MZ" first): no ELF to read, its ReadyToRun
// code is named by the runtime's jitdump.
bool IsPeFile(const std::string& path) {
  if (path.empty()) return false;
  std::ifstream f(path, std::ios::binary);
  char magic[2] = {};
  return f.read(magic, 2) && magic[0] == 'M' && magic[1] == 'Z';
}

std::string DefaultDebugDir() {
  // perf's buildid_dir: $PERF_BUILDID_DIR, else $HOME/.debug (tools/perf/util/config.c).
  if (const char* dir = std::getenv("PERF_BUILDID_DIR"); dir != nullptr && *dir) return dir;
  if (const char* home = std::getenv("HOME"); home != nullptr && *home) {
    return absl::StrCat(home, "/.debug");
  }
  return "";
}

}  // namespace

class Symbolizer::Impl {
 public:
  // The table of a DSO by path, with the header's build id if none is given.
  const ElfSymbolTable* TableFor(std::string_view path, std::string_view build_id) {
    const uint32_t id = DsoFor(path, BuildIdOf(path, build_id));
    return dsos_[id];
  }

  Impl(SymbolizerOptions options, std::shared_ptr<const MappingHistory> maps)
      : options_(std::move(options)),
        locator_(Symbolizer::LocatorOptions(options_)),
        maps_(std::move(maps)) {}

  const MappingHistory& maps() const { return *maps_; }
  const SymbolizerStats& stats() const { return stats_; }

  void NoteImageLookup(std::string_view path, std::string_view build_id) {
    const std::string_view id = BuildIdOf(path, build_id);
    if (!image_looked_up_.emplace(std::string(path), std::string(id)).second) return;
    image_lookups_.push_back(DsoLookup::Of(path, id, locator_.Locate(path, id)));
  }
  const std::vector<DsoLookup>& image_lookups() const { return image_lookups_; }

  std::optional<Symbolizer::Mapping> MappingOf(uint32_t pid, uint64_t time, uint64_t ip) {
    const MappingHistory::Mapping* m = maps_->Find(pid, time, ip);
    if (m == nullptr) return std::nullopt;
    return Symbolizer::Mapping{m->start, m->end, m->pgoff, std::string(m->path),
                               std::string(BuildIdOf(m->path, m->build_id))};
  }

  // `build_id`, or if it is empty the HEADER_BUILD_ID feature's for `path`
  // (empty if none). Safe from any thread (MappingHistory::BuildIdOf).
  std::string_view BuildIdOf(std::string_view path, std::string_view build_id) const {
    return maps_->BuildIdOf(path, build_id);
  }

  void Preload(std::string_view path, std::string_view build_id) {
    // The names Symbolize looks up in an ELF file, and only those.
    if (!Symbolizer::MayHaveElf(path)) return;
    // Locate is const: it reads the file system only.
    const DsoLocation loc = locator_.Locate(path, BuildIdOf(path, build_id));
    if (loc.elf_path.empty() && loc.debug_path.empty()) return;
    std::string key = loc.FilesKey();
    {
      std::lock_guard<std::mutex> lock(preload_mu_);
      if (in_use_.contains(key) || preloaded_.contains(key)) return;
    }
    Preloaded p;
    p.table = LoadMerged(loc, &p.counts);
    if (p.table == nullptr) return;  // found again and counted on first use, as before
    std::lock_guard<std::mutex> lock(preload_mu_);
    if (!in_use_.contains(key)) preloaded_.try_emplace(std::move(key), std::move(p));
  }

  void PrefetchInline(std::string_view path, std::string_view build_id) {
    if (!options_.inline_frames || !Symbolizer::MayHaveElf(path)) return;
    prefetcher_.Request(locator_.Locate(path, BuildIdOf(path, build_id)));  // const: reads the file system only
  }

  void SymbolizeInlined(uint32_t pid, uint64_t time, uint64_t ip, bool return_address,
                        std::vector<Frame>* out) {
    Frame frame = Symbolize(pid, time, ip);
    const MappingHistory::Mapping* mapping = maps_->Find(pid, time, ip);
    if (options_.inline_frames && frame.symbol && mapping != nullptr &&
        Symbolizer::MayHaveElf(mapping->path)) {
      const DsoId dso = DsoFor(*mapping);
      const uint64_t at = return_address && ip > mapping->start ? ip - 1 : ip;
      if (const ElfSymbolTable* table = dsos_[dso]; table != nullptr) {
        if (std::optional<uint64_t> vaddr = table->FileOffsetToVaddr(mapping->FileOffset(at))) {
          for (const std::string& name : InlinedNames(dso, *vaddr)) {
            Frame f;
            f.ip = ip;
            f.symbol = name;
            f.dso = frame.dso;
            f.inlined = true;
            out->push_back(std::move(f));
            ++stats_.inlined_frames;
          }
        }
      }
    }
    out->push_back(std::move(frame));
  }

  Frame Symbolize(uint32_t pid, uint64_t time, uint64_t ip) {
    ++stats_.lookups;
    Frame frame;
    frame.ip = ip;
    const MappingHistory::Mapping* mapping = maps_->Find(pid, time, ip);
    if (mapping != nullptr && !IsAnonymous(ToAbsl(mapping->path))) {
      if (IsMemfd(ToAbsl(mapping->path)) && SymbolizeJit(pid, ip, &frame)) return frame;
      frame.dso = std::string(mapping->path);
      const DsoId dso = SymbolizeInFile(*mapping, ip, &frame);
      if (!frame.symbol && pe_images_.contains(dso)) NameFromJitDump(pid, ip, &frame);
      return frame;
    }
    if (SymbolizeJit(pid, ip, &frame)) return frame;
    if (mapping != nullptr) {
      frame.dso = PerfMap::DsoName(pid);  // what perf prints for anonymous code
    } else {
      ++stats_.no_mapping;
    }
    return frame;
  }

 private:
  using DsoId = uint32_t;
  struct CachedSymbol {
    std::optional<std::string> symbol;
    uint64_t offset = 0;
  };

  // Returns the mapping's DSO.
  DsoId SymbolizeInFile(const MappingHistory::Mapping& mapping, uint64_t ip, Frame* frame) {
    const DsoId dso = DsoFor(mapping);
    const uint64_t file_offset = mapping.FileOffset(ip);
    auto [it, inserted] = cache_.try_emplace(std::make_pair(dso, file_offset));
    if (!inserted) {
      ++stats_.cache_hits;
    } else if (const ElfSymbolTable* table = dsos_[dso]; table != nullptr) {
      std::optional<uint64_t> vaddr = table->FileOffsetToVaddr(file_offset);
      const ElfSymbolTable::Symbol* sym = vaddr ? table->Find(*vaddr) : nullptr;
      if (sym != nullptr) {
        it->second.symbol = Demangle(sym->name, options_.demangle_params);
        it->second.offset = *vaddr - sym->start;
      }
    }
    frame->symbol = it->second.symbol;
    frame->offset = it->second.offset;
    if (frame->symbol.has_value()) ++stats_.resolved;
    return dso;
  }

  // Code in no file: the perf map names it, else the jitdump (.NET's stubs
  // when the map has them not).
  bool SymbolizeJit(uint32_t pid, uint64_t ip, Frame* frame) {
    const PerfMap* map = PerfMapFor(pid);
    const PerfMap::Entry* entry = map != nullptr ? map->Find(ip) : nullptr;
    if (entry == nullptr) {
      if (!NameFromJitDump(pid, ip, frame)) return false;
      frame->dso = JitDump::DsoName(pid);
      return true;
    }
    frame->dso = PerfMap::DsoName(pid);
    frame->symbol = entry->name;
    frame->offset = ip - entry->start;
    ++stats_.jit_frames;
    ++stats_.resolved;
    return true;
  }

  // The jitdump's name for `ip` (absolute: a ReadyToRun method in its .dll's
  // mapping, or JIT code); the frame's dso is left as it is.
  bool NameFromJitDump(uint32_t pid, uint64_t ip, Frame* frame) {
    const JitDump* dump = JitDumpFor(pid);
    const PerfMap::Entry* entry = dump != nullptr ? dump->map().Find(ip) : nullptr;
    if (entry == nullptr) return false;
    frame->symbol = entry->name;
    frame->offset = ip - entry->start;
    ++stats_.jitdump_frames;
    ++stats_.resolved;
    return true;
  }

  // The inlined functions at `vaddr` of a DSO, cached per address; the
  // DWARF is opened on first use, once per DSO.
  const std::vector<std::string>& InlinedNames(DsoId dso, uint64_t vaddr) {
    auto [it, inserted] = inline_names_.try_emplace(std::make_pair(dso, vaddr));
    if (!inserted) return it->second;
    auto [r, opened] = inline_resolvers_.try_emplace(dso);
    if (opened) {
      std::string refused;
      std::optional<std::unique_ptr<InlineResolver>> ready =
          prefetcher_.Take(locations_[dso], &refused);
      r->second = ready ? std::move(*ready)
                        : InlineResolver::Open(locations_[dso], options_.demangle_params, &refused);
      if (r->second != nullptr) ++stats_.debug_info_read;
      if (!refused.empty()) stats_.debug_info_refused.push_back(std::move(refused));
    }
    if (r->second != nullptr) it->second = r->second->InlinedAt(vaddr);
    return it->second;
  }

  // The DSO of a mapping: its path and build id (the MMAP2 record's, else the
  // HEADER_BUILD_ID feature's), located and loaded on first use.
  DsoId DsoFor(const MappingHistory::Mapping& mapping) {
    auto [known, inserted] = dso_by_mapping_.try_emplace(&mapping, 0);
    if (!inserted) return known->second;
    known->second = DsoFor(mapping.path, BuildIdOf(mapping.path, mapping.build_id));
    return known->second;
  }

  DsoId DsoFor(std::string_view path, std::string_view build_id) {
    auto key = std::make_pair(std::string(path), std::string(build_id));
    auto [it, inserted] = dso_ids_.try_emplace(std::move(key), DsoId(dsos_.size()));
    if (!inserted) return it->second;
    DsoLocation loc = locator_.Locate(path, build_id);
    stats_.build_id_mismatches += loc.build_id_mismatches;
    // Said once per DSO: the copy beside a trace in /tmp another user could
    // have written (the unwinder skips it as silently: the same locator).
    if (!loc.refused.empty()) {
      // Paths from the trace: escaped (base/text_escape.h), as every
      // warning below.
      std::fprintf(stderr, "pageblame: warning: %s; not used for %s\n", EscapeName(loc.refused).c_str(),
                   EscapeName(path).c_str());
    }
    // A .NET assembly is neither missing nor a bad ELF file: it has no ELF
    // symbols to find.
    const bool pe = IsPeFile(loc.elf_path.empty() ? std::string(path) : loc.elf_path);
    const ElfSymbolTable* table = pe ? nullptr : LoadTable(loc);
    locations_.push_back(loc);
    if (pe) {
      pe_images_.insert(it->second);
      stats_.pe_images.emplace_back(path);
    } else if (table == nullptr && ExpectsFile(ToAbsl(path))) {
      ++stats_.dsos_missing;
      stats_.missing_dsos.emplace_back(path);
    }
    dsos_.push_back(table);
    return it->second;
  }

  // What loading one table read, for the stats.
  struct LoadCounts {
    uint64_t elfs_loaded = 0, debug_files_loaded = 0, elfs_bad = 0;
  };
  void Count(const LoadCounts& c) {
    stats_.elfs_loaded += c.elfs_loaded;
    stats_.debug_files_loaded += c.debug_files_loaded;
    stats_.elfs_bad += c.elfs_bad;
  }

  // The merged table of a binary and its debug file, loaded once per pair of
  // resolved paths (or taken from Preload); nullptr if neither could be read.
  const ElfSymbolTable* LoadTable(const DsoLocation& loc) {
    if (loc.elf_path.empty() && loc.debug_path.empty()) return nullptr;
    std::string key = loc.FilesKey();
    auto [it, inserted] = tables_.try_emplace(key);
    if (!inserted) return it->second.get();
    {
      std::lock_guard<std::mutex> lock(preload_mu_);
      in_use_.insert(key);  // Preload leaves it alone from now on
      if (auto p = preloaded_.find(key); p != preloaded_.end()) {
        Count(p->second.counts);
        ++stats_.tables_preloaded;
        it->second = std::move(p->second.table);
        preloaded_.erase(p);
        return it->second.get();
      }
    }
    LoadCounts counts;
    it->second = LoadMerged(loc, &counts);
    Count(counts);
    return it->second.get();
  }

  // Touches nothing of this object but `counts`: Preload calls it from
  // another thread.
  static std::unique_ptr<ElfSymbolTable> LoadMerged(const DsoLocation& loc, LoadCounts* counts) {
    std::unique_ptr<ElfSymbolTable> binary = Load(loc.elf_path, /*debug=*/false, counts);
    std::unique_ptr<ElfSymbolTable> debug = Load(loc.debug_path, /*debug=*/true, counts);
    if (binary != nullptr && debug != nullptr) {
      // The binary's program headers (real file offsets), everybody's symbols.
      binary->MergeSymbolsFrom(*debug);
      return binary;
    }
    return binary != nullptr ? std::move(binary) : std::move(debug);
  }

  static std::unique_ptr<ElfSymbolTable> Load(const std::string& path, bool debug,
                                               LoadCounts* counts) {
    if (path.empty()) return nullptr;
    absl::StatusOr<std::unique_ptr<ElfSymbolTable>> table = ElfSymbolTable::Load(path);
    if (!table.ok()) {
      ++counts->elfs_bad;
      return nullptr;
    }
    ++counts->elfs_loaded;
    if (debug) ++counts->debug_files_loaded;
    return *std::move(table);
  }

  const PerfMap* PerfMapFor(uint32_t pid) {
    auto [it, inserted] = perf_maps_.try_emplace(pid);
    if (!inserted) return it->second.get();
    for (const std::string& path :
         PerfMap::CandidatePaths(pid, options_.trace_path, options_.tmp_dir, options_.perf_map_dir)) {
      absl::StatusOr<PerfMap> map = PerfMap::Load(path, options_.force);
      // A file that is there but cannot be a map (a directory, a FIFO, a
      // link to /dev/zero), or that another user may have written: said
      // once, and the next candidate is tried.
      if (!map.ok() && !absl::IsNotFound(map.status())) {
        std::fprintf(stderr, "pageblame: warning: %s; its JIT frames stay unnamed\n",
                     EscapeName(std::string(map.status().message())).c_str());
      }
      if (map.ok()) {
        ++stats_.perf_maps_loaded;
        it->second = std::make_unique<PerfMap>(*std::move(map));
        return it->second.get();
      }
    }
    ++stats_.perf_maps_missing;
    return nullptr;
  }

  // The jitdump of `pid`, loaded on first use from PerfMap's places; one
  // that cannot be used (another process's, no jitdump, untrusted) or is
  // cut short is said once.
  const JitDump* JitDumpFor(uint32_t pid) {
    auto [it, inserted] = jit_dumps_.try_emplace(pid);
    if (!inserted) return it->second.get();
    for (const std::string& path :
         JitDump::CandidatePaths(pid, options_.trace_path, options_.tmp_dir, options_.perf_map_dir)) {
      absl::StatusOr<JitDump> dump = JitDump::Load(path, pid, options_.force);
      if (!dump.ok() && !absl::IsNotFound(dump.status())) {
        std::fprintf(stderr, "pageblame: warning: %s; not used to name frames\n",
                     EscapeName(std::string(dump.status().message())).c_str());
      }
      if (dump.ok()) {
        if (!dump->warning().empty()) {
          std::fprintf(stderr, "pageblame: warning: %s\n", EscapeName(dump->warning()).c_str());
        }
        if (options_.verbose && !dump->cut_note().empty()) {
          std::fprintf(stderr, "pageblame: note: %s\n", EscapeName(dump->cut_note()).c_str());
        }
        ++stats_.jitdumps_loaded;
        it->second = std::make_unique<JitDump>(*std::move(dump));
        return it->second.get();
      }
    }
    return nullptr;
  }

  SymbolizerOptions options_;
  DsoLocator locator_;
  absl::flat_hash_set<std::pair<std::string, std::string>> image_looked_up_;
  std::vector<DsoLookup> image_lookups_;
  std::shared_ptr<const MappingHistory> maps_;  // never null
  absl::flat_hash_map<std::pair<std::string, std::string>, DsoId> dso_ids_;
  // Mapping pointers are stable (MappingHistory); saves building the key per frame.
  absl::flat_hash_map<const MappingHistory::Mapping*, DsoId> dso_by_mapping_;
  std::vector<const ElfSymbolTable*> dsos_;  // by DsoId; nullptr: no usable file
  std::vector<DsoLocation> locations_;        // by DsoId
  absl::flat_hash_map<DsoId, std::unique_ptr<InlineResolver>> inline_resolvers_;  // null: no DWARF
  absl::flat_hash_map<std::pair<DsoId, uint64_t>, std::vector<std::string>> inline_names_;
  absl::flat_hash_map<std::string, std::unique_ptr<ElfSymbolTable>> tables_;
  absl::flat_hash_map<std::pair<DsoId, uint64_t>, CachedSymbol> cache_;  // (dso, file offset)
  absl::flat_hash_map<uint32_t, std::unique_ptr<PerfMap>> perf_maps_;  // nullptr: missing
  absl::flat_hash_map<uint32_t, std::unique_ptr<JitDump>> jit_dumps_;  // nullptr: none usable
  absl::flat_hash_set<DsoId> pe_images_;  // DSOs that are .NET assemblies (no ELF)
  SymbolizerStats stats_;
  // Tables loaded ahead by Preload (from another thread), until LoadTable
  // takes them, and the keys LoadTable has handled (Preload skips those).
  struct Preloaded {
    std::unique_ptr<ElfSymbolTable> table;
    LoadCounts counts;
  };
  std::mutex preload_mu_;
  absl::flat_hash_map<std::string, Preloaded> preloaded_;
  absl::flat_hash_set<std::string> in_use_;
  // Last: its thread, which reads nothing else of this object, stops first.
  InlinePrefetcher prefetcher_{options_.demangle_params};
};

Symbolizer::Symbolizer(SymbolizerOptions options, std::shared_ptr<const MappingHistory> maps)
    : impl_(std::make_unique<Impl>(std::move(options),
                                   maps ? std::move(maps) : std::make_shared<MappingHistory>())) {}

Symbolizer::~Symbolizer() = default;

const MappingHistory& Symbolizer::mappings() const { return impl_->maps(); }

void Symbolizer::SymbolizeInlined(uint32_t pid, uint64_t time, uint64_t ip, bool return_address,
                                  std::vector<Frame>* out) {
  impl_->SymbolizeInlined(pid, time, ip, return_address, out);
}

Frame Symbolizer::Symbolize(uint32_t pid, uint64_t time, uint64_t ip) {
  return impl_->Symbolize(pid, time, ip);
}

const void* Symbolizer::FrameKey(uint32_t pid, uint64_t time, uint64_t ip) {
  // Symbolize's answer is a function of pid (its perf map), ip and this
  // mapping (its file, offset and build id); MappingHistory keeps mappings at
  // fixed addresses for its whole life.
  return impl_->maps().Find(pid, time, ip);
}

std::optional<Symbolizer::Mapping> Symbolizer::MappingOf(uint32_t pid, uint64_t time, uint64_t ip) {
  return impl_->MappingOf(pid, time, ip);
}

DsoLocator::Options Symbolizer::LocatorOptions(const SymbolizerOptions& options) {
  return DsoLocator::Options{
      options.symfs, options.debug_dir.empty() ? DefaultDebugDir() : options.debug_dir,
      /*system_debug_dir=*/"",
      /*beside_dir=*/options.trace_path.empty() || options.trace_path == "-"
          ? ""
          : DirectoryOf(options.trace_path),
      options.force};
}

bool Symbolizer::MayHaveElf(std::string_view path) {
  const absl::string_view p = ToAbsl(path);
  return absl::StartsWith(p, "/") && !IsAnonymous(p) && !IsMemfd(p);
}

void Symbolizer::PrefetchInline(std::string_view path, std::string_view build_id) {
  impl_->PrefetchInline(path, build_id);
}

void Symbolizer::Preload(std::string_view path, std::string_view build_id) {
  impl_->Preload(path, build_id);
}

SymbolizerStats Symbolizer::stats() const { return impl_->stats(); }

const std::vector<DsoLookup>& Symbolizer::image_lookups() const { return impl_->image_lookups(); }

std::vector<Symbolizer::ImageSegment> Symbolizer::ImageSegments(std::string_view path,
                                                                std::string_view build_id,
                                                                bool* elf32) {
  std::vector<ImageSegment> out;
  impl_->NoteImageLookup(path, build_id);
  const ElfSymbolTable* table = impl_->TableFor(path, build_id);
  if (table == nullptr) return out;
  if (elf32 != nullptr) *elf32 = table->is_32bit();
  for (const ElfSymbolTable::Segment& s : table->segments()) {
    // p_flags bits (PF_X=1, PF_W=2, PF_R=4) to PROT_* (READ=1, WRITE=2, EXEC=4).
    uint32_t prot = ((s.flags & 4) ? 1 : 0) | ((s.flags & 2) ? 2 : 0) | ((s.flags & 1) ? 4 : 0);
    out.push_back(ImageSegment{s.offset, s.vaddr, s.filesz, s.memsz, prot});
  }
  return out;
}

}  // namespace pageblame::symbols
