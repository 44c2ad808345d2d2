#include "processor/symbols/jit_dump.h"

#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "processor/base/byte_reader.h"
#include "processor/base/input_file.h"
#include "processor/base/side_file_trust.h"
#include "processor/symbols/absl_compat.h"

namespace pageblame::symbols {
namespace {

constexpr uint32_t kMagic = 0x4A695444;         // "JiTD" as the writer's uint32
constexpr uint32_t kMagicSwapped = 0x4454694A;  // the same, written in the other byte order
constexpr uint32_t kHeaderSize = 40;            // version 1's header
constexpr uint32_t kRecordHeaderSize = 16;      // id, total_size, timestamp
constexpr uint32_t kCodeLoad = 0;
constexpr uint32_t kCodeMove = 1;

struct RecordHeader {
  uint32_t id = 0;
  uint32_t total_size = 0;
  uint64_t timestamp = 0;
};

// JIT_CODE_LOAD's fixed part; the name and the code bytes follow.
struct CodeLoad {
  uint32_t pid = 0, tid = 0;
  uint64_t vma = 0, code_addr = 0, code_size = 0, code_index = 0;
};

// JIT_CODE_MOVE: the code of `code_index` now at new_code_addr.
struct CodeMove {
  uint32_t pid = 0, tid = 0;
  uint64_t vma = 0, old_code_addr = 0, new_code_addr = 0, code_size = 0, code_index = 0;
};

ByteReader ReaderOf(absl::string_view bytes) { return ByteReader(bytes.data(), bytes.size()); }

}  // namespace

absl::StatusOr<JitDump> JitDump::Load(const std::string& path, uint32_t pid, bool force) {
  absl::StatusOr<std::unique_ptr<InputFile>> file = OpenSideFile(path, "jitdump", force);
  if (!file.ok()) return file.status();
  absl::StatusOr<std::string> bytes = (*file)->ReadAll();
  if (!bytes.ok()) return bytes.status();
  return Parse(*bytes, pid, path);
}

absl::StatusOr<JitDump> JitDump::Parse(absl::string_view bytes, uint32_t pid, absl::string_view name) {
  ByteReader r = ReaderOf(bytes);
  uint32_t magic = 0, version = 0, header_size = 0, elf_mach = 0, pad = 0, dump_pid = 0;
  if (!r.Read(&magic) || (magic != kMagic && magic != kMagicSwapped)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: offset 0: not a jitdump (expected the magic 0x4a695444 \"JiTD\" in its first 4 bytes)", name));
  }
  if (magic == kMagicSwapped) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: offset 0: a jitdump in the other byte order (pageblame reads native-endian ones only)", name));
  }
  if (!r.Read(&version) || !r.Read(&header_size) || !r.Read(&elf_mach) || !r.Read(&pad) || !r.Read(&dump_pid) ||
      header_size < kHeaderSize || header_size > bytes.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: offset 8: a jitdump header of %u bytes (expected at least %u, within the file's %u bytes)", name,
        header_size, kHeaderSize, bytes.size()));
  }
  if (dump_pid != pid) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: offset 20: the jitdump of pid %u, not of pid %u", name, dump_pid, pid));
  }
  JitDump dump;
  dump.ReadRecords(bytes, header_size, name);
  return dump;
}

// Records from `offset` to the end. A record cut by the end of the file
// ends the reading with a note (a JIT appends: the cut is where it was
// writing), one whose size cannot be right with a warning; what came
// before stands.
void JitDump::ReadRecords(absl::string_view bytes, size_t offset, absl::string_view name) {
  absl::flat_hash_map<uint64_t, std::string> names_by_index;  // for JIT_CODE_MOVE
  uint64_t bad = 0;
  while (offset < bytes.size()) {
    ByteReader r = ReaderOf(bytes.substr(offset));
    RecordHeader h;
    const bool header = r.Read(&h.id) && r.Read(&h.total_size) && r.Read(&h.timestamp);
    if (header && h.total_size < kRecordHeaderSize) {
      warning_ = absl::StrFormat(
          "%s: offset %u: a record of %u bytes (less than its own %u-byte header): the %u code records before it "
          "are used",
          name, offset, h.total_size, kRecordHeaderSize, code_loads_);
      break;
    }
    if (!header || h.total_size > bytes.size() - offset) {
      cut_note_ = absl::StrFormat(
          "%s: offset %u: the last record (%u bytes said) is cut by the end of the file's %u bytes (its JIT was "
          "writing it): the %u code records before it are used",
          name, offset, header ? h.total_size : 0, bytes.size(), code_loads_);
      break;
    }
    ByteReader body = ReaderOf(bytes.substr(offset + kRecordHeaderSize, h.total_size - kRecordHeaderSize));
    if (h.id == kCodeLoad) {
      CodeLoad c;
      std::string_view method;
      if (body.Read(&c.pid) && body.Read(&c.tid) && body.Read(&c.vma) && body.Read(&c.code_addr) &&
          body.Read(&c.code_size) && body.Read(&c.code_index) && body.ReadCString(&method) && !method.empty() &&
          c.code_addr + c.code_size >= c.code_addr) {
        // A zero-size blob still names the byte at its start (as in a perf map).
        map_.Add({c.code_addr, c.code_addr + (c.code_size == 0 ? 1 : c.code_size), std::string(method)});
        names_by_index[c.code_index] = std::string(method);
        ++code_loads_;
      } else {
        ++bad;
      }
    } else if (h.id == kCodeMove) {
      CodeMove m;
      if (body.Read(&m.pid) && body.Read(&m.tid) && body.Read(&m.vma) && body.Read(&m.old_code_addr) &&
          body.Read(&m.new_code_addr) && body.Read(&m.code_size) && body.Read(&m.code_index) &&
          m.new_code_addr + m.code_size >= m.new_code_addr && names_by_index.contains(m.code_index)) {
        map_.Add({m.new_code_addr, m.new_code_addr + (m.code_size == 0 ? 1 : m.code_size),
                  names_by_index[m.code_index]});
      } else {
        ++bad;
      }
    }
    offset += h.total_size;
  }
  if (bad > 0 && warning_.empty()) {
    warning_ = absl::StrFormat("%s: %u code records unreadable (fields cut by their record's size, or no name)",
                               name, bad);
  }
}

size_t JitDump::WholeLength(absl::string_view bytes) {
  ByteReader r = ReaderOf(bytes);
  uint32_t magic = 0, version = 0, header_size = 0;
  if (!r.Read(&magic) || magic != kMagic || !r.Read(&version) || !r.Read(&header_size) ||
      header_size < kHeaderSize || header_size > bytes.size()) {
    return 0;
  }
  size_t offset = header_size;
  while (bytes.size() - offset >= kRecordHeaderSize) {
    ByteReader h = ReaderOf(bytes.substr(offset));
    uint32_t id = 0, total_size = 0;
    if (!h.Read(&id) || !h.Read(&total_size) || total_size < kRecordHeaderSize ||
        total_size > bytes.size() - offset) {
      break;
    }
    offset += total_size;
  }
  return offset;
}

std::vector<std::string> JitDump::CandidatePaths(uint32_t pid, std::string_view trace_path,
                                                 std::string_view tmp_dir, std::string_view perf_map_dir) {
  return PerfMap::CandidatePathsOf(absl::StrCat("jit-", pid, ".dump"), trace_path, tmp_dir, perf_map_dir);
}

std::string JitDump::DsoName(uint32_t pid) { return absl::StrCat("/tmp/jit-", pid, ".dump"); }

}  // namespace pageblame::symbols
