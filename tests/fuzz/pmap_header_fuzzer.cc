// libFuzzer target: the header logic of pmap -X/-XX tables and smaps (issue
// 44: a header that does not match its rows read Rss from another column,
// exit 0). Two kinds of input:
//  - text (any input not starting with 0xFF): parsed as pmap and as smaps
//    directly; a table that parses has rows of non-empty ranges, rss within
//    its row, on every row or none;
//  - 0xFF, then bytes that choose a table (pmap -X or -XX, laid out as
//    procps lays it out, or smaps), its rows' true sizes and resident bytes,
//    and one edit of the kind the fuzz campaign made (a header name dropped,
//    repeated, added or renamed to another's; an smaps Rss: line dropped,
//    repeated or made bigger than Size). Whatever the edit, a table that parses must give every row
//    its true size and its true Rss: an error is fine, a wrong number never.
// Seeds: corpus/pmap_header/made-*.bin (0xFF and 48 bytes of Python's
// random.Random(44)) and the real pmap and smaps files that
// tests/fuzz/CMakeLists.txt names.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "processor/regions/pmap_parser.h"
#include "processor/regions/proc_maps_parser.h"

namespace {

using pageblame::regions::PmapParser;
using pageblame::regions::ProcMapsParser;
using pageblame::regions::Region;
using pageblame::regions::RegionTable;
using pageblame::regions::TextLines;

// The fuzz bytes as a stream of small choices; zeros once they run out.
class Choices {
 public:
  Choices(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint32_t Next(uint32_t n) {  // in [0, n)
    uint32_t v = 0;
    for (int i = 0; i < 3; ++i) v = v << 8 | (at_ < size_ ? data_[at_++] : 0);
    return n == 0 ? 0 : v % n;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

void CheckRows(const absl::StatusOr<RegionTable>& t) {
  if (!t.ok()) return;
  for (const Region& r : t->regions) {
    if (r.start >= r.end) std::abort();
    if (r.rss && *r.rss > r.size()) std::abort();
    if (r.rss.has_value() != t->has_rss) std::abort();
  }
}

struct TrueRow {
  uint64_t start, kib, rss_kib;
  uint64_t parts[4];  // Shared_Clean, Shared_Dirty, Private_Clean, Private_Dirty: add up to rss
  uint64_t pss;
};

std::vector<TrueRow> MakeRows(Choices& c) {
  std::vector<TrueRow> rows(1 + c.Next(4));
  uint64_t at = 0x7f0000000000;
  for (TrueRow& r : rows) {
    r.start = at;
    r.kib = 4 * (1 + c.Next(64));
    r.rss_kib = 4 * c.Next(static_cast<uint32_t>(r.kib / 4 + 1));
    uint64_t left = r.rss_kib;
    for (int p = 0; p < 3; ++p) left -= (r.parts[p] = c.Next(static_cast<uint32_t>(left + 1)));
    r.parts[3] = left;
    r.pss = c.Next(static_cast<uint32_t>(r.rss_kib + 1));
    at += r.kib * 1024 + 4096 * (1 + c.Next(4));
  }
  return rows;
}

// A column of pmap -X/-XX: its name and each row's value.
struct Column {
  std::string name;
  std::vector<std::string> values;
};

std::vector<Column> PmapColumns(const std::vector<TrueRow>& rows, bool xx) {
  std::vector<Column> cols = {{"Address", {}}, {"Perm", {}}, {"Offset", {}}, {"Device", {}}, {"Inode", {}},
                              {"Size", {}}};
  std::vector<std::string> names = {"Rss", "Pss"};
  if (xx) {
    names = {"KernelPageSize", "MMUPageSize", "Rss", "Pss", "Shared_Clean", "Shared_Dirty", "Private_Clean",
             "Private_Dirty", "Referenced", "Anonymous", "Swap", "Locked", "THPeligible"};
  } else {
    names.insert(names.end(), {"Referenced", "Anonymous", "Swap", "Locked", "THPeligible"});
  }
  for (const std::string& n : names) cols.push_back({n, {}});
  for (const TrueRow& r : rows) {
    for (Column& col : cols) {
      const std::string& n = col.name;
      std::string v = "0";
      if (n == "Address") v = absl::StrFormat("%x", r.start);
      if (n == "Perm") v = "rw-p";
      if (n == "Offset") v = "00000000";
      if (n == "Device") v = "00:00";
      if (n == "Size") v = absl::StrCat(r.kib);
      if (n == "KernelPageSize" || n == "MMUPageSize") v = "4";
      if (n == "Rss" || n == "Referenced" || n == "Anonymous") v = absl::StrCat(r.rss_kib);
      if (n == "Pss") v = absl::StrCat(r.pss);
      static const char* const kParts[4] = {"Shared_Clean", "Shared_Dirty", "Private_Clean", "Private_Dirty"};
      for (int p = 0; p < 4; ++p) {
        if (n == kParts[p]) v = absl::StrCat(r.parts[p]);
      }
      col.values.push_back(v);
    }
  }
  return cols;
}

// The header's names, with one dropped, repeated, added or renamed to
// another's (or none). (Names swapped, or values moved between columns,
// can be consistent tables of another kernel: no reader can tell, so they
// are not made.)
std::vector<std::string> EditHeader(Choices& c, const std::vector<Column>& cols) {
  std::vector<std::string> header;
  for (const Column& col : cols) header.push_back(col.name);
  const size_t k = 1 + c.Next(static_cast<uint32_t>(header.size() - 1));
  switch (c.Next(5)) {
    case 0: break;  // as pmap printed it
    case 1: header.erase(header.begin() + k); break;
    case 2: header.insert(header.begin() + k, header[k]); break;
    case 3: header.insert(header.begin() + k, "Extra"); break;
    case 4: header[k] = header[c.Next(static_cast<uint32_t>(header.size()))]; break;
  }
  return header;
}

// procps's layout: each column as wide as its name or widest value, all
// right-aligned; VmFlags right-aligned too; Mapping left-aligned last.
std::string PmapText(Choices& c, const std::vector<TrueRow>& rows) {
  const bool xx = c.Next(2) == 1;
  const std::vector<Column> cols = PmapColumns(rows, xx);
  const std::vector<std::string> header = EditHeader(c, cols);
  // Widths from the edited header where it still names as many columns.
  std::vector<size_t> width(std::max(header.size(), cols.size()), 0);
  for (size_t i = 0; i < header.size(); ++i) width[i] = std::max(width[i], header[i].size());
  for (size_t i = 0; i < cols.size(); ++i) {
    for (const std::string& v : cols[i].values) width[i] = std::max(width[i], v.size());
  }
  std::string out = "1234:   fuzz\n";
  for (size_t i = 0; i < header.size(); ++i) absl::StrAppend(&out, i ? " " : "", std::string(width[i] - header[i].size(), ' '), header[i]);
  absl::StrAppend(&out, xx ? "   VmFlags" : "", " Mapping\n");
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t i = 0; i < cols.size(); ++i) {
      const std::string& v = cols[i].values[r];
      absl::StrAppend(&out, i ? " " : "", std::string(width[i] - v.size(), ' '), v);
    }
    // Some mappings named like numbers, but not the last row's: if every
    // row of a -X table (no VmFlags) ended in a number, a header naming a
    // column more (the names) would fit it as well as the one it has.
    const bool number = r + 1 < rows.size() && c.Next(3) == 0;
    absl::StrAppend(&out, xx ? " rd wr" : "", " ", number ? "42" : c.Next(2) ? "[heap]" : "", "\n");
  }
  return out;
}

std::string SmapsText(Choices& c, const std::vector<TrueRow>& rows) {
  const uint32_t edit = c.Next(5), row = c.Next(static_cast<uint32_t>(rows.size()));
  std::string out;
  for (size_t i = 0; i < rows.size(); ++i) {
    const TrueRow& r = rows[i];
    absl::StrAppend(&out, absl::StrFormat("%x-%x rw-p 00000000 00:00 0 [heap]\n", r.start, r.start + r.kib * 1024),
                    "Size:           ", r.kib, " kB\n");
    const bool here = i == row;
    if (!(here && edit == 1)) absl::StrAppend(&out, "Rss:            ", r.rss_kib, " kB\n");
    if (here && edit == 2) absl::StrAppend(&out, "Rss:            ", r.rss_kib, " kB\n");
    if (here && edit == 3) absl::StrAppend(&out, "Rss:            ", r.kib + 4, " kB\n");
    absl::StrAppend(&out, "Pss:            ", r.pss, " kB\n");
  }
  return out;
}

// A table that parses gives every row its true size and Rss.
void CheckTruth(const absl::StatusOr<RegionTable>& t, const std::vector<TrueRow>& rows) {
  CheckRows(t);
  if (!t.ok()) return;
  if (t->regions.size() != rows.size()) std::abort();
  for (size_t i = 0; i < rows.size(); ++i) {
    const Region r = t->regions[i];
    if (r.start != rows[i].start || r.size() != rows[i].kib * 1024) std::abort();
    if (r.rss && *r.rss != rows[i].rss_kib * 1024) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || data[0] != 0xFF) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    CheckRows(PmapParser::Parse(TextLines("fuzz", text)));
    CheckRows(ProcMapsParser::Parse(TextLines("fuzz", text)));
    return 0;
  }
  Choices c(data + 1, size - 1);
  const std::vector<TrueRow> rows = MakeRows(c);
  if (c.Next(3) == 0) {
    CheckTruth(ProcMapsParser::Parse(TextLines("fuzz", SmapsText(c, rows))), rows);
  } else {
    CheckTruth(PmapParser::Parse(TextLines("fuzz", PmapText(c, rows))), rows);
  }
  return 0;
}
