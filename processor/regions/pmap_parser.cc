#include "processor/regions/pmap_parser.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "processor/base/status_macros.h"
#include "processor/regions/address.h"

namespace pageblame::regions {
namespace {

bool IsDecimal(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c));
  });
}

bool IsBareHex(absl::string_view s) {
  return !s.empty() && s.size() <= 16 && std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isxdigit(static_cast<unsigned char>(c));
  });
}

// -X/-XX "r-xp" ([r-][w-][x-][ps], as fs/proc/task_mmu.c show_map_vma prints
// it) or -x's five-character Mode ("r-x--").
bool IsPerm(absl::string_view s) {
  if (s.size() == 4)
    return (s[0] == 'r' || s[0] == '-') && (s[1] == 'w' || s[1] == '-') &&
           (s[2] == 'x' || s[2] == '-') && (s[3] == 'p' || s[3] == 's');
  return s.size() == 5 && s.find_first_not_of("rwxsR-") == absl::string_view::npos;
}

// VmFlags mnemonics are two characters (task_mmu.c show_smap_vma_flags).
bool IsVmFlag(absl::string_view s) {
  return s.size() == 2 && absl::ascii_islower(static_cast<unsigned char>(s[0])) &&
         absl::ascii_isalnum(static_cast<unsigned char>(s[1]));
}

bool IsFooter(absl::string_view t) {
  return t.size() >= 3 && (t[0] == '=' || t[0] == '-') &&
         t.find_first_not_of("=- ") == absl::string_view::npos;
}

// Decimal fields starting at index 5 (after Address Perm Offset Device Inode).
size_t NumericRun(const std::vector<absl::string_view>& f) {
  size_t k = 5;
  while (k < f.size() && IsDecimal(f[k])) ++k;
  return k - 5;
}

// What a header column holds (pmap prints every smaps field as a decimal
// KiB count or count; only these few are not).
enum class ColumnKind { kAddress, kPerm, kHex, kDevice, kNumber };

struct Layout {
  int perm = 1;
  int size = 5;
  int rss = -1;          // the Rss column; -1: none (rss unknown)
  size_t fixed = 0;      // positional columns before VmFlags / Mapping
  bool flags = true;     // VmFlags tokens follow the positional columns
  int header_line = 0;   // 0: headerless
  std::string header;    // positional column names, for messages
  // With a header: each positional column's name and kind, where the
  // header's Mapping starts in its line (npos: no Mapping column), and the
  // Shared_Clean, Shared_Dirty, Private_Clean, Private_Dirty columns (-1
  // if the header lacks one), whose sum the kernel makes Rss.
  std::vector<absl::string_view> names;
  std::vector<ColumnKind> kinds;
  size_t mapping_offset = absl::string_view::npos;
  size_t last_name_end = 0;  // where the last positional name ends in its line
  int rss_parts[4] = {-1, -1, -1, -1};
};

// A KernelPageSize / MMUPageSize value: a power of two, at least 4 KiB.
bool IsPageSizeKib(absl::string_view s) {
  uint64_t kib = 0;
  return IsDecimal(s) && absl::SimpleAtoi(s, &kib) && kib >= 4 && (kib & (kib - 1)) == 0;
}

// Whether the four decimal fields from `first` add up to `total` (without
// wrapping: each value is below 2^62 or the answer is no).
bool FourAddUpTo(const std::vector<absl::string_view>& f, size_t first, uint64_t total) {
  uint64_t sum = 0;
  for (size_t i = first; i < first + 4; ++i) {
    uint64_t v = 0;
    if (!absl::SimpleAtoi(f[i], &v) || v >= (uint64_t{1} << 62)) return false;
    sum += v;
  }
  return sum == total;
}

// The numbers of the lines that are rows, ascending: a bit a line (a pmap
// of ten million mappings is as many rows).
class RowLines {
 public:
  class Iterator {
   public:
    Iterator(const std::vector<bool>* bits, size_t at) : bits_(bits), at_(at) { Skip(); }
    int operator*() const { return static_cast<int>(at_); }
    Iterator& operator++() {
      ++at_;
      Skip();
      return *this;
    }
    bool operator!=(const Iterator& o) const { return at_ != o.at_; }

