#include "processor/regions/elf_core_reader.h"

#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "processor/base/status_macros.h"
#include "processor/regions/core_address_check.h"

namespace pageblame::regions {
namespace {

absl::string_view TypeName(uint16_t type) {
  switch (type) {
    case ET_NONE: return "ET_NONE (no file type)";
    case ET_REL: return "ET_REL (an object file)";
    case ET_EXEC: return "ET_EXEC (an executable)";
    case ET_DYN: return "ET_DYN (a shared library or PIE executable)";
    default: return "unknown";
  }
}

// a + b <= limit, without wrapping.
bool FitsIn(uint64_t a, uint64_t b, uint64_t limit) { return a <= limit && b <= limit - a; }

absl::Status CheckIdent(absl::string_view head, uint64_t size, absl::string_view name) {
  auto error = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", what));
  };
  if (head.size() < SELFMAG || head.compare(0, SELFMAG, ELFMAG) != 0)
    return error("not an ELF file");
  if (head.size() < EI_NIDENT)
    return error(absl::StrFormat("truncated core: %d bytes, shorter than an ELF header", size));
  const unsigned char cls = head[EI_CLASS], data = head[EI_DATA];
  if (cls != ELFCLASS32 && cls != ELFCLASS64)
    return error(absl::StrFormat("ELF file of unknown class %d (corrupt?)", cls));
  if (data != ELFDATA2LSB && data != ELFDATA2MSB)
    return error(absl::StrFormat("ELF file of unknown byte order %d (corrupt?)", data));
  if (head[EI_VERSION] != EV_CURRENT)
    return error(absl::StrFormat("ELF file of unknown version %d (corrupt?)", head[EI_VERSION]));
  const uint64_t ehdr = cls == ELFCLASS64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
  if (size < ehdr)
    return error(absl::StrFormat("truncated core: %d bytes, shorter than an ELF header (%d)",
                                 size, ehdr));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ElfCoreReader>> ElfCoreReader::OpenFile(int fd, uint64_t size,
                                                                       std::string name) {
  std::unique_ptr<ElfCoreReader> r(new ElfCoreReader(std::move(name), size));
  std::string head(sizeof(Elf64_Ehdr), '\0');
  ssize_t n = ::pread(fd, head.data(), head.size(), 0);
  if (n < 0) return r->Error(absl::StrCat("cannot read: ", std::strerror(errno)));
  head.resize(static_cast<size_t>(n));
  RETURN_IF_ERROR(r->Begin(fd, head));
  return r;
}

absl::StatusOr<std::unique_ptr<ElfCoreReader>> ElfCoreReader::OpenMemory(std::string bytes,
                                                                         std::string name) {
  std::unique_ptr<ElfCoreReader> r(new ElfCoreReader(std::move(name), bytes.size()));
  r->memory_ = std::move(bytes);
  RETURN_IF_ERROR(r->Begin(-1, r->memory_));
  return r;
}

ElfCoreReader::~ElfCoreReader() {
  if (elf_ != nullptr) elf_end(elf_);
}

absl::Status ElfCoreReader::Error(absl::string_view what) const {
  return absl::InvalidArgumentError(absl::StrCat(name_, ": ", what));
}

absl::Status ElfCoreReader::CheckInFile(absl::string_view what, uint64_t offset,
                                        uint64_t n) const {
  if (FitsIn(offset, n, size_)) return absl::OkStatus();
  return Error(absl::StrFormat("truncated core: the file (%d bytes) ends before %s (%d bytes at "
                               "offset %d)",
                               size_, what, n, offset));
}

absl::Status ElfCoreReader::Begin(int fd, absl::string_view head) {
  RETURN_IF_ERROR(CheckIdent(head, size_, name_));
  is64_ = head[EI_CLASS] == ELFCLASS64;
  big_endian_ = head[EI_DATA] == ELFDATA2MSB;
  elf_version(EV_CURRENT);
  // ELF_C_READ reads what is asked for with pread; nothing is mapped or
  // read ahead, whatever the size of the core.
  elf_ = fd >= 0 ? elf_begin(fd, ELF_C_READ, nullptr) : elf_memory(memory_.data(), memory_.size());
  if (elf_ == nullptr) return Error(absl::StrCat("not a readable ELF file: ", elf_errmsg(-1)));
  if (elf_kind(elf_) != ELF_K_ELF)
    return Error("not a readable ELF file (libelf does not take it for one)");
  GElf_Ehdr ehdr;
  if (gelf_getehdr(elf_, &ehdr) == nullptr)
    return Error(absl::StrCat("bad ELF header: ", elf_errmsg(-1)));
  if (ehdr.e_type != ET_CORE)
    return Error(absl::StrCat("an ELF file of type ", TypeName(ehdr.e_type),
                              ", not a core dump (ET_CORE)"));
  RETURN_IF_ERROR(ReadProgramHeaders());
  // Checked once all are read: overlaps are between entries.
  if (absl::Status s = CoreAddressCheck::CheckLoads(loads_, ehdr.e_machine, is64_); !s.ok()) {
    return Error(s.message());
  }
  if (absl::Status s = CoreAddressCheck::CheckFiles(files_, ehdr.e_machine, is64_); !s.ok()) {
    return Error(s.message());
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> ElfCoreReader::ProgramHeaderCount() {
  GElf_Ehdr ehdr;
  gelf_getehdr(elf_, &ehdr);
  if (ehdr.e_phnum != PN_XNUM) return ehdr.e_phnum;
  // More than 65534: the count is section header 0's sh_info (createdump
  // writes it this way for big processes), which libelf reads from e_shoff.
  const uint64_t shdr = is64_ ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
  if (ehdr.e_shoff == 0)
    return Error("e_phnum is PN_XNUM but there is no section header holding the count");
  RETURN_IF_ERROR(CheckInFile("the section header holding the program header count",
                              ehdr.e_shoff, shdr));
  size_t n = 0;
  if (elf_getphdrnum(elf_, &n) != 0)
    return Error(absl::StrCat("cannot read the program header count: ", elf_errmsg(-1)));
  return n;
}

absl::Status ElfCoreReader::ReadProgramHeaders() {
  GElf_Ehdr ehdr;
  gelf_getehdr(elf_, &ehdr);
  ASSIGN_OR_RETURN(uint64_t count, ProgramHeaderCount());
  const uint64_t entry = is64_ ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
  if (count > 0 && ehdr.e_phentsize != entry)
    return Error(absl::StrFormat("program header entries of %d bytes, expected %d (corrupt?)",
                                 ehdr.e_phentsize, entry));
  // count < 2^32 (e_phnum or sh_info), so count * entry cannot wrap.
  RETURN_IF_ERROR(CheckInFile(absl::StrFormat("the end of its %d program headers", count),
                              ehdr.e_phoff, count * entry));
  if (count > static_cast<uint64_t>(std::numeric_limits<int>::max()))
    return Error(absl::StrFormat("%d program headers, more than pageblame reads", count));
  program_headers_ = static_cast<int>(count);
  for (uint64_t i = 0; i < count; ++i) {
    GElf_Phdr p;
    if (gelf_getphdr(elf_, static_cast<int>(i), &p) == nullptr)
      return Error(absl::StrFormat("cannot read program header %d: %s", i + 1, elf_errmsg(-1)));
    if (p.p_type == PT_NOTE) RETURN_IF_ERROR(ReadNotes(p.p_offset, p.p_filesz));
    if (p.p_type != PT_LOAD) continue;
    if (!FitsIn(p.p_vaddr, p.p_memsz, ~uint64_t{0}))
      return Error(absl::StrFormat("PT_LOAD (program header %d) at 0x%x, 0x%x bytes, runs past "
                                   "2^64",
                                   i + 1, p.p_vaddr, p.p_memsz));
    if (p.p_filesz > p.p_memsz)
      return Error(absl::StrFormat("PT_LOAD (program header %d) has more bytes in the file (%d) "
                                   "than in memory (%d)",
                                   i + 1, p.p_filesz, p.p_memsz));
    loads_.push_back({static_cast<int>(i + 1), p.p_vaddr, p.p_memsz,
                      static_cast<uint32_t>(p.p_flags & (PF_R | PF_W | PF_X)), p.p_offset,
                      p.p_filesz, FitsIn(p.p_offset, p.p_filesz, size_)});
  }
  return absl::OkStatus();
}

absl::Status ElfCoreReader::ReadNotes(uint64_t offset, uint64_t size) {
  RETURN_IF_ERROR(CheckInFile("the end of its notes (PT_NOTE)", offset, size));
  if (size > kMaxNoteBytes)
    return Error(absl::StrFormat("a PT_NOTE of %d bytes, more than pageblame reads (%d)", size,
                                 kMaxNoteBytes));
  if (size == 0) return absl::OkStatus();
  // ELF_T_NHDR: libelf converts the note headers to host byte order; the
  // descriptors stay as in the file (NtFileNote reads their byte order).
  Elf_Data* data = elf_getdata_rawchunk(elf_, static_cast<int64_t>(offset), size, ELF_T_NHDR);
  if (data == nullptr)
    return Error(
        absl::StrFormat("cannot read the notes at offset %d: %s", offset, elf_errmsg(-1)));
  const char* base = static_cast<const char*>(data->d_buf);
  size_t pos = 0, next;
  GElf_Nhdr nhdr;
  size_t name_at, desc_at;
  while ((next = gelf_getnote(data, pos, &nhdr, &name_at, &desc_at)) > 0) {
    absl::string_view name(base + name_at, nhdr.n_namesz);
    while (!name.empty() && name.back() == '\0') name.remove_suffix(1);
    if (nhdr.n_type == NtFileNote::kType && name == "CORE") {
      absl::StatusOr<std::vector<FileMapping>> files = NtFileNote::Parse(
          absl::string_view(base + desc_at, nhdr.n_descsz), is64_ ? 8 : 4, big_endian_);
      if (!files.ok())
        return Error(
            absl::StrCat(files.status().message(), " (note at offset ", offset + pos, ")"));
      files_.insert(files_.end(), files->begin(), files->end());
    }
    // NT_PRSTATUS (1) and NT_PRPSINFO (3) of a 64-bit little-endian core.
    if (name == "CORE" && is64_ && !big_endian_) {
      if (nhdr.n_type == NT_PRSTATUS) ++threads_;
      if (nhdr.n_type == NT_PRPSINFO && nhdr.n_descsz >= 28)
        std::memcpy(&pid_, base + desc_at + 24, sizeof(pid_));
    }
    pos = next;
  }
  // gelf_getnote stops at the first note that does not fit; only padding
  // (less than a note header) may follow the last one.
  if (size - pos >= sizeof(Elf32_Nhdr))
    return Error(absl::StrFormat("corrupt note at offset %d: its sizes run past the PT_NOTE "
                                 "segment (%d bytes at offset %d)",
                                 offset + pos, size, offset));
  return absl::OkStatus();
}

absl::StatusOr<std::string> ElfCoreReader::ReadBytes(uint64_t offset, size_t n) const {
  if (offset >= size_) return std::string();
  if (n > size_ - offset) n = static_cast<size_t>(size_ - offset);
  Elf_Data* data = elf_getdata_rawchunk(elf_, static_cast<int64_t>(offset), n, ELF_T_BYTE);
  if (data == nullptr)
    return Error(
        absl::StrFormat("cannot read %d bytes at offset %d: %s", n, offset, elf_errmsg(-1)));
  return std::string(static_cast<const char*>(data->d_buf), n);
}

}  // namespace pageblame::regions
