#include "processor/regions/core_file_parser.h"

#include <elf.h>

#include <algorithm>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "processor/base/status_macros.h"
#include "processor/regions/range_set.h"

namespace pageblame::regions {
namespace {

// The NT_FILE entries by start, to name the file under an address and to cut
// segments where a file mapping starts or ends. Entries do not overlap in
// any core seen, but nothing relies on it: max_end_ finds every entry
// reaching an address, and lookups stay O(log n) when they do not overlap.
class FileIndex {
 public:
  explicit FileIndex(const std::vector<FileMapping>& files) {
    for (const FileMapping& f : files) by_start_.push_back(&f);
    std::sort(by_start_.begin(), by_start_.end(), [](const FileMapping* a, const FileMapping* b) {
      return std::tie(a->start, a->entry) < std::tie(b->start, b->entry);
    });
    uint64_t max_end = 0;
    for (const FileMapping* f : by_start_) max_end_.push_back(max_end = std::max(max_end, f->end));
  }

  // The entry covering `address`: of those that do, the one starting last.
  const FileMapping* Covering(uint64_t address) const {
    for (size_t i = StartingAtOrBelow(address); i-- > 0 && max_end_[i] > address;)
      if (by_start_[i]->end > address) return by_start_[i];
    return nullptr;
  }

  // start, end and every entry bound strictly between them, ascending.
  std::vector<uint64_t> Cuts(uint64_t start, uint64_t end) const {
    std::vector<uint64_t> cuts = {start, end};
    auto inside = [&](uint64_t b) { return b > start && b < end; };
    size_t first_after = StartingAtOrBelow(start);
    for (size_t i = first_after; i-- > 0 && max_end_[i] > start;)
      if (inside(by_start_[i]->end)) cuts.push_back(by_start_[i]->end);
    for (size_t i = first_after; i < by_start_.size() && by_start_[i]->start < end; ++i) {
      cuts.push_back(by_start_[i]->start);
      if (inside(by_start_[i]->end)) cuts.push_back(by_start_[i]->end);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    return cuts;
  }

 private:
  // How many entries start at or below `address`.
  size_t StartingAtOrBelow(uint64_t address) const {
    return std::upper_bound(by_start_.begin(), by_start_.end(), address,
                            [](uint64_t a, const FileMapping* f) { return a < f->start; }) -
           by_start_.begin();
  }

  std::vector<const FileMapping*> by_start_;
  std::vector<uint64_t> max_end_;  // max end of by_start_[0..i]
};

// createdump's "special diagnostics info" page (specialdiaginfo.h): a fake
// PF_R page it adds to every dump, holding a header, not process memory.
bool IsCreatedumpDiagInfo(const ElfCoreReader& core, const LoadSegment& s, bool is64) {
  constexpr absl::string_view kSignature = "DIAGINFOHEADER";
  const uint64_t address = is64 ? 0x00007ffffff10000 : 0x7fff1000;
  if (s.vaddr != address || s.memsz != 0x1000 || s.flags != PF_R || !s.data_in_file ||
      s.filesz < kSignature.size())
    return false;
  absl::StatusOr<std::string> head = core.ReadBytes(s.offset, kSignature.size());
  return head.ok() && *head == kSignature;
}

void AddSegment(const LoadSegment& s, const FileIndex& files, RegionTable* table) {
  std::vector<uint64_t> cuts = files.Cuts(s.vaddr, s.vaddr + s.memsz);
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    Region r;
    r.start = cuts[i];
    r.end = cuts[i + 1];
    r.line = s.index;
    const FileMapping* f = files.Covering(r.start);
    r.type = f ? "MEM_MAPPED" : "MEM_PRIVATE";
    // PROT_NONE is how Linux reserves address space (and how .NET's PAL
    // implements MEM_RESERVE): reserved, not committed.
    r.state = s.flags & (PF_R | PF_W | PF_X) ? "MEM_COMMIT" : "MEM_RESERVE";
    r.protect = CoreFileParser::Protect(s.flags);
    if (f) r.usage = f->path;
    table->regions.push_back(std::move(r));
  }
}

// File mappings no PT_LOAD covers: mapped, contents left on disk.
void AddFileOnly(const std::vector<FileMapping>& files, int program_headers, RangeSet* covered,
                 RegionTable* table) {
  for (const FileMapping& f : files) {
    for (const auto& [s, e] : covered->Gaps(f.start, f.end)) {
      Region r;
      r.start = s;
      r.end = e;
      r.line = program_headers + f.entry;
      r.type = "MEM_MAPPED";
      r.state = "MEM_COMMIT";
      r.usage = f.path;
      table->regions.push_back(std::move(r));
    }
    covered->Add(f.start, f.end);
  }
}

}  // namespace

bool CoreFileParser::IsElf(absl::string_view head) { return absl::StartsWith(head, "\x7f" "ELF"); }

std::string CoreFileParser::Protect(uint32_t pf_flags) {
  const bool r = pf_flags & PF_R, w = pf_flags & PF_W, x = pf_flags & PF_X;
  if (x) return w ? "PAGE_EXECUTE_READWRITE" : r ? "PAGE_EXECUTE_READ" : "PAGE_EXECUTE";
  if (w) return "PAGE_READWRITE";
  return r ? "PAGE_READONLY" : "PAGE_NOACCESS";
}

absl::StatusOr<RegionTable> CoreFileParser::ParseFile(int fd, uint64_t size,
                                                      const std::string& name) {
  ASSIGN_OR_RETURN(std::unique_ptr<ElfCoreReader> core, ElfCoreReader::OpenFile(fd, size, name));
  return Build(*core, name);
}

absl::StatusOr<RegionTable> CoreFileParser::ParseBytes(std::string bytes, const std::string& name) {
  ASSIGN_OR_RETURN(std::unique_ptr<ElfCoreReader> core,
                   ElfCoreReader::OpenMemory(std::move(bytes), name));
  return Build(*core, name);
}

absl::StatusOr<RegionTable> CoreFileParser::Build(const ElfCoreReader& core,
                                                  const std::string& name) {
  RegionTable table;
  table.format = std::string(kFormat);
  table.has_state = true;
  FileIndex files(core.files());
  RangeSet covered;
  for (const LoadSegment& s : core.loads()) {
    if (s.memsz == 0) {
      table.Skip(s.index, "an empty PT_LOAD");
    } else if (IsCreatedumpDiagInfo(core, s, core.is64())) {
      table.Skip(s.index, "createdump's diagnostics info page (not process memory)");
    } else {
      AddSegment(s, files, &table);
      covered.Add(s.vaddr, s.vaddr + s.memsz);
    }
  }
  AddFileOnly(core.files(), core.program_headers(), &covered, &table);
  if (table.regions.empty())
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": a core file with no memory: no PT_LOAD segments and no NT_FILE mappings"));
  table.regions.StableSort(
      [](const RegionList::Row& a, const RegionList::Row& b) { return a.start < b.start; });
  return table;
}

}  // namespace pageblame::regions