   private:
    void Skip() {
      while (at_ < bits_->size() && !(*bits_)[at_]) ++at_;
    }
    const std::vector<bool>* bits_;
    size_t at_;
  };

  explicit RowLines(int lines) : bits_(static_cast<size_t>(lines) + 1) {}
  void push_back(int n) {
    bits_[n] = true;
    ++count_;
  }
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  Iterator begin() const { return Iterator(&bits_, 0); }
  Iterator end() const { return Iterator(&bits_, bits_.size()); }

 private:
  std::vector<bool> bits_;  // by line number
  size_t count_ = 0;
};

// Headerless -X/-XX rows name no column, and which fields pmap prints
// depends on the option (-X leaves KernelPageSize, MMUPageSize, the
// Shared_/Private_ fields and VmFlags out), on the kernel (before 4.14
// smaps put KernelPageSize/MMUPageSize after Swap, so Rss followed Size)
// and on -f/-c field lists. Rss is read only from the layout of -XX on
// kernels since 4.14, recognized on every row by: VmFlags present (only
// -XX prints them); the two fields after Size are page sizes
// (KernelPageSize, MMUPageSize); and the next, Rss, equals the sum of
// Shared_Clean + Shared_Dirty + Private_Clean + Private_Dirty (the kernel
// adds each resident page to exactly one of them: task_mmu.c
// smaps_account), found right after Pss or after Pss and Pss_Dirty (6.x).
// Returns the Rss field index, or the first line that does not fit, with why.
constexpr int kHeaderlessRss = 8;  // Address Perm Offset Device Inode Size KPS MMU Rss

struct RssGuess {
  int column = -1;
  std::string why_not;  // when column < 0
};

RssGuess HeaderlessRss(const TextLines& text, const RowLines& rows, size_t fixed) {
  bool fits[2] = {true, true};  // Shared_Clean at Rss + 2 (no Pss_Dirty), Rss + 3
  for (int n : rows) {
    std::vector<absl::string_view> f = TextLines::Fields(text.line(n));
    auto no = [&](absl::string_view why) {
      return RssGuess{-1, absl::StrCat("line ", n, " ", why)};
    };
    if (f.size() <= fixed || !IsVmFlag(f[fixed])) return no("has no VmFlags (only -XX prints them)");
    if (fixed < kHeaderlessRss + 7 || !IsPageSizeKib(f[6]) || !IsPageSizeKib(f[7]))
      return no("has no KernelPageSize and MMUPageSize after Size");
    uint64_t rss = 0;
    if (!absl::SimpleAtoi(f[kHeaderlessRss], &rss)) return no("has no Rss after the page sizes");
    for (int k = 0; k < 2; ++k) fits[k] = fits[k] && FourAddUpTo(f, kHeaderlessRss + 2 + k, rss);
    if (!fits[0] && !fits[1])
      return no("has no Rss equal to Shared_Clean + Shared_Dirty + Private_Clean + Private_Dirty");
  }
  return RssGuess{kHeaderlessRss, ""};
}

// What pass 1 finds: the layout the header names (if there is one) and the
// lines that are rows.
struct Structure {
  explicit Structure(int lines) : rows(lines) {}
  Layout layout;
  RowLines rows;
};

ColumnKind KindOf(absl::string_view name) {
  if (name == "Address") return ColumnKind::kAddress;
  if (name == "Perm" || name == "Mode") return ColumnKind::kPerm;
  if (name == "Offset") return ColumnKind::kHex;
  if (name == "Device") return ColumnKind::kDevice;
  return ColumnKind::kNumber;
}

// Sets *role to column k, unless the header already gave it one: two
// columns for one role (a name repeated, or Perm and Mode) would make the
// rows' values depend on which one is read.
absl::Status Assign(const TextLines& text, int n, const std::vector<absl::string_view>& f, int k,
                    absl::string_view what, int* role) {
  if (*role >= 0)
    return text.Error(n, absl::StrFormat("pmap header has two %s columns ('%s', column %d, and "
                                         "'%s', column %d)",
                                         what, f[*role], *role + 1, f[k], k + 1));
  *role = k;
  return absl::OkStatus();
}

