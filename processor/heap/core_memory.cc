#include "processor/heap/core_memory.h"

#include <elf.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "processor/base/input_file.h"
#include "processor/base/status_macros.h"
#include "processor/regions/core_file_parser.h"
#include "processor/regions/elf_core_reader.h"

namespace pageblame::heap {
namespace {

// The NT_FILE entry covering `addr`, or nullptr (few entries: a linear scan).
const regions::FileMapping* FileAt(const std::vector<regions::FileMapping>& files, uint64_t addr) {
  for (const regions::FileMapping& f : files) {
    if (f.start <= addr && addr < f.end) return &f;
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CoreMemory>> CoreMemory::Open(const std::string& path) {
  std::unique_ptr<CoreMemory> m(new CoreMemory());
  ASSIGN_OR_RETURN(std::unique_ptr<InputFile> in, InputFile::Open(path, "core dump", InputFile::Accept::kRegular));
  ASSIGN_OR_RETURN(std::string head, in->ReadAt(0, 4));
  if (!regions::CoreFileParser::IsElf(head))
    return absl::InvalidArgumentError(absl::StrCat(path, ": not an ELF core dump (gcore, dotnet-dump collect)"));
  ASSIGN_OR_RETURN(std::unique_ptr<regions::ElfCoreReader> core,
                   regions::ElfCoreReader::OpenFile(in->fd(), in->size(), path));
  if (!core->is64())
    return absl::InvalidArgumentError(absl::StrCat(path, ": a 32-bit core; the heap walker reads x86-64 processes"));
  ASSIGN_OR_RETURN(m->file_, MappedFile::Open(path));
  m->pid_ = core->pid();
  m->threads_ = core->threads();
  for (const regions::LoadSegment& s : core->loads()) {
    if (s.memsz == 0) continue;
    TargetMapping t;
    t.start = s.vaddr;
    t.end = s.vaddr + s.memsz;
    t.read = (s.flags & PF_R) != 0;
    t.write = (s.flags & PF_W) != 0;
    t.exec = (s.flags & PF_X) != 0;
    if (const regions::FileMapping* f = FileAt(core->files(), s.vaddr)) {
      t.path = f->path;
      t.offset = f->offset + (s.vaddr - f->start);
    }
    m->mappings_.push_back(t);
    // What the file holds: [offset, offset + filesz) cut to the file's end.
    const uint64_t held = s.offset < m->file_->size() ? std::min(s.filesz, m->file_->size() - s.offset) : 0;
    if (held < s.memsz) ++m->missing_;
    if (held > 0) m->segments_.push_back({s.vaddr, s.vaddr + held, s.offset});
  }
  // NT_FILE ranges no PT_LOAD covers (gcore leaves read-only file mappings
  // out): mappings without bytes, so that libraries are still found.
  for (const regions::FileMapping& f : core->files()) {
    bool covered = false;
    for (const TargetMapping& t : m->mappings_) covered |= t.start <= f.start && f.start < t.end;
    if (!covered) m->mappings_.push_back({f.start, f.end, true, false, false, f.offset, f.path});
  }
  auto by_start = [](const auto& a, const auto& b) { return a.start < b.start; };
  std::sort(m->mappings_.begin(), m->mappings_.end(), by_start);
  std::sort(m->segments_.begin(), m->segments_.end(), by_start);
  return m;
}

const CoreMemory::Segment* CoreMemory::SegmentAt(uint64_t addr) const {
  auto it = std::upper_bound(segments_.begin(), segments_.end(), addr,
                             [](uint64_t a, const Segment& s) { return a < s.start; });
  if (it == segments_.begin()) return nullptr;
  --it;
  return addr < it->end ? &*it : nullptr;
}

bool CoreMemory::Read(uint64_t addr, void* out, size_t n) {
  const Segment* s = SegmentAt(addr);
  if (s == nullptr || n > s->end - addr) return false;
  std::memcpy(out, file_->bytes().data() + s->offset + (addr - s->start), n);
  return true;
}

absl::Span<const uint8_t> CoreMemory::Contiguous(uint64_t addr) const {
  const Segment* s = SegmentAt(addr);
  if (s == nullptr) return {};
  return {file_->bytes().data() + s->offset + (addr - s->start), s->end - addr};
}

}  // namespace pageblame::heap
