#include "processor/analysis/region_kind.h"

#include <sys/mman.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "processor/analysis/app_frames.h"

namespace pageblame::analysis {
namespace {

constexpr std::array<absl::string_view, kNumKinds> kNames = {
    "thread stack", "malloc", "heap", "file", "image", "jit code", "gc heap", "anon", "reservation"};

absl::string_view BaseName(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

// A C function's name without its version and its compiler clone suffix:
// "pthread_create@GLIBC_2.2.5" -> "pthread_create",
// "sysmalloc_mmap.constprop.0" -> "sysmalloc_mmap". C++ and .NET names
// (with "::" or spaces) are kept whole.
absl::string_view CName(absl::string_view s) {
  s = s.substr(0, s.find('@'));
  if (absl::StrContains(s, "::") || absl::StrContains(s, ' ')) return s;
  return s.substr(0, s.find('.'));
}

// glibc's malloc (malloc/malloc.c, malloc/arena.c) and ld.so's minimal
// malloc (elf/dl-minimal-malloc.c): the functions between the caller of
// malloc and the mmap/mprotect/brk it makes.
constexpr std::array<absl::string_view, 31> kMallocFunctions = {
    "malloc",         "calloc",          "realloc",         "free",           "memalign",
    "posix_memalign", "aligned_alloc",   "valloc",          "pvalloc",        "__libc_malloc",
    "__libc_calloc",  "__libc_realloc",  "__libc_memalign", "_mid_memalign",  "_int_malloc",
    "_int_realloc",   "_int_memalign",   "_int_free",       "sysmalloc",      "sysmalloc_mmap",
    "sysmalloc_mmap_fallback",           "mremap_chunk",    "new_heap",       "alloc_new_heap",
    "grow_heap",      "_int_new_arena",  "arena_get2",      "tcache_init",    "__minimal_malloc",
    "__minimal_calloc",                  "__minimal_realloc"};

constexpr std::array<absl::string_view, 5> kThreadFunctions = {
    "pthread_create", "__pthread_create_2_1", "allocate_stack", "create_thread",
    // HotSpot maps a Java thread's guard pages into its stack.
    "StackOverflow::create_stack_guard_pages"};

// Code allocators of the JITs: HotSpot's code cache, V8's code range,
// CoreCLR's executable allocator and code heaps.
constexpr std::array<absl::string_view, 8> kJitMarkers = {
    "ReservedCodeSpace", "CodeCache::", "CodeHeap::", "v8::internal::CodeRange",
    "ExecutableAllocator", "ExecutableMemoryAllocator", "LoaderCodeHeap", "HostCodeHeap"};

// Garbage collectors: CoreCLR's GC (gc.cpp, gcenv.unix.cpp), HotSpot's
// heaps and their card tables, V8's heap and Oilpan (cppgc).
constexpr std::array<absl::string_view, 19> kGcMarkers = {
    "GCToOSInterface::", "virtual_reserve", "virtual_commit", "gc_heap::", "WKS::", "SVR::",
    "ReservedHeapSpace", "Universe::reserve_heap", "CollectedHeap", "CardTable::",
    "G1PageBasedVirtualSpace", "PSVirtualSpace", "ShenandoahHeap", "ZPhysicalMemory",
    "v8::internal::Heap::", "v8::internal::MemoryAllocator::", "v8::internal::PagedSpace",
    "v8::internal::SemiSpace", "cppgc::"};

bool IsAllocatorFile(absl::string_view dso) {
  const absl::string_view base = BaseName(dso);
  return absl::StartsWith(base, "libjemalloc") || absl::StartsWith(base, "libtcmalloc") ||
         absl::StartsWith(base, "libmimalloc");
}

template <size_t N>
bool Contains(const std::array<absl::string_view, N>& markers, absl::string_view s) {
  return std::any_of(markers.begin(), markers.end(), [&](absl::string_view m) { return absl::StrContains(s, m); });
}

template <size_t N>
bool IsOneOf(const std::array<absl::string_view, N>& names, absl::string_view s) {
  return std::find(names.begin(), names.end(), s) != names.end();
}

StackRole RoleOfFrame(const symbols::Frame& f) {
  if (IsAllocatorFile(f.dso)) return StackRole::kMalloc;
  if (!f.symbol) return StackRole::kNone;
  const absl::string_view name = CName(*f.symbol);
  if (IsOneOf(kThreadFunctions, name)) return StackRole::kThreadStart;
  // The allocator's names count only in the runtime's own code: an
  // application function may well be called "free" or "grow_heap".
  if (KindOf(f) == FrameKind::kRuntime && IsOneOf(kMallocFunctions, name)) return StackRole::kMalloc;
  if (absl::StartsWith(name, "_dl_map_")) return StackRole::kLoader;
  if (Contains(kJitMarkers, name)) return StackRole::kJitCode;
  if (Contains(kGcMarkers, name)) return StackRole::kGcHeap;
  return StackRole::kNone;
}

bool IsImagePath(absl::string_view path) {
  if (path == "[vdso]" || path == "[vsyscall]" || absl::StartsWith(path, "[vvar")) return true;
  const absl::string_view base = BaseName(path);
  const std::string lower = absl::AsciiStrToLower(base);
  return absl::StrContains(lower, ".so") || absl::EndsWith(lower, ".dll") || absl::EndsWith(lower, ".exe");
}

}  // namespace

absl::string_view KindName(RegionKind k) { return kNames[static_cast<size_t>(k)]; }

absl::StatusOr<RegionKind> ParseKind(absl::string_view name) {
  std::string spaced(absl::StripAsciiWhitespace(name));
  std::replace(spaced.begin(), spaced.end(), '-', ' ');
  std::replace(spaced.begin(), spaced.end(), '_', ' ');
  for (RegionKind k : kAllKinds) {
    if (KindName(k) == spaced) return k;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown kind '", name, "': expected ",
                                                 absl::StrJoin(kNames, ", ")));
}

absl::StatusOr<std::vector<RegionKind>> ParseKinds(absl::string_view list) {
  std::vector<RegionKind> out;
  for (absl::string_view part : absl::StrSplit(list, ',')) {
    absl::StatusOr<RegionKind> k = ParseKind(part);
    if (!k.ok()) return k.status();
    if (std::find(out.begin(), out.end(), *k) == out.end()) out.push_back(*k);
  }
  return out;
}

StackRole RoleOf(const std::vector<symbols::Frame>& frames) {
  for (const symbols::Frame& f : frames) {
    const StackRole r = RoleOfFrame(f);
    if (r != StackRole::kNone) return r;
  }
  return StackRole::kNone;
}

RegionKind KindOf(const RegionFacts& f) {
  if ((f.prot & (PROT_READ | PROT_WRITE | PROT_EXEC)) == 0) return RegionKind::kReservation;
  if (f.path == "[heap]" || f.made_by_brk) return RegionKind::kHeap;
  if (f.path == "[stack]") return RegionKind::kThreadStack;
  // The committing call knows best what the pages hold now (a GC's reserve
  // committed by its allocator); else the creating one.
  const StackRole role = f.commit != StackRole::kNone ? f.commit : f.origin;
  // Shared anonymous memory (MAP_SHARED|MAP_ANONYMOUS) is named
  // "/dev/zero (deleted)" by the kernel: no file of the user's.
  const bool shared_anon = absl::StartsWith(f.path, "/dev/zero");
  if (!shared_anon && (!f.path.empty() || f.file_backed)) {
    // .NET maps executable memory twice through a memfd (W^X).
    if (absl::StrContains(f.path, "memfd:doublemapper")) return RegionKind::kJitCode;
    if (f.origin == StackRole::kLoader || f.executable_file || IsImagePath(f.path) || (f.prot & PROT_EXEC)) {
      return RegionKind::kImage;
    }
    return RegionKind::kFile;
  }
  if (f.origin == StackRole::kLoader) return RegionKind::kImage;  // a library's bss
  if ((f.flags & MAP_STACK) || role == StackRole::kThreadStart) return RegionKind::kThreadStack;
  if ((f.prot & PROT_EXEC) || role == StackRole::kJitCode) return RegionKind::kJitCode;
  if (role == StackRole::kGcHeap) return RegionKind::kGcHeap;
  if (role == StackRole::kMalloc) return RegionKind::kMalloc;
  return RegionKind::kAnon;
}

bool TableSaysGcHeap(absl::string_view usage) { return absl::StartsWith(usage, "GC"); }

}  // namespace pageblame::analysis