// No column name twice: which of the two a row's value belongs to is
// anyone's guess, and a guess is a silently wrong number.
absl::Status CheckUniqueNames(const TextLines& text, int n, const std::vector<absl::string_view>& f) {
  absl::flat_hash_map<absl::string_view, size_t> seen;
  for (size_t i = 0; i < f.size(); ++i) {
    auto [it, fresh] = seen.try_emplace(f[i], i);
    if (!fresh)
      return text.Error(n, absl::StrFormat("pmap header names '%s' twice (columns %d and %d)",
                                           f[i], it->second + 1, i + 1));
  }
  return absl::OkStatus();
}

// The layout the header on line `n` names: columns by name (-X/-XX's and
// -x's), each name once. A header without Rss gives rss -1, and
// table->rss_note says why.
absl::StatusOr<Layout> HeaderLayout(const TextLines& text, int n, RegionTable* table) {
  absl::string_view line = text.line(n);
  std::vector<absl::string_view> f = TextLines::Fields(line);
  RETURN_IF_ERROR(CheckUniqueNames(text, n, f));
  static constexpr absl::string_view kParts[4] = {"Shared_Clean", "Shared_Dirty", "Private_Clean",
                                                  "Private_Dirty"};
  int perm = -1, size = -1, rss = -1, flags = -1, mapping = -1;
  Layout layout;
  for (size_t i = 0; i < f.size(); ++i) {
    int k = static_cast<int>(i);
    if (f[i] == "Perm" || f[i] == "Mode") RETURN_IF_ERROR(Assign(text, n, f, k, "Perm/Mode", &perm));
    else if (f[i] == "Size" || f[i] == "Kbytes") RETURN_IF_ERROR(Assign(text, n, f, k, "Size/Kbytes", &size));
    else if (f[i] == "Rss" || f[i] == "RSS") RETURN_IF_ERROR(Assign(text, n, f, k, "Rss/RSS", &rss));
    else if (f[i] == "VmFlags") flags = k;
    else if (f[i] == "Mapping") mapping = k;
    for (int p = 0; p < 4; ++p)
      if (f[i] == kParts[p]) layout.rss_parts[p] = k;
  }
  if (perm < 0 || size < 0)
    return text.Error(n, absl::StrCat("pmap header without Perm/Mode or Size/Kbytes "
                                      "column: ", TextLines::Quote(line)));
  layout.perm = perm;
  layout.size = size;
  layout.flags = flags >= 0;
  layout.fixed = flags >= 0 ? flags : mapping >= 0 ? mapping : f.size();
  if (rss >= static_cast<int>(layout.fixed) || perm >= static_cast<int>(layout.fixed) ||
      size >= static_cast<int>(layout.fixed))
    return text.Error(n, absl::StrCat("pmap header with Perm, Size or Rss after VmFlags/Mapping: ",
                                      TextLines::Quote(line)));
  for (int p : layout.rss_parts)
    if (p >= static_cast<int>(layout.fixed)) layout.rss_parts[0] = -1;  // not all usable
  layout.rss = rss;
  if (rss < 0) table->rss_note = "the pmap header has no Rss column";
  layout.header_line = n;
  layout.names.assign(f.begin(), f.begin() + layout.fixed);
  for (absl::string_view name : layout.names) layout.kinds.push_back(KindOf(name));
  if (mapping >= 0) layout.mapping_offset = static_cast<size_t>(f[mapping].data() - line.data());
  if (layout.fixed > 0) {
    const absl::string_view last = f[layout.fixed - 1];
    layout.last_name_end = static_cast<size_t>(last.data() + last.size() - line.data());
  }
  layout.header = absl::StrJoin(layout.names, " ");
  return layout;
}

// Whether trimmed line `t` (neither header, footer nor process line) is a
// row. A short hex-looking word ("add", "Face") starts a row only if the
// line also has a row's first columns; real user-space addresses are longer.
bool StartsRow(absl::string_view t) {
  std::vector<absl::string_view> f = TextLines::Fields(t);
  return IsBareHex(f[0]) && (f[0].size() >= 8 || f.size() >= 5);
}

