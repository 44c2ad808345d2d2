#include "tests/trace_fixtures.h"

#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "processor/base/temp_dir_for_test.h"

namespace pageblame::testing {
namespace {

constexpr uint64_t kPage = 4096;

// PT_LOAD span and PT_INTERP of an ELF64 file, read with the format's own
// structs: enough for "what did the kernel map at exec".
struct ElfImage {
  bool ok = false;
  uint64_t first_off = 0, lo = 0, hi = 0;
  std::string interp;
};

ElfImage ReadElf(const std::string& path) {
  ElfImage img;
  std::ifstream f(path, std::ios::binary);
  Elf64_Ehdr eh;
  if (!f.read(reinterpret_cast<char*>(&eh), sizeof eh) || eh.e_ident[EI_CLASS] != ELFCLASS64) {
    return img;
  }
  uint64_t lo = UINT64_MAX, hi = 0, lo_off = 0;
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    f.seekg(eh.e_phoff + uint64_t(i) * eh.e_phentsize);
    if (!f.read(reinterpret_cast<char*>(&ph), sizeof ph)) return img;
    if (ph.p_type == PT_LOAD) {
      if (ph.p_vaddr < lo) {
        lo = ph.p_vaddr;
        lo_off = ph.p_offset;
      }
      hi = std::max<uint64_t>(hi, ph.p_vaddr + ph.p_memsz);
    } else if (ph.p_type == PT_INTERP) {
      std::string s(ph.p_filesz, '\0');
      auto pos = f.tellg();
      f.seekg(ph.p_offset);
      f.read(s.data(), s.size());
      f.seekg(pos);
      s.resize(strnlen(s.c_str(), s.size()));
      char real[PATH_MAX];
      img.interp = realpath(s.c_str(), real) ? real : s;
    }
  }
  if (lo == UINT64_MAX) return img;
  img.ok = true;
  img.first_off = lo_off & ~(kPage - 1);
  img.lo = lo & ~(kPage - 1);
  img.hi = (hi + kPage - 1) & ~(kPage - 1);
  return img;
}

}  // namespace

