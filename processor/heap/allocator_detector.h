// AllocatorDetector: which allocator serves malloc in the target, and where
// glibc's libc is mapped. The walker walks glibc arenas only when glibc's
// malloc is the one in use; any other allocator is named, never guessed at.
//
//   AllocatorDetector::Found f = AllocatorDetector::Detect(memory);
//   if (f.allocator != Allocator::kGlibc) say(f.note);
//
// The rule (the dynamic linker's: the first object in load order that
// defines malloc wins, and the executable and LD_PRELOAD libraries come
// before libc):
//   - a mapped library named like an allocator — libjemalloc, libtcmalloc
//     (gperftools), libmimalloc — or musl's libc (ld-musl-*, libc.musl-*);
//   - else any mapped ELF other than glibc's libc and ld.so whose dynamic
//     symbols define malloc: jemalloc if it also defines mallctl
//     (je_mallctl), tcmalloc if tc_malloc, mimalloc if mi_malloc, else
//     "unknown" naming the file (a statically linked allocator);
//   - else glibc, if its libc.so.6 (or libc-2.NN.so) is mapped; else
//     "unknown" (a static binary: nothing says which malloc it carries).
// For a core, the files are read from this machine's file system by the
// paths the core names (a file missing there is skipped).
#ifndef PAGEBLAME_HEAP_ALLOCATOR_DETECTOR_H_
#define PAGEBLAME_HEAP_ALLOCATOR_DETECTOR_H_

#include <string>

#include "processor/heap/heap_snapshot.h"
#include "processor/heap/target_memory.h"

namespace pageblame::heap {

class AllocatorDetector {
 public:
  struct Found {
    Allocator allocator = Allocator::kUnknown;
    std::string note;        // why, for the user ("malloc is jemalloc's: /usr/lib/.../libjemalloc.so.2")
    std::string libc_path;   // glibc's libc as the target names it; "" if none
    uint64_t libc_base = 0;  // its lowest mapping
  };
  static Found Detect(const TargetMemory& memory);
  // True for a path naming glibc's libc ("libc.so.6", "libc-2.28.so").
  static bool IsGlibcLibc(const std::string& path);
};

}  // namespace pageblame::heap

#endif  // PAGEBLAME_HEAP_ALLOCATOR_DETECTOR_H_