// Pass 1: structure (process line, header, footer) and which lines are rows;
// the other lines are counted by table->Skip.
absl::StatusOr<Structure> FindStructure(const TextLines& text, RegionTable* table) {
  Structure s(text.size());
  int pid_line = 0;
  enum { kTable, kTotals, kAfter } where = kTable;
  for (int n = 1; n <= text.size(); ++n) {
    absl::string_view t = absl::StripAsciiWhitespace(text.line(n));
    if (t.empty()) continue;
    // `pmap -XX PID1 PID2` repeats the whole block; two address spaces must
    // not be merged into one table.
    if (PmapParser::IsPidLine(t)) {
      if (pid_line != 0)
        return text.Error(n, absl::StrFormat("pmap output of a second process (the first "
                                             "starts at line %d); give one process per file",
                                             pid_line));
      pid_line = n;
    } else if (where == kTotals) {  // the totals line under the footer
      where = kAfter;
    } else if (where == kAfter) {
      table->Skip(n, "after the pmap footer");
    } else if (IsFooter(t)) {
      where = kTotals;
    } else if (PmapParser::IsHeader(t)) {
      if (s.layout.header_line != 0 || !s.rows.empty())
        return text.Error(n, "pmap header after the table started");
      ASSIGN_OR_RETURN(s.layout, HeaderLayout(text, n, table));
    } else if (StartsRow(t)) {
      s.rows.push_back(n);
    } else {
      table->Skip(n, absl::StrCat("not a pmap row: ", TextLines::Quote(text.line(n))));
    }
  }
  if (s.rows.empty()) return text.FileError("no pmap rows found");
  return s;
}

// The layout of a file without a header: -X/-XX's columns, as many numeric
// ones as most rows have, and Rss only where HeaderlessRss is sure of it
// (else table->rss_note says why not).
Layout HeaderlessLayout(const TextLines& text, const RowLines& rows,
                        RegionTable* table) {
  // The kernel prints the same fields for every mapping, so the common run
  // length is the field count; a longer run in some row means its mapping
  // name happens to be a number.
  std::map<size_t, int> runs;
  for (int n : rows) ++runs[NumericRun(TextLines::Fields(text.line(n)))];
  size_t mode = std::max_element(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
                  return a.second < b.second;
                })->first;
  Layout layout;
  layout.fixed = 5 + mode;
  layout.header = absl::StrFormat("Address Perm Offset Device Inode Size +%d fields", mode - 1);
  RssGuess guess = HeaderlessRss(text, rows, layout.fixed);
  layout.rss = guess.column;
  if (guess.column < 0)
    table->rss_note = absl::StrCat("headerless pmap: no Rss column identified without doubt (",
                                   guess.why_not, "); keep pmap -XX's header (no -q)");
  return layout;
}

// "expected '<the layout's columns>' (why), got '<line n>'".
absl::Status Expected(const TextLines& text, int n, const Layout& layout,
                      absl::string_view why) {
  return text.Error(n, absl::StrFormat("expected '%s%s' (%s), got %s", layout.header,
                                       layout.flags ? " VmFlags Mapping" : " Mapping", why,
                                       TextLines::Quote(text.line(n))));
}

// Whether `value` has the form of a `kind` column; a count pmap could not
// read is printed "-" by older procps, allowed but in Size and Rss.
bool FitsKind(ColumnKind kind, absl::string_view value, bool dash_ok) {
  switch (kind) {
    case ColumnKind::kAddress: return IsBareHex(value);
    case ColumnKind::kPerm: return IsPerm(value);
    case ColumnKind::kHex: return IsBareHex(value);
    case ColumnKind::kDevice: return absl::StrContains(value, ':');
    case ColumnKind::kNumber: return IsDecimal(value) || (dash_ok && value == "-");
  }
  return false;
}

