// Lazy symbolization of user-space ips, done only for stacks that are printed.
//
//   auto maps = std::make_shared<MappingHistory>();   // the loader fills it
//   Symbolizer sym(options, maps);
//   // when printing (the history complete):
//   Frame f = sym.Symbolize(pid, time, 0x7f3bad5a09b3);  // {ip, "__mmap", "/usr/lib/.../libc.so.6"}
//
// Where the ELF comes from (perf's order): --symfs DIR + path if --symfs is
// given; else the path itself if it exists and its build id matches (when
// one is known); else the build-id cache (~/.debug/.build-id/xx/rest/elf, or
// ~/.debug/PATH/BUILDID/elf); separate debug info from
// /usr/lib/debug/.build-id/xx/rest.debug is preferred for .symtab when present.
// Symbols come from .symtab and .dynsym (merged; aliases resolved as perf
// does), demangled as perf 6.1 prints them: "ns::Class::method", without the
// parameter list (set demangle_params for full signatures). The mapping in
// effect is the one of `pid` at `time`, following fork and exec (see
// mapping_history.h). JIT frames (ips in no file mapping) come from perf-PID.map, looked for in TRACE.runtime/
// (record's copy), next to the trace file,
// then in /tmp, then in --perf-map-dir, else from jit-PID.dump in the same
// places (jit_dump.h), which also names ReadyToRun code in the mapping of a
// .NET assembly (a PE file, which has no ELF symbols); one in a directory anyone can write
// is read only if no other user could have written it, unless `force`
// (base/side_file_trust.h). Each ELF and each map file is loaded
// once, on first use; each (dso, address) answer is cached. A file that is
// missing is remembered as missing, not looked for again.
//
// Build ids are raw bytes, as perf stores them (perf's 24-byte padded field is
// accepted). Frame::dso is what perf script prints in parentheses: the path
// from the MMAP record, or "/tmp/perf-PID.map" for JIT code (an anonymous or
// [heap]/[stack] mapping, or no mapping at all, named by the perf map) —
// whichever directory the map file was read from. Not thread-safe, except
// Preload() and PrefetchInline(), which another thread may call alongside
// everything else.
#ifndef PAGEBLAME_SYMBOLS_SYMBOLIZER_H_
#define PAGEBLAME_SYMBOLS_SYMBOLIZER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "processor/symbols/dso_locator.h"
#include "processor/symbols/dso_lookup.h"
#include "processor/symbols/mapping_history.h"

namespace pageblame::symbols {

struct Frame {
  uint64_t ip = 0;
  std::optional<std::string> symbol;  // demangled; nullopt if unresolved
  std::string dso;                    // mapping's path, "" if no mapping known
  uint64_t offset = 0;                // ip - symbol start (0 if unresolved)
  // A function inlined at `ip` into the frame that follows it (perf:
  // "inline_big_buffer (inlined)"); offset is 0. SymbolizeInlined only.
  bool inlined = false;
};

struct SymbolizerOptions {
  std::string trace_path;    // perf-PID.map is first looked for beside it
  std::string symfs;         // perf's --symfs: prefix for every DSO path
  std::string perf_map_dir;  // --perf-map-dir, searched after /tmp
  // Where the JITs write perf-PID.map ("/tmp", as perf looks); a test's own
  // sticky directory in tests.
  std::string tmp_dir = "/tmp";
  // -f/--force: read side files even where another user could have written
  // them (base/side_file_trust.h); without it such a file gets a warning
  // and its frames stay unnamed.
  bool force = false;
  std::string debug_dir;     // build-id cache; "" means $HOME/.debug
  bool demangle_params = false;  // full C++ signatures (perf -v); default: names only, as perf
  // Inlined functions from DWARF above the frame that holds their code
  // (SymbolizeInlined); false: the frame alone, no debug info read.
  bool inline_frames = true;
  // -v: notes too (a jitdump its JIT was still writing, cut in its last
  // record), not only warnings.
  bool verbose = false;
};

// Counters for --verbose: what symbolization cost and what it could not find.
struct SymbolizerStats {
  uint64_t lookups = 0;          // Symbolize() calls
  uint64_t cache_hits = 0;       // answered from the (dso, address) cache
  uint64_t resolved = 0;         // frames that got a symbol
  uint64_t no_mapping = 0;       // ips in no known mapping (and no JIT map entry)
  uint64_t jit_frames = 0;       // frames named by a perf-PID.map
  uint64_t inlined_frames = 0;   // inlined frames found in DWARF (SymbolizeInlined)
  uint64_t debug_info_read = 0;  // files whose DWARF was opened for inline frames
  // Files whose DWARF was not read: compressed sections claiming more than
  // DebugSectionLimit allows ("path: why", one per DSO).
  std::vector<std::string> debug_info_refused;
  uint64_t elfs_loaded = 0;      // ELF files read (binaries and debug files)
  uint64_t debug_files_loaded = 0;  // of which separate debug files
  uint64_t elfs_bad = 0;         // found but unreadable / not ELF
  uint64_t tables_preloaded = 0;  // tables that were ready when first used (Preload)
  uint64_t dsos_missing = 0;     // DSOs (path, build id) with no usable file
  uint64_t build_id_mismatches = 0;  // candidate files skipped: another build
  uint64_t perf_maps_loaded = 0;
  uint64_t perf_maps_missing = 0;   // processes with JIT-looking ips but no map file
  uint64_t jitdumps_loaded = 0;     // jit-PID.dump files read
  uint64_t jitdump_frames = 0;      // frames named by a jitdump (ReadyToRun code, stubs)
  // DSOs that are PE files (.NET assemblies): not ELF, not missing; their
  // ReadyToRun code is named by the jitdump. Recorded paths, first-seen order.
  std::vector<std::string> pe_images;
  std::vector<std::string> missing_dsos;  // the recorded paths, in first-seen order
};

class Symbolizer {
 public:
  // `maps`: the trace's mapping history, filled by its owner (the loader);
  // null: an empty one. The symbolizer only reads it, and only from
  // Symbolize/MappingOf/FrameKey (printing, once it is complete).
  Symbolizer(SymbolizerOptions options, std::shared_ptr<const MappingHistory> maps);
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // The trace's mapping history this symbolizer reads.
  const MappingHistory& mappings() const;

