#include "processor/replay/attach_maps.h"

#include <sys/mman.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace pageblame::replay {
namespace {

constexpr char kMagic[] = "pageblame-attach-maps 1";
constexpr uint64_t kPageMask = 4095;

absl::Status Bad(absl::string_view name, size_t line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(name, ":", line, ": ", what));
}

// The next space-separated field of `rest`, consumed.
absl::string_view NextField(absl::string_view* rest) {
  *rest = absl::StripLeadingAsciiWhitespace(*rest);
  const size_t space = rest->find(' ');
  absl::string_view field = rest->substr(0, space);
  rest->remove_prefix(space == absl::string_view::npos ? rest->size() : space);
  return field;
}

bool ParseDecimal(absl::string_view s, uint64_t* out) { return !s.empty() && absl::SimpleAtoi(s, out); }

}  // namespace

std::string AttachMaps::PathFor(absl::string_view trace) { return absl::StrCat(trace, ".attach-maps"); }

std::string AttachMaps::Format(int32_t clockid, const std::vector<Read>& reads) {
  std::string out = absl::StrCat(kMagic, "\nclock ", clockid, "\n");
  for (const Read& r : reads) {
    absl::StrAppend(&out, "process ", r.pid, " ", r.from, " ", r.to, "\n", r.maps);
    if (!r.maps.empty() && r.maps.back() != '\n') out += '\n';
  }
  absl::StrAppend(&out, "end ", reads.size(), "\n");
  return out;
}

absl::StatusOr<AttachMaps::Row> AttachMaps::ParseRow(absl::string_view line) {
  absl::string_view rest = line;
  const absl::string_view range = NextField(&rest), perms = NextField(&rest), offset = NextField(&rest);
  const absl::string_view dev = NextField(&rest), inode = NextField(&rest);
  Row row;
  const std::vector<absl::string_view> ends = absl::StrSplit(range, absl::MaxSplits('-', 1));
  uint64_t ino = 0;
  if (ends.size() != 2 || !absl::SimpleHexAtoi(ends[0], &row.start) || !absl::SimpleHexAtoi(ends[1], &row.end) ||
      row.end <= row.start || ((row.start | row.end) & kPageMask) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("expected a page-aligned range START-END, found '", range, "'"));
  }
  if (perms.size() != 4 || (perms[0] != 'r' && perms[0] != '-') || (perms[1] != 'w' && perms[1] != '-') ||
      (perms[2] != 'x' && perms[2] != '-') || (perms[3] != 's' && perms[3] != 'p')) {
    return absl::InvalidArgumentError(absl::StrCat("expected permissions like rw-p, found '", perms, "'"));
  }
  if (!absl::SimpleHexAtoi(offset, &row.pgoff) || dev.find(':') == absl::string_view::npos ||
      !ParseDecimal(inode, &ino)) {
    return absl::InvalidArgumentError("expected OFFSET DEV INODE after the permissions");
  }
  row.prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
             (perms[2] == 'x' ? PROT_EXEC : 0);
  row.shared = perms[3] == 's';
  row.path = std::string(absl::StripLeadingAsciiWhitespace(rest));
  return row;
}

absl::StatusOr<AttachMaps> AttachMaps::Parse(absl::string_view text, absl::string_view name) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  if (lines.empty() || lines[0] != kMagic) {
    return Bad(name, 1, absl::StrCat("not a table of mappings at the attach (expected '", kMagic, "')"));
  }
  AttachMaps out;
  uint64_t clock = 0;
  if (lines.size() < 2 || !absl::ConsumePrefix(&lines[1], "clock ") || !ParseDecimal(lines[1], &clock) ||
      clock > 64) {
    return Bad(name, 2, "expected 'clock CLOCKID'");
  }
  out.clockid_ = static_cast<int32_t>(clock);
  for (size_t i = 2; i < lines.size(); ++i) {
    absl::string_view l = lines[i];
    if (absl::ConsumePrefix(&l, "process ")) {
      const std::vector<absl::string_view> f = absl::StrSplit(l, ' ');
      Table t;
      uint64_t pid = 0;
      if (f.size() != 3 || !ParseDecimal(f[0], &pid) || pid == 0 || pid > UINT32_MAX ||
          !ParseDecimal(f[1], &t.from) || !ParseDecimal(f[2], &t.to) || t.to < t.from) {
        return Bad(name, i + 1, "expected 'process PID FROM TO' (TO not before FROM)");
      }
      t.pid = static_cast<uint32_t>(pid);
      out.tables_.push_back(std::move(t));
    } else if (absl::ConsumePrefix(&l, "end ")) {
      uint64_t n = 0;
      if (!ParseDecimal(l, &n) || n != out.tables_.size() || i + 1 != lines.size()) {
        return Bad(name, i + 1, absl::StrCat("expected 'end ", out.tables_.size(), "' as the last line"));
      }
      return out;
    } else if (out.tables_.empty()) {
      return Bad(name, i + 1, "expected 'process PID FROM TO' before the first mapping");
    } else {
      absl::StatusOr<Row> row = ParseRow(l);
      if (!row.ok()) return Bad(name, i + 1, row.status().message());
      std::vector<Row>& rows = out.tables_.back().rows;
      if (!rows.empty() && row->start < rows.back().end) {
        return Bad(name, i + 1, "the mappings are not in address order, or overlap");
      }
      rows.push_back(*std::move(row));
    }
  }
  return Bad(name, lines.size(), "cut short: no 'end N' line");
}

}  // namespace pageblame::replay