// With a header: every field before VmFlags/Mapping has the form of the
// column the header names there, and no number follows them. A header
// with a name missing or added (or a row cut short) would otherwise read
// every later value from its neighbour's column: Rss from Pss, or from
// KernelPageSize.
absl::Status CheckColumns(const TextLines& text, int n, const Layout& layout,
                          const std::vector<absl::string_view>& f) {
  const auto count = [&] {
    return absl::StrFormat("the header on line %d names %d columns before %s", layout.header_line,
                           layout.fixed, layout.flags ? "VmFlags" : "Mapping");
  };
  for (size_t i = 0; i < layout.fixed; ++i) {
    const bool dash_ok = static_cast<int>(i) != layout.size && static_cast<int>(i) != layout.rss;
    if (FitsKind(layout.kinds[i], f[i], dash_ok)) continue;
    // A word without digits where a number belongs (VmFlags, a mapping's
    // name) is a row with fewer columns than the header, not a typo.
    const bool word = layout.kinds[i] == ColumnKind::kNumber && f[i] != "-" &&
                      std::none_of(f[i].begin(), f[i].end(), [](char c) {
                        return absl::ascii_isdigit(static_cast<unsigned char>(c));
                      });
    return Expected(text, n, layout, absl::StrCat("bad ", layout.names[i], " '", f[i], "'",
                                                  word ? absl::StrCat(": ", count()) : ""));
  }
  if (layout.fixed >= f.size() || !IsDecimal(f[layout.fixed])) return absl::OkStatus();
  // A number where VmFlags or Mapping starts is a column the header does
  // not name, unless it is the mapping's name: then no VmFlags follow it;
  // without VmFlags, the row must be laid out as pmap lays it out, the last
  // number right-aligned under its name and the name under "Mapping".
  bool flags_after = false;
  for (size_t j = layout.fixed + 1; j < f.size(); ++j) flags_after |= IsVmFlag(f[j]);
  const char* line = text.line(n).data();
  const absl::string_view last = f[layout.fixed - 1];
  const bool aligned = static_cast<size_t>(f[layout.fixed].data() - line) == layout.mapping_offset &&
                       static_cast<size_t>(last.data() + last.size() - line) == layout.last_name_end;
  if (layout.flags ? !flags_after : aligned) return absl::OkStatus();
  return Expected(text, n, layout,
                  absl::StrCat("one more number, '", f[layout.fixed], "', than ", count(),
                               ": a column missing from the header?"));
}

// The kernel adds each resident page to exactly one of Shared_Clean,
// Shared_Dirty, Private_Clean and Private_Dirty (task_mmu.c
// smaps_account): where the header names all four, Rss must be their sum,
// or the header's columns are not the rows'.
absl::Status CheckRssParts(const TextLines& text, int n, const Layout& layout,
                           const std::vector<absl::string_view>& f, uint64_t rss_kib) {
  if (layout.rss_parts[0] < 0 || layout.rss_parts[1] < 0 || layout.rss_parts[2] < 0 ||
      layout.rss_parts[3] < 0)
    return absl::OkStatus();
  uint64_t sum = 0;
  for (int p : layout.rss_parts) {
    uint64_t v = 0;
    if (!absl::SimpleAtoi(f[p], &v) || v >= (uint64_t{1} << 62))
      return Expected(text, n, layout, absl::StrCat("bad ", layout.names[p], " '", f[p], "'"));
    sum += v;
  }
  if (sum == rss_kib) return absl::OkStatus();
  return text.Error(n, absl::StrFormat("Rss %d KiB is not Shared_Clean + Shared_Dirty + "
                                       "Private_Clean + Private_Dirty = %d KiB, as the kernel "
                                       "counts it: the header on line %d does not match the rows",
                                       rss_kib, sum, layout.header_line));
}

// The Rss column of row `n` (fields `f`), in bytes: a decimal KiB count no
// more than the row's Size, `kib`.
absl::StatusOr<uint64_t> ParseRss(const TextLines& text, int n, const Layout& layout,
                                  const std::vector<absl::string_view>& f, uint64_t kib) {
  absl::string_view rss = f[layout.rss];
  uint64_t rss_kib = 0;
  if (!IsDecimal(rss) || !absl::SimpleAtoi(rss, &rss_kib))
    return Expected(text, n, layout, absl::StrCat("bad Rss '", rss, "'"));
  if (rss_kib > kib)
    return text.Error(n, absl::StrFormat("Rss %d KiB is more than the row's Size %d KiB",
                                         rss_kib, kib));
  if (layout.header_line != 0) RETURN_IF_ERROR(CheckRssParts(text, n, layout, f, rss_kib));
  return rss_kib * 1024;
}

