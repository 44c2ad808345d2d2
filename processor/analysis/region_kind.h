// What a region of memory is, in the user's words, from the stacks of the
// calls that made it, its protection, its mmap flags and its path:
//
//   reservation   no access at all (PROT_NONE): address space only, never
//                 counted as committed (a GC's or an arena's reserve, a guard)
//   heap          the brk heap ([heap], or made by brk)
//   thread stack  [stack], MAP_STACK, or made under pthread_create /
//                 allocate_stack (glibc), or a JVM thread's guard pages
//   jit code      .NET's double-mapped executable memory (memfd:doublemapper),
//                 executable anonymous memory, or made by a runtime's code
//                 allocator (HotSpot CodeCache/CodeHeap, V8 CodeRange, .NET
//                 ExecutableAllocator)
//   image         an ELF or PE image: a file named *.so*, *.dll, *.exe, a file
//                 the process maps executable (every mapping of it), the
//                 kernel's [vdso]/[vvar]/[vsyscall], or mapped by ld.so
//                 (_dl_map_*, its zero-filled bss too)
//   file          any other file mapping
//   gc heap       made by a garbage collector: .NET (GCToOSInterface,
//                 virtual_reserve/virtual_commit, gc_heap), HotSpot
//                 (ReservedHeapSpace, Universe::reserve_heap, CollectedHeap,
//                 CardTable, G1*), V8 (Heap, MemoryAllocator, spaces, cppgc);
//                 or a runtime's region table (SOS/ClrMD "GC..." rows) says so
//   malloc        made by the C allocator: glibc's mmap'd chunks (sysmalloc),
//                 its arenas (new_heap/alloc_new_heap, grow_heap), ld.so's
//                 minimal malloc, jemalloc/tcmalloc/mimalloc
//   anon          anything else anonymous
//
// The stack rule looks at the innermost frame that says something (a GC
// that calls malloc made malloc memory), first the committing call's stack,
// then the creating one's. Pure functions of their inputs: unit tests feed
// them stacks taken from real traces.
#ifndef PAGEBLAME_ANALYSIS_REGION_KIND_H_
#define PAGEBLAME_ANALYSIS_REGION_KIND_H_

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "processor/symbols/symbolizer.h"

namespace pageblame::index {
struct Version;
}  // namespace pageblame::index

namespace pageblame::analysis {

enum class RegionKind : uint8_t {
  kThreadStack,
  kMalloc,
  kHeap,
  kFile,
  kImage,
  kJitCode,
  kGcHeap,
  kAnon,
  kReservation,
};
inline constexpr size_t kNumKinds = 9;
inline constexpr std::array<RegionKind, kNumKinds> kAllKinds = {
    RegionKind::kThreadStack, RegionKind::kMalloc, RegionKind::kHeap,
    RegionKind::kFile,        RegionKind::kImage,  RegionKind::kJitCode,
    RegionKind::kGcHeap,      RegionKind::kAnon,   RegionKind::kReservation};

// "thread stack", "malloc", "heap", "file", "image", "jit code", "gc heap",
// "anon", "reservation".
absl::string_view KindName(RegionKind k);
// A kind by its name, with '-' or '_' for the space ("thread-stack"); an
// InvalidArgument error naming the kinds for anything else.
absl::StatusOr<RegionKind> ParseKind(absl::string_view name);
// --kind K[,K]: a set of kinds (each at most once).
absl::StatusOr<std::vector<RegionKind>> ParseKinds(absl::string_view list);

// What a call stack says of the memory its call made: the innermost frame
// that belongs to a thread start, the C allocator, ld.so, a GC or a code
// allocator decides.
enum class StackRole : uint8_t { kNone, kThreadStart, kMalloc, kLoader, kGcHeap, kJitCode };
StackRole RoleOf(const std::vector<symbols::Frame>& frames);

// Everything KindOf looks at for one piece of a region.
struct RegionFacts {
  uint32_t prot = 0;    // PROT_* now
  uint32_t flags = 0;   // MAP_* of the creating call
  absl::string_view path;  // file path, "[heap]", "[stack]", ...; empty if anonymous or unknown
  bool file_backed = false;  // a file mapping even without a known path (mmap of an fd)
  // The process maps this file executable somewhere (its text): then every
  // mapping of it (data, relro) is part of the image.
  bool executable_file = false;
  bool made_by_brk = false;
  StackRole origin = StackRole::kNone;  // the creating call's stack
  StackRole commit = StackRole::kNone;  // the committing call's stack, if any
};
RegionKind KindOf(const RegionFacts& f);

// A row of a runtime's own region table (SOS maddress, ClrMD's list) whose
// usage names the GC's memory ("GCHeap Generation2 committed", "GCBookkeeping").
bool TableSaysGcHeap(absl::string_view usage);

// How the analyses ask for a version's kind (KindClassifier::Function).
using KindFunction = std::function<RegionKind(const index::Version&)>;

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_REGION_KIND_H_
