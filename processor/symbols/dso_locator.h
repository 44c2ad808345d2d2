// Where the ELF for a DSO path seen in a trace is found on this machine.
//
//   DsoLocator locator({.symfs = "", .debug_dir = "/root/.debug"});
//   DsoLocation loc = locator.Locate("/usr/lib/x86_64-linux-gnu/libc.so.6", build_id);
//   // loc.elf_path:   "/usr/lib/x86_64-linux-gnu/libc.so.6" (or a cache copy)
//   // loc.debug_path: "/usr/lib/debug/.build-id/93/ac61....debug" if installed
//
// Binary, in perf's order (dso__load() in tools/perf/util/symbol.c, with the
// cache layout of tools/perf/util/build-id.c):
//   1. SYMFS + PATH when a symfs is given, else PATH itself;
//   2. the build-id cache: DEBUG_DIR/.build-id/xx/rest/elf (or .../vdso, or
//      the older layout where .build-id/xx/rest is the file itself);
//   3. DEBUG_DIR/PATH/BUILDID/elf (or /vdso);
//   4. BESIDE_DIR/basename(PATH): binaries copied next to the trace, where
//      perf-PID.map files are looked for too (a trace of a program built
//      elsewhere, or recorded with -z, which perf 6.1 writes without build
//      ids, so the cache cannot help). When that directory is one anyone
//      can write, only under the side-file rule (base/side_file_trust.h):
//      its binaries' symbols and CFI would decide the stacks.
// When the trace knows the build id, a candidate whose NT_GNU_BUILD_ID note
// differs is skipped (the file changed since recording), as perf does.
// Separate debug info (preferred for .symtab): SYSTEM_DEBUG_DIR/.build-id/xx/
// rest.debug (SYSTEM_DEBUG_DIR is SYMFS/usr/lib/debug), then the cache's
// .../debug copy; its build id must match too. A PATH ending in " (deleted)"
// is looked up without that suffix.
//
// Locate() touches the file system on every call: callers cache its answer.
#ifndef PAGEBLAME_SYMBOLS_DSO_LOCATOR_H_
#define PAGEBLAME_SYMBOLS_DSO_LOCATOR_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace pageblame::symbols {

struct DsoLocation {
  std::string elf_path;    // "" if no matching binary was found
  std::string debug_path;  // "" if no separate debug file was found
  std::string build_id;    // raw; the trace's, else the one read from elf_path
  int build_id_mismatches = 0;  // candidates that existed but were another build
  // Why the copy beside the trace was not used although it was there: it
  // lies in a directory anyone can write and another user could have
  // written it (base/side_file_trust.h); "" otherwise.
  std::string refused;

  // The pair of files it resolved to, as one string: the key of whatever is
  // loaded from them once (symbol tables, DWARF for inlined frames).
  std::string FilesKey() const { return elf_path + "\n" + debug_path; }
};

class DsoLocator {
 public:
  struct Options {
    std::string symfs;             // perf's --symfs; "" for none
    std::string debug_dir;         // build-id cache root; "" disables it
    std::string system_debug_dir;  // "" means SYMFS + "/usr/lib/debug"
    std::string beside_dir;        // the trace's directory; "" for none
    // -f/--force: a binary beside a trace kept in a directory anyone can
    // write (/tmp) is used whoever owns it; without it, only one owned by
    // root or the user and writable by no one else.
    bool force = false;
  };

  explicit DsoLocator(Options options);

  // `build_id` is raw bytes, "" if the trace did not record one.
  DsoLocation Locate(std::string_view path, std::string_view build_id) const;

  // The file name perf uses in its caches for build id `hex`:
  // DEBUG_DIR/.build-id/<hex[0:2]>/<hex[2:]>.
  static std::string BuildIdLinkPath(std::string_view root, std::string_view hex);

 private:
  // Returns true if `candidate` is a regular file and, when `build_id` is
  // known, carries that build id (counting mismatches in `loc`).
  bool Accept(const std::string& candidate, std::string_view build_id, DsoLocation* loc) const;
  // False (saying why in `loc`) if the copy beside the trace may have been
  // written by another user.
  bool TrustedBeside(const std::string& candidate, DsoLocation* loc) const;

  Options options_;
};

}  // namespace pageblame::symbols

#endif  // PAGEBLAME_SYMBOLS_DSO_LOCATOR_H_