// Pass 2: the region of row line `n`, every field checked.
absl::StatusOr<Region> ParseRow(const TextLines& text, int n, const Layout& layout) {
  absl::string_view line = text.line(n);
  std::vector<absl::string_view> f = TextLines::Fields(line);
  if (f.size() < layout.fixed)
    return Expected(text, n, layout,
                    absl::StrFormat("%d columns, found %d", layout.fixed, f.size()));
  if (layout.header_line == 0 &&
      (!PmapParser::LooksLikeRow(line) || NumericRun(f) + 5 < layout.fixed))
    return Expected(text, n, layout, "a headerless pmap -X/-XX row");
  if (layout.header_line != 0) RETURN_IF_ERROR(CheckColumns(text, n, layout, f));
  Region r;
  r.line = n;
  absl::StatusOr<uint64_t> start = ParseAddress(f[0]);
  if (!start.ok()) return text.Error(n, start.status().message());
  absl::string_view perm = f[layout.perm], size = f[layout.size];
  uint64_t kib = 0;
  if (!IsPerm(perm)) return Expected(text, n, layout, absl::StrCat("bad Perm '", perm, "'"));
  if (!IsDecimal(size) || !absl::SimpleAtoi(size, &kib))
    return Expected(text, n, layout, absl::StrCat("bad Size '", size, "'"));
  if (kib == 0 || kib > (~uint64_t{0} - *start) / 1024)
    return Expected(text, n, layout,
                    absl::StrCat("Size '", size, "' KiB is empty or runs past 2^64"));
  // pmap prints the kernel's mappings: whole pages (see proc_maps_parser.cc).
  if (*start % kPageSize != 0 || kib * 1024 % kPageSize != 0)
    return text.Error(n, absl::StrFormat("0x%x, %d KiB is not page-aligned (4 KiB pages)",
                                         *start, kib));
  r.start = *start;
  r.end = *start + kib * 1024;
  r.protect = std::string(perm);
  if (layout.rss >= 0) {
    ASSIGN_OR_RETURN(r.rss, ParseRss(text, n, layout, f, kib));
  }
  size_t j = layout.fixed;
  while (layout.flags && j < f.size() && IsVmFlag(f[j])) ++j;
  if (j < f.size()) r.usage = std::string(TextLines::RestFrom(line, f[j]));
  return r;
}

}  // namespace

bool PmapParser::IsHeader(absl::string_view line) {
  std::vector<absl::string_view> f = TextLines::Fields(line);
  return f.size() >= 3 && f[0] == "Address" && (f[1] == "Perm" || f[1] == "Kbytes");
}

bool PmapParser::IsPidLine(absl::string_view line) {
  std::vector<absl::string_view> f = TextLines::Fields(line);
  return !f.empty() && f[0].size() >= 2 && f[0].back() == ':' &&
         IsDecimal(f[0].substr(0, f[0].size() - 1));
}

bool PmapParser::LooksLikeRow(absl::string_view line) {
  std::vector<absl::string_view> f = TextLines::Fields(line);
  return f.size() >= 6 && IsBareHex(f[0]) && IsPerm(f[1]) && f[1].size() == 4 &&
         IsBareHex(f[2]) && absl::StrContains(f[3], ':') && IsDecimal(f[4]) && IsDecimal(f[5]);
}

absl::StatusOr<RegionTable> PmapParser::Parse(const TextLines& text) {
  RegionTable table;
  table.format = std::string(kFormat);
  ASSIGN_OR_RETURN(Structure s, FindStructure(text, &table));
  if (s.layout.header_line == 0) s.layout = HeaderlessLayout(text, s.rows, &table);
  table.has_rss = s.layout.rss >= 0;
  table.regions.reserve(s.rows.size());
  for (int n : s.rows) {
    ASSIGN_OR_RETURN(Region r, ParseRow(text, n, s.layout));
    table.regions.push_back(std::move(r));
  }
  return table;
}

}  // namespace pageblame::regions
