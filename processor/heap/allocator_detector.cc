#include "processor/heap/allocator_detector.h"

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "processor/heap/elf_facts.h"

namespace pageblame::heap {
namespace {

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// An allocator named by its library's file name.
Allocator ByName(const std::string& base) {
  if (absl::StartsWith(base, "libjemalloc")) return Allocator::kJemalloc;
  if (absl::StartsWith(base, "libtcmalloc")) return Allocator::kTcmalloc;
  if (absl::StartsWith(base, "libmimalloc")) return Allocator::kMimalloc;
  if (absl::StartsWith(base, "ld-musl-") || absl::StartsWith(base, "libc.musl-")) return Allocator::kMusl;
  return Allocator::kGlibc;
}

bool IsLoader(const std::string& base) {
  return absl::StartsWith(base, "ld-linux") || absl::StartsWith(base, "ld-2.") || base == "ld.so";
}

// An allocator known by what else its malloc-defining object exports.
Allocator ByExports(const ElfFacts& f) {
  if (f.exported.count("mallctl") || f.exported.count("je_mallctl")) return Allocator::kJemalloc;
  if (f.exported.count("tc_malloc")) return Allocator::kTcmalloc;
  if (f.exported.count("mi_malloc")) return Allocator::kMimalloc;
  return Allocator::kUnknown;
}

}  // namespace

bool AllocatorDetector::IsGlibcLibc(const std::string& path) {
  const std::string base = Basename(path);
  return base == "libc.so.6" || (absl::StartsWith(base, "libc-2.") && absl::EndsWith(base, ".so"));
}

AllocatorDetector::Found AllocatorDetector::Detect(const TargetMemory& memory) {
  Found f;
  std::set<std::string> files;
  for (const TargetMapping& m : memory.mappings()) {
    if (m.path.empty() || m.path[0] != '/') continue;
    if (IsGlibcLibc(m.path) && f.libc_path.empty()) {
      f.libc_path = m.path;
      f.libc_base = m.start;
    }
    files.insert(m.path);
  }
  for (const std::string& path : files) {
    const Allocator a = ByName(Basename(path));
    if (a != Allocator::kGlibc) {
      f.allocator = a;
      f.note = absl::StrCat("malloc is ", AllocatorName(a), "'s (", path, " is mapped); only glibc's heap is walked");
      return f;
    }
  }
  for (const std::string& path : files) {
    const std::string base = Basename(path);
    if (IsGlibcLibc(path) || IsLoader(base)) continue;
    absl::StatusOr<ElfFacts> e = ElfFacts::Read(memory.HostPath(path), {},
                                                {"malloc", "mallctl", "je_mallctl", "tc_malloc", "mi_malloc"}, false);
    if (!e.ok() || !e->exported.count("malloc")) continue;
    f.allocator = ByExports(*e);
    f.note = absl::StrCat("malloc is defined by ", path,
                          f.allocator == Allocator::kUnknown ? "" : absl::StrCat(" (", AllocatorName(f.allocator), ")"),
                          ", not glibc's; only glibc's heap is walked");
    return f;
  }
  if (f.libc_path.empty()) {
    f.note = "no glibc libc.so.6 is mapped (a static binary, or another C library): its allocator is unknown";
    return f;
  }
  f.allocator = Allocator::kGlibc;
  return f;
}

}  // namespace pageblame::heap
