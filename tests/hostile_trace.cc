#include "tests/hostile_trace.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "processor/base/status_macros.h"
#include "processor/perf/perf_records.h"
#include "tests/trace_fixtures.h"
#include "tests/trace_patcher.h"

namespace pageblame::testing {
namespace {

constexpr char kLibc[] = "/usr/lib/x86_64-linux-gnu/libc.so.6";
// Where a record's strings start: after the header (8) and pid, tid (8) for
// COMM; after those, addr, len, pgoff (24), the maj/min/ino/generation or
// build-id union (24), prot and flags (8) for MMAP2 (perf_event.h).
constexpr uint64_t kCommAt = 16;
constexpr uint64_t kMmap2FilenameAt = 72;

// Writes `to` over `from` (NUL-terminated in the file) in every record of
// `type` that holds it at `at`; how many it replaced. `to` must fit in the
// room `from` had: its bytes and its NUL padding to 8 bytes.
absl::StatusOr<int> Rename(TracePatcher* t, uint32_t type, uint64_t at, const std::string& from,
                           const std::string& to) {
  ASSIGN_OR_RETURN(std::vector<uint64_t> records, t->RecordOffsets(type));
  int n = 0;
  for (uint64_t r : records) {
    if (t->bytes().compare(r + at, from.size() + 1, from.c_str(), from.size() + 1) != 0) continue;
    t->Overwrite(r + at, to);
    ++n;
  }
  return n;
}

absl::Status WriteHostileMap(const std::string& path) {
  std::ifstream in(TracePath(absl::StrCat("perf-", kHostilePid, ".map")), std::ios::binary);
  const std::string map((std::istreambuf_iterator<char>(in)), {});
  std::string out;
  for (absl::string_view line : absl::StrSplit(map, '\n', absl::SkipEmpty())) {
    // "START SIZE NAME": the name is the rest of the line.
    const std::vector<absl::string_view> f = absl::StrSplit(line, absl::MaxSplits(' ', 2));
    if (f.size() != 3) return absl::InternalError(absl::StrCat("unexpected perf map line: ", line));
    absl::StrAppend(&out, f[0], " ", f[1], " ", kHostileMethod, f[2], "\n");
  }
  std::ofstream o(path, std::ios::binary);
  o << out;
  return o ? absl::OkStatus() : absl::InternalError(absl::StrCat("cannot write ", path));
}

}  // namespace

absl::StatusOr<std::string> MakeHostileTrace(const std::string& dir) {
  static_assert(sizeof(kHostileLibc) == sizeof(kLibc), "a path of another length would not fit");
  ASSIGN_OR_RETURN(TracePatcher t, TracePatcher::Open(TracePath("node-trace.data")));
  ASSIGN_OR_RETURN(int comms, Rename(&t, perf::kRecordComm, kCommAt, "node", kHostileComm));
  ASSIGN_OR_RETURN(int libcs, Rename(&t, perf::kRecordMmap2, kMmap2FilenameAt, kLibc, kHostileLibc));
  if (comms == 0 || libcs == 0) {
    return absl::InternalError(absl::StrCat("node-trace.data changed: ", comms, " comms, ", libcs, " libc paths"));
  }
  const std::string trace = dir + "/node-trace.data";
  RETURN_IF_ERROR(t.Save(trace));
  RETURN_IF_ERROR(WriteHostileMap(absl::StrCat(dir, "/perf-", kHostilePid, ".map")));
  return trace;
}

bool TerminalSafe(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    uint32_t cp = c;
    size_t n = 1;
    if (c >= 0x80) {
      if ((c & 0xe0) == 0xc0) {
        cp = c & 0x1f, n = 2;
      } else if ((c & 0xf0) == 0xe0) {
        cp = c & 0x0f, n = 3;
      } else if ((c & 0xf8) == 0xf0) {
        cp = c & 0x07, n = 4;
      } else {
        return false;
      }
      if (i + n > text.size()) return false;
      for (size_t k = 1; k < n; ++k) {
        const auto d = static_cast<unsigned char>(text[i + k]);
        if ((d & 0xc0) != 0x80) return false;
        cp = (cp << 6) | (d & 0x3f);
      }
      static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
      if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    }
    if ((cp < 0x20 && cp != '\n') || (cp >= 0x7f && cp <= 0x9f)) return false;
    i += n;
  }
  return true;
}

}  // namespace pageblame::testing
