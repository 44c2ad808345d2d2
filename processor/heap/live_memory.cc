#include "processor/heap/live_memory.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "processor/base/input_file.h"
#include "processor/base/status_macros.h"
#include "processor/regions/proc_maps_parser.h"
#include "processor/regions/text_lines.h"

namespace pageblame::heap {

absl::StatusOr<std::unique_ptr<LiveMemory>> LiveMemory::Open(uint32_t pid) {
  if (access(absl::StrCat("/proc/", pid).c_str(), F_OK) != 0)
    return absl::NotFoundError(absl::StrCat("no process has pid ", pid));
  std::unique_ptr<LiveMemory> m(new LiveMemory(pid));
  RETURN_IF_ERROR(m->RefreshMappings());
  // One probe read of a readable mapping tells whether process_vm_readv is
  // allowed (it needs the ptrace access mode /proc/PID/mem needs too, but a
  // seccomp filter or an old kernel may refuse the call itself).
  m->pagemap_fd_ = open(absl::StrCat("/proc/", pid, "/pagemap").c_str(), O_RDONLY | O_CLOEXEC);
  for (const TargetMapping& t : m->mappings_) {
    if (!t.read) continue;
    uint8_t b;
    iovec local{&b, 1}, remote{reinterpret_cast<void*>(t.start), 1};
    if (process_vm_readv(pid, &local, 1, &remote, 1, 0) == 1) return m;
    if (errno == EPERM || errno == ESRCH) break;
  }
  m->mem_fd_ = open(absl::StrCat("/proc/", pid, "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  if (m->mem_fd_ < 0)
    return absl::PermissionDeniedError(absl::StrCat("cannot read the memory of pid ", pid, ": ",
                                                    std::strerror(errno), " (run as root or as its user)"));
  m->use_mem_file_ = true;
  return m;
}

LiveMemory::~LiveMemory() {
  if (mem_fd_ >= 0) close(mem_fd_);
  if (pagemap_fd_ >= 0) close(pagemap_fd_);
}

absl::Status LiveMemory::RefreshMappings() {
  const std::string path = absl::StrCat("/proc/", pid_, "/maps");
  absl::StatusOr<std::string> text = InputFile::ReadWhole(path, "maps file", InputFile::Accept::kRegularOrStream);
  if (!text.ok()) {
    if (access(absl::StrCat("/proc/", pid_).c_str(), F_OK) != 0)
      return absl::NotFoundError(absl::StrCat("no process has pid ", pid_));
    return absl::PermissionDeniedError(absl::StrCat("cannot read ", path, ": run as root or as its user"));
  }
  ASSIGN_OR_RETURN(regions::RegionTable t, regions::ProcMapsParser::Parse(regions::TextLines(path, *std::move(text))));
  mappings_.clear();
  for (const regions::Region& r : t.regions) {
    TargetMapping m;
    m.start = r.start;
    m.end = r.end;
    m.read = r.protect.size() > 0 && r.protect[0] == 'r';
    m.write = r.protect.size() > 1 && r.protect[1] == 'w';
    m.exec = r.protect.size() > 2 && r.protect[2] == 'x';
    m.path = r.usage;
    mappings_.push_back(std::move(m));
  }
  std::sort(mappings_.begin(), mappings_.end(),
            [](const TargetMapping& a, const TargetMapping& b) { return a.start < b.start; });
  Forget();
  return absl::OkStatus();
}

std::string LiveMemory::HostPath(const std::string& path) const {
  return absl::StrCat("/proc/", pid_, "/root", path);
}

std::optional<uint64_t> LiveMemory::threads() const {
  // /proc/PID/status "Threads:" is one line of a small file.
  absl::StatusOr<std::string> text = InputFile::ReadWhole(absl::StrCat("/proc/", pid_, "/status"), "status file",
                                                          InputFile::Accept::kRegularOrStream);
  if (!text.ok()) return std::nullopt;
  const size_t at = text->find("\nThreads:");
  if (at == std::string::npos) return std::nullopt;
  return std::strtoull(text->c_str() + at + 9, nullptr, 10);
}

bool LiveMemory::ReadRaw(uint64_t addr, void* out, size_t n) {
  ++reads_;
  if (use_mem_file_) {
    const ssize_t got = pread(mem_fd_, out, n, static_cast<off_t>(addr));
    return got == static_cast<ssize_t>(n);
  }
  iovec local{out, n}, remote{reinterpret_cast<void*>(addr), n};
  return process_vm_readv(pid_, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(n);
}

bool LiveMemory::ReadAnonymous(uint64_t addr, uint8_t* out, size_t n) {
  constexpr uint64_t kPage = 4096;
  while (n > 0) {
    const uint64_t batch_end = (addr / kPage + kPagemapBatch) * kPage;
    const size_t take = std::min<uint64_t>(n, batch_end - addr);
    if (!ReadBacked(addr, out, take)) return false;
    addr += take;
    out += take;
    n -= take;
  }
  return true;
}

bool LiveMemory::ReadBacked(uint64_t addr, uint8_t* out, size_t n) {
  constexpr uint64_t kPage = 4096, kPresent = uint64_t{1} << 63, kSwapped = uint64_t{1} << 62;
  const uint64_t first = addr / kPage, pages = (addr + n - 1) / kPage - first + 1;
  entries_.resize(kPagemapBatch);
  if (pagemap_fd_ < 0 || pages > kPagemapBatch ||
      pread(pagemap_fd_, entries_.data(), pages * 8, static_cast<off_t>(first * 8)) != static_cast<ssize_t>(pages * 8))
    return ReadRaw(addr, out, n);
  // One iovec per run of present-or-swapped pages; the rest are zeros.
  local_.clear();
  remote_.clear();
  size_t total = 0;
  for (uint64_t i = 0; i < pages;) {
    const bool backed = (entries_[i] & (kPresent | kSwapped)) != 0;
    uint64_t j = i + 1;
    while (j < pages && ((entries_[j] & (kPresent | kSwapped)) != 0) == backed) ++j;
    const uint64_t from = std::max(addr, (first + i) * kPage), to = std::min(addr + n, (first + j) * kPage);
    if (!backed) {
      std::memset(out + (from - addr), 0, to - from);
    } else {
      local_.push_back({out + (from - addr), to - from});
      remote_.push_back({reinterpret_cast<void*>(from), to - from});
      total += to - from;
    }
    i = j;
  }
  if (local_.empty()) return true;
  ++reads_;
  if (use_mem_file_) {
    for (const iovec& r : remote_) {
      const uint64_t at = reinterpret_cast<uint64_t>(r.iov_base);
      if (pread(mem_fd_, out + (at - addr), r.iov_len, static_cast<off_t>(at)) != static_cast<ssize_t>(r.iov_len))
        return false;
    }
    return true;
  }
  return process_vm_readv(pid_, local_.data(), local_.size(), remote_.data(), remote_.size(), 0) ==
         static_cast<ssize_t>(total);
}

bool LiveMemory::ReadMapped(const TargetMapping& m, uint64_t addr, uint8_t* out, size_t n) {
  const bool anonymous = m.path.empty() || m.path == "[heap]";
  return anonymous ? ReadAnonymous(addr, out, n) : ReadRaw(addr, out, n);
}

bool LiveMemory::ReadBulk(uint64_t addr, void* out, size_t n) {
  uint8_t* to = static_cast<uint8_t*>(out);
  while (n > 0) {
    const TargetMapping* m = MappingAt(addr);
    if (m == nullptr || !m->read) return false;
    const size_t take = std::min<uint64_t>(n, m->end - addr);
    if (!ReadMapped(*m, addr, to, take)) return false;
    to += take;
    addr += take;
    n -= take;
  }
  return true;
}

void LiveMemory::Forget() {
  for (Slot& s : slots_) s.end = s.start;
}

// The cached block holding `addr`: its 64 KiB-aligned block cut to the
// readable mapping around it.
const LiveMemory::Slot* LiveMemory::Load(uint64_t addr) {
  const uint64_t block = addr / kBlock;
  Slot& slot = slots_[block % kSlots];
  if (slot.start <= addr && addr < slot.end) return &slot;
  const TargetMapping* m = MappingAt(addr);
  if (m == nullptr || !m->read) return nullptr;
  // Reading on within a page of the last block's end (a chunk walk through
  // small chunks): the whole 64 KiB block. A jump (past a large chunk,
  // along a free list): just the page, not 64 KiB of which 24 bytes are
  // wanted.
  const bool streaming = addr >= last_end_ && addr - last_end_ < 4096;
  const uint64_t from = streaming ? block * kBlock : std::max(block * kBlock, addr & ~uint64_t{4095});
  const uint64_t start = std::max(from, m->start);
  const uint64_t end = std::min(streaming ? block * kBlock + kBlock : from + 4096, m->end);
  last_end_ = end;
  slot.bytes.resize(end - start);
  slot.start = slot.end = start;
  if (!ReadMapped(*m, start, slot.bytes.data(), end - start)) return nullptr;
  slot.end = end;
  return &slot;
}

bool LiveMemory::Read(uint64_t addr, void* out, size_t n) {
  uint8_t* to = static_cast<uint8_t*>(out);
  while (n > 0) {
    const Slot* s = Load(addr);
    if (s == nullptr) return false;
    const size_t take = std::min<uint64_t>(n, s->end - addr);
    std::memcpy(to, s->bytes.data() + (addr - s->start), take);
    to += take;
    addr += take;
    n -= take;
  }
  return true;
}

}  // namespace pageblame::heap