std::string ScratchPath(const std::string& name) {
  static const TempDir dir("pageblame-tests");  // made on first use, removed at exit
  return dir.path() + "/" + name;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

replay::LoadOptions TraceLoadOptions(const std::string& name) {
  replay::LoadOptions o;
  o.path = !name.empty() && name[0] == '/' ? name : TracePath(name);
  o.symbols.trace_path = o.path;
  o.symbols.debug_dir = SourceDir() + "/traces/buildid-cache";
  return o;
}

session::SessionOptions TraceSessionOptions(const std::string& name) {
  session::SessionOptions o;
  o.path = !name.empty() && name[0] == '/' ? name : TracePath(name);
  o.symbols.debug_dir = SourceDir() + "/traces/buildid-cache";
  return o;
}

std::vector<ManifestRow> ReadManifest() {
  std::ifstream f(SourceDir() + "/traces/manifest.tsv");
  std::string line;
  std::vector<std::string> header;
  std::vector<ManifestRow> rows;
  while (std::getline(f, line)) {
    std::vector<std::string> cols = absl::StrSplit(line, '\t');
    if (header.empty()) {
      header = cols;
      continue;
    }
    ManifestRow r;
    for (size_t i = 0; i < header.size(); ++i) r.fields[header[i]] = i < cols.size() ? cols[i] : "";
    rows.push_back(r);
  }
  return rows;
}

void PageSet::Add(uint64_t start, uint64_t end) {
  if (start >= end) return;
  // Merge with overlapping and touching neighbours so equal sets compare
  // equal. (btree_map::erase invalidates iterators: find bounds, then erase.)
  auto it = ranges_.upper_bound(start);
  if (it != ranges_.begin() && std::prev(it)->second >= start) --it;
  while (it != ranges_.end() && it->first <= end) {
    start = std::min(start, it->first);
    end = std::max(end, it->second);
    it = ranges_.erase(it);
  }
  ranges_.emplace(start, end);
}

void PageSet::Remove(uint64_t start, uint64_t end) {
  auto it = ranges_.upper_bound(start);
  if (it != ranges_.begin()) --it;
  std::vector<std::pair<uint64_t, uint64_t>> keep;
  while (it != ranges_.end() && it->first < end) {
    if (it->second <= start) {
      ++it;
      continue;
    }
    if (it->first < start) keep.emplace_back(it->first, start);
    if (it->second > end) keep.emplace_back(end, it->second);
    it = ranges_.erase(it);
  }
  for (auto& k : keep) ranges_.emplace(k.first, k.second);
}

PageSet PageSet::Minus(const PageSet& other) const {
  PageSet out = *this;
  for (const auto& [s, e] : other.ranges_) out.Remove(s, e);
  return out;
}

PageSet PageSet::Intersect(const PageSet& other) const { return Minus(Minus(other)); }

uint64_t PageSet::Bytes() const {
  uint64_t n = 0;
  for (const auto& [s, e] : ranges_) n += e - s;
  return n;
}

std::string PageSet::Describe(size_t limit) const {
  std::string out;
  size_t n = 0;
  for (const auto& [s, e] : ranges_) {
    if (n++ == limit) {
      absl::StrAppend(&out, " ... (", ranges_.size(), " ranges)");
      break;
    }
    absl::StrAppend(&out, " ", absl::Hex(s), "-", absl::Hex(e));
  }
  return out.empty() ? " (none)" : out;
}

std::vector<MapsRow> ReadMapsFile(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::vector<MapsRow> rows;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string range, perms, off, dev, inode, name;
    in >> range >> perms >> off >> dev >> inode;
    std::getline(in >> std::ws, name);
    std::vector<std::string> se = absl::StrSplit(range, '-');
    MapsRow r;
    if (se.size() != 2 || !absl::SimpleHexAtoi(se[0], &r.start) ||
        !absl::SimpleHexAtoi(se[1], &r.end) || !absl::SimpleHexAtoi(off, &r.offset)) {
      continue;
    }
    r.perms = perms;
    r.path = name;
    rows.push_back(r);
  }
  return rows;
}

std::vector<SmapsRow> ReadSmapsFile(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::vector<SmapsRow> rows;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string first;
    in >> first;
    uint64_t kb = 0;
    if (first == "Rss:" || first == "Swap:") {
      if (rows.empty() || !(in >> kb)) continue;
      (first == "Rss:" ? rows.back().rss : rows.back().swap) = kb * 1024;
      continue;
    }
    // A mapping's first line: "start-end perms offset dev inode [path]";
    // field lines start with "Name:".
    if (first.empty() || first.back() == ':') continue;
    std::string range = first, perms, off, dev, inode, name;
    in >> perms >> off >> dev >> inode;
    std::getline(in >> std::ws, name);
    std::vector<std::string> se = absl::StrSplit(range, '-');
    SmapsRow r;
    if (se.size() != 2 || !absl::SimpleHexAtoi(se[0], &r.map.start) || !absl::SimpleHexAtoi(se[1], &r.map.end) ||
        !absl::SimpleHexAtoi(off, &r.map.offset)) {
      continue;
    }
    r.map.perms = perms;
    r.map.path = name;
    rows.push_back(r);
  }
  return rows;
}

std::vector<TruthRow> ReadTruth(const std::string& path) {
  std::ifstream f(!path.empty() && path[0] == '/' ? path : TracePath(path));  // a live test's own
  std::string line;
  std::vector<TruthRow> rows;
  bool header = true;
  while (std::getline(f, line)) {
    if (header) {
      header = false;
      continue;
    }
    std::vector<std::string> c = absl::StrSplit(line, '\t');
    TruthRow r;
    if (c.size() < 7 || !absl::SimpleHexAtoi(c[0], &r.start) || !absl::SimpleHexAtoi(c[1], &r.end)) continue;
    r.prot = c[2];
    r.origin = c[3];
    r.commit = c[4];
    r.via = c[5];
    r.what = c[6];
    rows.push_back(r);
  }
  return rows;
}

