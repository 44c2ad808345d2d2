#include "processor/symbols/dso_locator.h"

#include <sys/stat.h>

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "processor/base/input_file.h"
#include "processor/base/side_file_trust.h"
#include "processor/symbols/absl_compat.h"
#include "processor/symbols/build_id.h"
#include "processor/symbols/elf_handle.h"

namespace pageblame::symbols {
namespace {

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// `root` + `path` with exactly one '/' between them.
std::string JoinPath(std::string_view root, std::string_view path) {
  if (root.empty()) return std::string(path);
  while (!root.empty() && root.back() == '/') root.remove_suffix(1);
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  return absl::StrCat(ToAbsl(root), "/", ToAbsl(path));
}

std::string ReadBuildId(const std::string& path) {
  absl::StatusOr<ElfHandle> elf = ElfHandle::Open(path);
  return elf.ok() ? elf->BuildId() : "";
}

}  // namespace

DsoLocator::DsoLocator(Options options) : options_(std::move(options)) {
  if (options_.system_debug_dir.empty()) {
    options_.system_debug_dir = JoinPath(options_.symfs, "/usr/lib/debug");
  }
}

std::string DsoLocator::BuildIdLinkPath(std::string_view root, std::string_view hex) {
  if (hex.size() < 3) return "";
  return absl::StrCat(JoinPath(root, ".build-id"), "/", ToAbsl(hex.substr(0, 2)), "/",
                      ToAbsl(hex.substr(2)));
}

bool DsoLocator::Accept(const std::string& candidate, std::string_view build_id,
                        DsoLocation* loc) const {
  if (candidate.empty() || !IsRegularFile(candidate)) return false;
  if (build_id.empty()) return true;
  if (BuildIdMatches(build_id, ReadBuildId(candidate))) return true;
  ++loc->build_id_mismatches;
  return false;
}

bool DsoLocator::TrustedBeside(const std::string& candidate, DsoLocation* loc) const {
  if (options_.force || !IsRegularFile(candidate) || !InSharedDirectory(candidate)) return true;
  // The descriptor judged is closed again and the file reopened by path to
  // be read: in a sticky directory (/tmp) no other user can replace a file
  // root or the user owns, so what was judged is what is read.
  absl::StatusOr<std::unique_ptr<InputFile>> f = OpenSideFile(candidate, "binary", /*force=*/false);
  if (f.ok() || f.status().code() != absl::StatusCode::kPermissionDenied) return true;
  loc->refused = std::string(f.status().message());
  return false;
}

DsoLocation DsoLocator::Locate(std::string_view recorded_path, std::string_view build_id) const {
  DsoLocation loc;
  // perf records the name of an unlinked-but-mapped file with this suffix
  // (d_path() in the kernel); the file may have been replaced since, which
  // the build id check catches.
  std::string_view path = ToStd(absl::StripSuffix(ToAbsl(recorded_path), " (deleted)"));
  const std::string hex = BuildIdToHex(build_id);
  const std::string cache_dir =
      options_.debug_dir.empty() ? "" : BuildIdLinkPath(options_.debug_dir, hex);

  std::vector<std::string> candidates;
  // Only absolute paths name files; "[vdso]" and friends live in the cache.
  if (absl::StartsWith(ToAbsl(path), "/")) candidates.push_back(JoinPath(options_.symfs, path));
  if (!hex.empty() && !options_.debug_dir.empty()) {
    if (IsDirectory(cache_dir)) {
      candidates.push_back(cache_dir + "/elf");
      candidates.push_back(cache_dir + "/vdso");
    } else {
      candidates.push_back(cache_dir);  // pre-4.x layout: the link is the file
    }
    std::string by_path = JoinPath(JoinPath(options_.debug_dir, path), hex);
    candidates.push_back(by_path + "/elf");
    candidates.push_back(by_path + "/vdso");
  }
  const size_t slash = path.rfind('/');
  std::string beside;
  if (!options_.beside_dir.empty() && slash != std::string_view::npos && slash + 1 < path.size()) {
    beside = JoinPath(options_.beside_dir, path.substr(slash + 1));
    candidates.push_back(beside);
  }
  for (const std::string& candidate : candidates) {
    if (candidate == beside && !TrustedBeside(candidate, &loc)) continue;
    if (Accept(candidate, build_id, &loc)) {
      loc.elf_path = candidate;
      break;
    }
  }

  loc.build_id = NormalizeBuildId(build_id);
  if (loc.build_id.empty() && !loc.elf_path.empty()) loc.build_id = ReadBuildId(loc.elf_path);
  if (loc.build_id.empty()) return loc;  // separate debug files are found by build id only
  const std::string debug_hex = BuildIdToHex(loc.build_id);
  std::vector<std::string> debug_candidates = {
      BuildIdLinkPath(options_.system_debug_dir, debug_hex) + ".debug"};
  if (!options_.debug_dir.empty()) {
    debug_candidates.push_back(BuildIdLinkPath(options_.debug_dir, debug_hex) + "/debug");
  }
  for (const std::string& candidate : debug_candidates) {
    if (candidate != loc.elf_path && Accept(candidate, loc.build_id, &loc)) {
      loc.debug_path = candidate;
      break;
    }
  }
  return loc;
}

}  // namespace pageblame::symbols