  // Loads ahead the symbol table that a later Symbolize() of an ip in a
  // mapping of `path` (with `build_id`, else the header's) would load, so
  // that printing need not wait for it: the loader's thread does this while
  // the replay thread finishes (trace_loader.cc). Safe to call from one other
  // thread alongside every other call. What is loaded is used as if loaded
  // on first use (stats count it then); a table never used costs only the
  // time and memory of loading it. Does nothing for names with no ELF file
  // behind them (anonymous memory, memfd, "[vdso]"), or a table in use.
  void Preload(std::string_view path, std::string_view build_id);
  // Starts opening the DWARF debug info of the DSO at `path` on a thread of
  // its own, for the inlined frames SymbolizeInlined will look up there
  // (InlinePrefetcher). Thread-safe like Preload; nothing with
  // inline_frames off.
  void PrefetchInline(std::string_view path, std::string_view build_id);
  // How ELF files are looked for with these options (the unwinder finds
  // them the same way).
  static DsoLocator::Options LocatorOptions(const SymbolizerOptions& options);
  // Whether a mapping's name can stand for an ELF file Symbolize would read
  // (not anonymous memory, memfd or a kernel name like "[vdso]").
  static bool MayHaveElf(std::string_view path);

  // The frame for `ip` in `pid` at `time`. Never fails: unknown parts stay empty.
  Frame Symbolize(uint32_t pid, uint64_t time, uint64_t ip);
  // Symbolize's frame for `ip`, after the frames of the functions inlined
  // at that place of its code (innermost first, Frame::inlined), from the
  // DSO's DWARF when it has any. A return address (every frame of a stack
  // but its first) is looked up at ip - 1, inside the call that returns
  // there, as perf and addr2line do. Appends to `out`.
  void SymbolizeInlined(uint32_t pid, uint64_t time, uint64_t ip, bool return_address,
                        std::vector<Frame>* out);
  // What Symbolize(pid, time, ip) depends on besides pid and ip: the mapping
  // holding ip at that time (an identity, null if none). Two calls for the
  // same pid and ip with equal keys answer the same frame; finding the key
  // is a lookup, without symbolizing (for callers that cache answers).
  const void* FrameKey(uint32_t pid, uint64_t time, uint64_t ip);

  // The file mapping that held `ip` in `pid` at `time`, as the trace's
  // MMAP/MMAP2 records told it, with its build id (the record's, else the
  // HEADER_BUILD_ID feature's for its path): what profile formats that carry
  // mappings need (pprof re-symbolizes by build id). nullopt if none did.
  struct Mapping {
    uint64_t start = 0, end = 0, pgoff = 0;
    std::string path;
    std::string build_id;  // raw bytes, "" if unknown
  };
  std::optional<Mapping> MappingOf(uint32_t pid, uint64_t time, uint64_t ip);

  // The PT_LOAD segments of the ELF file behind a mapping of `path`, found as
  // for symbols (symfs, build-id cache); empty if no usable file is found.
  // Replay uses them to know what the kernel mapped of an executable at exec
  // when perf recorded only its code segment.
  struct ImageSegment {
    uint64_t offset, vaddr, filesz, memsz;
    uint32_t prot;  // PROT_* from p_flags
  };
  // `elf32`, if given, is set when the file is a 32-bit (ELFCLASS32) ELF.
  std::vector<ImageSegment> ImageSegments(std::string_view path, std::string_view build_id,
                                          bool* elf32 = nullptr);
  // The files ImageSegments looked for, one per (path, build id), and what
  // it found: the replay's answer depends on them (a 32-bit program, the
  // segments of an image), so a kept replay holds only while they are the
  // same (replay/recording_file.h). Replay thread only, as ImageSegments.
  const std::vector<DsoLookup>& image_lookups() const;

  SymbolizerStats stats() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pageblame::symbols

#endif  // PAGEBLAME_SYMBOLS_SYMBOLIZER_H_