std::string LocalPath(const std::string& recorded) {
  // Any checkout's traces/bin/NAME (/work/main/..., /work/wt/recordings/...):
  // the last "/traces/bin/" of the path, so a checkout under a directory
  // that is itself called traces still maps right.
  static const std::string kBin = "/traces/bin/";
  size_t at = recorded.rfind(kBin);
  if (at != std::string::npos && recorded.find('/', at + kBin.size()) == std::string::npos &&
      at + kBin.size() < recorded.size()) {
    return SourceDir() + "/traces/bin/" + recorded.substr(at + kBin.size());
  }
  // The rest of the old mapping: other files under /work/main/traces/.
  static const std::string kRecordedRoot = "/work/main/traces/";
  if (recorded.rfind(kRecordedRoot, 0) == 0) {
    return SourceDir() + "/traces/" + recorded.substr(kRecordedRoot.size());
  }
  return recorded;
}

PageSet AllPages(const std::vector<MapsRow>& rows) {
  PageSet p;
  for (const MapsRow& r : rows) {
    if (r.start >= (uint64_t{1} << 47)) continue;  // [vsyscall]
    p.Add(r.start, r.end);
  }
  return p;
}

PageSet ProcessMadePages(const std::vector<MapsRow>& rows, const std::string& exe) {
  static const char* kSpecial[] = {"[stack]", "[vdso]", "[vvar]", "[vvar_vclock]", "[vsyscall]"};
  PageSet pages;
  for (const MapsRow& r : rows) {
    if (r.start >= (uint64_t{1} << 47)) continue;
    if (std::find(std::begin(kSpecial), std::end(kSpecial), r.path) != std::end(kSpecial)) continue;
    pages.Add(r.start, r.end);
  }
  ElfImage exe_img = ReadElf(LocalPath(exe));
  std::vector<std::pair<std::string, ElfImage>> images = {{exe, exe_img}};
  if (!exe_img.interp.empty()) images.push_back({exe_img.interp, ReadElf(exe_img.interp)});
  for (const auto& [path, img] : images) {
    if (!img.ok) continue;
    uint64_t first = UINT64_MAX;
    for (const MapsRow& r : rows) {
      if (r.path == path && r.offset == img.first_off) first = std::min(first, r.start);
    }
    if (first == UINT64_MAX) continue;
    uint64_t bias = first - img.lo;
    pages.Remove(bias + img.lo, bias + img.hi);
  }
  return pages;
}

std::string MakeSymfs(const std::string& name,
                      const std::vector<std::pair<std::string, std::string>>& recorded_to_local) {
  std::string root = ScratchPath(name);
  for (const auto& [recorded, local] : recorded_to_local) {
    std::string dst = root + recorded;
    for (size_t i = 1; i < dst.size(); ++i) {
      if (dst[i] == '/') mkdir(dst.substr(0, i).c_str(), 0755);
    }
    unlink(dst.c_str());
    if (symlink(local.c_str(), dst.c_str()) != 0) return "";
  }
  return root;
}

std::string MakeSymfs(const std::string& name, const std::vector<std::string>& recorded_paths) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const std::string& p : recorded_paths) pairs.emplace_back(p, LocalPath(p));
  return MakeSymfs(name, pairs);
}

std::string DotnetPid() {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(TracePath("dotnet"), ec)) {
    const std::string n = e.path().filename();
    if (absl::StartsWith(n, "dotnet-leak.") && absl::EndsWith(n, ".clr-regions.txt")) {
      return n.substr(12, n.size() - 12 - 16);
    }
  }
  return "";
}

}  // namespace pageblame::testing
