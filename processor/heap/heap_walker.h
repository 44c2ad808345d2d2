// HeapWalker: the glibc heap walker's entry point. From a target's memory
// (LiveMemory: a running process, read without stopping it; CoreMemory: an
// ELF core) it finds which allocator serves malloc, glibc's version and
// malloc layouts (libc_image.h), main_arena and mp_, walks every arena
// (arena_walker.h), every thread's tcache (tcache_scanner.h), models
// malloc_trim(0) (trim_model.h), and says how much of the free memory is
// resident. The result is a HeapSnapshot (heap_snapshot.h).
//
//   ASSIGN_OR_RETURN(std::unique_ptr<LiveMemory> m, LiveMemory::Open(pid));
//   HeapWalkOptions o;   // residency from /proc/PID/pagemap for a live process
//   ASSIGN_OR_RETURN(HeapSnapshot s, HeapWalker::Walk(m.get(), o));
//
// A running process changes while it is read. Each attempt reads every
// arena and tcache, then reads the arenas' malloc_state and the tcache
// structs again (the cache dropped) and compares: equal, the walk saw one
// consistent state (as far as the heads of every list and top say); else
// it is retried, up to `attempts` times, and an arena that changed every
// time is marked torn (its figures mix moments). Damage found by a walk of
// a live process is also retried first: it is usually a torn read.
//
// Errors (the status) are for what prevents any answer: libc's file cannot
// be read, its version is unknown, main_arena cannot be found. A foreign
// allocator is not an error: the snapshot names it, with no arenas.
#ifndef PAGEBLAME_HEAP_HEAP_WALKER_H_
#define PAGEBLAME_HEAP_HEAP_WALKER_H_

#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "absl/status/statusor.h"
#include "processor/heap/heap_snapshot.h"
#include "processor/heap/libc_image.h"
#include "processor/heap/target_memory.h"
#include "processor/residency/residency_snapshot.h"

namespace pageblame::heap {

// Libc images already loaded, by (pid, libc path, base): walking the same
// process again skips reading libc's debug file, most of a small heap's
// walk (record walks at every snapshot). Not thread-safe.
using LibcCache = std::map<std::tuple<uint32_t, std::string, uint64_t>, LibcImage>;

struct HeapWalkOptions {
  LibcOptions libc;
  LibcCache* libc_cache = nullptr;  // null: libc is loaded at every walk
  int attempts = 4;
  // A live process: take its residency from /proc/PID/pagemap after the
  // walk, over the arenas' heaps and top chunks only (the pages the figures
  // ask about). Off, or for a core, the resident figures stay unknown
  // unless `residency` is given.
  bool read_pagemap = true;
  const residency::ResidencySnapshot* residency = nullptr;
  uint64_t page_size = 4096;
};

class HeapWalker {
 public:
  static absl::StatusOr<HeapSnapshot> Walk(TargetMemory* memory, const HeapWalkOptions& options);
};

}  // namespace pageblame::heap

#endif  // PAGEBLAME_HEAP_HEAP_WALKER_H_
