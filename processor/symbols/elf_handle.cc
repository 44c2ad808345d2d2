#include "processor/symbols/elf_handle.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "processor/base/input_file.h"

namespace pageblame::symbols {
namespace {

// libelf refuses to work until the caller has agreed on a version.
bool InitLibelf() { return elf_version(EV_CURRENT) != EV_NONE; }

// Scans one note buffer for the GNU build id note (name "GNU", type
// NT_GNU_BUILD_ID), as perf's filename__read_build_id() does.
std::string FindBuildIdNote(Elf_Data* data) {
  if (data == nullptr || data->d_buf == nullptr) return "";
  size_t offset = 0;
  GElf_Nhdr nhdr;
  size_t name_offset = 0;
  size_t desc_offset = 0;
  while (offset < data->d_size) {
    size_t next = gelf_getnote(data, offset, &nhdr, &name_offset, &desc_offset);
    if (next == 0) break;  // malformed note: gelf_getnote checked the bounds
    const char* buf = static_cast<const char*>(data->d_buf);
    if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == sizeof(ELF_NOTE_GNU) &&
        std::memcmp(buf + name_offset, ELF_NOTE_GNU, sizeof(ELF_NOTE_GNU)) == 0 &&
        nhdr.n_descsz > 0) {
      return std::string(buf + desc_offset, nhdr.n_descsz);
    }
    offset = next;
  }
  return "";
}

}  // namespace

absl::StatusOr<ElfHandle> ElfHandle::Open(const std::string& path) {
  static const bool initialized = InitLibelf();
  if (!initialized) return absl::InternalError("libelf version mismatch");
  // The path comes from a trace or a build-id cache: a directory, FIFO or
  // device there must not hang or crash the reading (InputFile checks).
  absl::StatusOr<std::unique_ptr<InputFile>> file = InputFile::Open(path, "ELF file", InputFile::Accept::kRegular);
  if (!file.ok()) return absl::NotFoundError(file.status().message());
  const int fd = (*file)->Release();
  // ELF_C_READ (not _MMAP): a file truncated under us gives a read error, not
  // SIGBUS.
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  if (elf == nullptr || elf_kind(elf) != ELF_K_ELF) {
    if (elf != nullptr) elf_end(elf);
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, ": not an ELF file"));
  }
  struct stat st;
  const uint64_t size = fstat(fd, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  return ElfHandle(fd, elf, size);
}

ElfHandle::ElfHandle(ElfHandle&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      elf_(std::exchange(other.elf_, nullptr)),
      file_size_(other.file_size_) {}

ElfHandle& ElfHandle::operator=(ElfHandle&& other) noexcept {
  if (this != &other) {
    Reset();
    fd_ = std::exchange(other.fd_, -1);
    elf_ = std::exchange(other.elf_, nullptr);
    file_size_ = other.file_size_;
  }
  return *this;
}

ElfHandle::~ElfHandle() { Reset(); }

void ElfHandle::Reset() {
  if (elf_ != nullptr) elf_end(elf_);
  if (fd_ >= 0) close(fd_);
  elf_ = nullptr;
  fd_ = -1;
}

std::string ElfHandle::BuildId() const {
  for (Elf_Scn* scn = elf_nextscn(elf_, nullptr); scn != nullptr;
       scn = elf_nextscn(elf_, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_NOTE) continue;
    std::string id = FindBuildIdNote(elf_getdata(scn, nullptr));
    if (!id.empty()) return id;
  }
  // Files without section headers (stripped by sstrip, some vdso dumps).
  size_t phnum = 0;
  if (elf_getphdrnum(elf_, &phnum) != 0) return "";
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf_, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_NOTE) {
      continue;
    }
    std::string id = FindBuildIdNote(
        elf_getdata_rawchunk(elf_, static_cast<int64_t>(phdr.p_offset), phdr.p_filesz, ELF_T_NHDR));
    if (!id.empty()) return id;
  }
  return "";
}

}  // namespace pageblame::symbols
