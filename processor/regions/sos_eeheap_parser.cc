#include "processor/regions/sos_eeheap_parser.h"

#include "processor/base/format.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace pageblame::regions {
namespace {

// Hex with or without "0x", at most 16 digits.
std::optional<uint64_t> Hex(absl::string_view s) {
  absl::ConsumePrefix(&s, "0x");
  if (s.empty() || s.size() > 16) return std::nullopt;
  for (char c : s)
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
  uint64_t v = 0;
  if (!absl::SimpleHexAtoi(s, &v)) return std::nullopt;
  return v;
}

bool IsDivider(absl::string_view t) {
  return t.size() >= 3 && (t.find_first_not_of('-') == absl::string_view::npos ||
                           t.find_first_not_of('=') == absl::string_view::npos);
}

// "0x9000 (36864)" at the start of `s` (what follows "Size:"): the value,
// its decimal checked against the hex when printed.
absl::StatusOr<uint64_t> SizeValue(absl::string_view s) {
  std::vector<absl::string_view> f = TextLines::Fields(s);
  std::optional<uint64_t> v = f.empty() ? std::nullopt : Hex(f[0]);
  if (!v) return absl::InvalidArgumentError(absl::StrCat("expected a size '0x...' after 'Size:', got '", s, "'"));
  if (f.size() > 1 && absl::StartsWith(f[1], "(")) {
    absl::string_view dec = f[1].substr(1, f[1].find(')') == absl::string_view::npos ? absl::string_view::npos
                                                                                      : f[1].find(')') - 1);
    uint64_t d = 0;
    if (absl::SimpleAtoi(dec, &d) && d != *v)
      return absl::InvalidArgumentError(absl::StrFormat("size 0x%x is not its decimal (%s)", *v, dec));
  }
  return *v;
}

// Parsing state: where in eeheap's output the current line is.
struct State {
  RegionTable table;
  bool started = false;
  std::string gc_label = "SOH";  // the GC heap part whose rows follow
  std::string heap_suffix;       // " heap N" with server GC
  uint64_t section_sum = 0;      // committed bytes of the heap lines since the last total
  int section_heaps = 0;
  uint64_t gc_committed = 0;     // sum of the GC rows' committed sizes
  int gc_rows = 0;
};

void AddRegion(State& st, int line, uint64_t start, uint64_t end, absl::string_view state,
               std::string usage) {
  if (end <= start) return;
  Region r;
  r.start = start;
  r.end = end;
  r.type = "MEM_PRIVATE";
  r.state = std::string(state);
  r.usage = std::move(usage);
  r.line = line;
  st.table.regions.push_back(std::move(r));
}

// One block "ADDR(RESERVED:COMMITTED)" or a bare "ADDR"; adds its regions
// and returns its committed bytes.
absl::StatusOr<uint64_t> Block(State& st, int line, absl::string_view token, absl::string_view kind) {
  const size_t open = token.find('(');
  std::optional<uint64_t> addr = Hex(token.substr(0, open));
  if (!addr) return absl::InvalidArgumentError(absl::StrCat("expected a block ADDR(RESERVED:COMMITTED), got '", token, "'"));
  if (open == absl::string_view::npos) return 0;
  absl::string_view inner = token.substr(open + 1);
  const size_t colon = inner.find(':');
  if (!absl::ConsumeSuffix(&inner, ")") || colon == absl::string_view::npos)
    return absl::InvalidArgumentError(absl::StrCat("expected a block ADDR(RESERVED:COMMITTED), got '", token, "'"));
  std::optional<uint64_t> reserved = Hex(inner.substr(0, colon)), committed = Hex(inner.substr(colon + 1));
  if (!reserved || !committed || *committed > *reserved || *reserved > ~*addr)
    return absl::InvalidArgumentError(
        absl::StrCat("expected a block ADDR(RESERVED:COMMITTED) with COMMITTED <= RESERVED, got '", token, "'"));
  AddRegion(st, line, *addr, *addr + *committed, "MEM_COMMIT", std::string(kind));
  AddRegion(st, line, *addr + *committed, *addr + *reserved, "MEM_RESERVE", std::string(kind));
  return *committed;
}

// "KIND: BLOCK... Size: 0x.. (..) bytes total[, ... wasted]."
absl::Status HeapLine(State& st, const TextLines& text, int n, absl::string_view kind, absl::string_view rest) {
  const size_t at = rest.find("Size:");
  uint64_t sum = 0;
  for (absl::string_view token : TextLines::Fields(rest.substr(0, at))) {
    absl::StatusOr<uint64_t> committed = Block(st, n, token, kind);
    if (!committed.ok()) return text.Error(n, committed.status().message());
    sum += *committed;
  }
  absl::StatusOr<uint64_t> size = SizeValue(rest.substr(at + 5));
  if (!size.ok()) return text.Error(n, size.status().message());
  if (*size != sum)
    return text.Error(n, absl::StrFormat("%s: Size 0x%x is not the sum of the blocks' committed sizes (0x%x)",
                                         kind, *size, sum));
  st.section_sum += sum;
  ++st.section_heaps;
  return absl::OkStatus();
}

// "Total size:   Size: 0x.. ...": the sum of its section's heap lines.
absl::Status TotalLine(State& st, const TextLines& text, int n, absl::string_view rest) {
  absl::StatusOr<uint64_t> size = SizeValue(rest.substr(rest.find("Size:") + 5));
  if (!size.ok()) return text.Error(n, size.status().message());
  // Module sections print their total only (EEHeapCommand.PrintModules).
  if (st.section_heaps > 0 && *size != st.section_sum)
    return text.Error(n, absl::StrFormat("total 0x%x is not the sum of the heaps above it (0x%x)", *size,
                                         st.section_sum));
  st.section_sum = 0;
  st.section_heaps = 0;
  return absl::OkStatus();
}

// "SEGMENT BEGIN ALLOCATED COMMITTED [0x.. (..)] [0x.. (..)]".
absl::Status SegmentRow(State& st, const TextLines& text, int n, const std::vector<absl::string_view>& f) {
  std::optional<uint64_t> v[4];
  for (int i = 0; i < 4; ++i) v[i] = Hex(f[i]);
  const uint64_t begin = *v[1], allocated = *v[2], committed = *v[3];
  std::vector<uint64_t> sizes;
  for (size_t i = 4; i < f.size(); i += 2) {
    if (!absl::StartsWith(f[i], "0x"))
      return text.Error(n, absl::StrCat("expected a GC segment row 'SEGMENT BEGIN ALLOCATED COMMITTED [0x.. (..)] "
                                        "[0x.. (..)]', got ", TextLines::Quote(text.line(n))));
    absl::StatusOr<uint64_t> s = SizeValue(absl::StrCat(f[i], " ", i + 1 < f.size() ? f[i + 1] : ""));
    if (!s.ok()) return text.Error(n, s.status().message());
    sizes.push_back(*s);
  }
  if (allocated < begin || committed < allocated || sizes.size() > 2)
    return text.Error(n, absl::StrCat("expected BEGIN <= ALLOCATED <= COMMITTED and at most two sizes in a GC "
                                      "segment row, got ", TextLines::Quote(text.line(n))));
  uint64_t commit_size = 0;
  if (sizes.size() == 2) {
    if (sizes[0] != allocated - begin)
      return text.Error(n, absl::StrFormat("allocated size 0x%x is not ALLOCATED - BEGIN (0x%x)", sizes[0],
                                           allocated - begin));
    commit_size = sizes[1];
  } else if (sizes.size() == 1 && allocated == begin) {
    commit_size = sizes[0];  // the empty allocated size is not printed
  }
  if (commit_size > committed || (commit_size > 0 && committed - commit_size > begin))
    return text.Error(n, absl::StrFormat("committed size 0x%x does not end at COMMITTED 0x%x and cover BEGIN 0x%x",
                                         commit_size, committed, begin));
  AddRegion(st, n, committed - commit_size, committed, "MEM_COMMIT",
            absl::StrCat("GCHeap ", st.gc_label, st.heap_suffix));
  st.gc_committed += commit_size;
  ++st.gc_rows;
  return absl::OkStatus();
}

bool LooksLikeSegmentRow(const std::vector<absl::string_view>& f) {
  if (f.size() < 4) return false;
  for (int i = 0; i < 4; ++i)
    if (absl::StartsWith(f[i], "0x") || !Hex(f[i])) return false;
  return true;
}

// GC section titles; true if `t` was one.
bool GcTitle(State& st, absl::string_view t) {
  if (t == "Small object heap") st.gc_label = "SOH";
  else if (t == "NonGC heap") st.gc_label = "NonGC";
  else if (absl::StartsWith(t, "Large object heap")) st.gc_label = "LOH";
  else if (absl::StartsWith(t, "Pinned object heap")) st.gc_label = "POH";
  else if (absl::StartsWith(t, "generation ") && absl::EndsWith(t, ":"))
    st.gc_label = absl::StrCat("gen", t.substr(11, t.size() - 12));
  else if (absl::StartsWith(t, "Heap ") && absl::StrContains(t, "("))
    st.heap_suffix = absl::StrCat(" heap ", absl::StripAsciiWhitespace(t.substr(5, t.find('(') - 5)));
  else
    return absl::StartsWith(t, "generation ") || absl::StartsWith(t, "ephemeral segment") ||
           absl::StartsWith(t, "DATAS") || absl::StartsWith(t, "Number of GC Heaps:") ||
           t == "No unique loader heaps found." || t == "Loader Heap:" ||
           (absl::StrContains(t, "segment") && absl::StrContains(t, "committed"));
  return true;
}

absl::Status GcTotal(const State& st, const TextLines& text, int n, absl::string_view t) {
  absl::StatusOr<uint64_t> size = SizeValue(t.substr(t.rfind("Size:") + 5));
  if (!size.ok()) return text.Error(n, size.status().message());
  if (*size != st.gc_committed)
    return text.Error(n, absl::StrFormat("GC committed size 0x%x is not the sum of the segments' (0x%x)", *size,
                                         st.gc_committed));
  return absl::OkStatus();
}

absl::Status Line(State& st, const TextLines& text, int n) {
  const absl::string_view t = absl::StripAsciiWhitespace(text.line(n));
  if (t.empty() || IsDivider(t)) {
    if (!t.empty()) st.section_sum = 0, st.section_heaps = 0;
    return absl::OkStatus();
  }
  if (GcTitle(st, t)) return absl::OkStatus();
  if (absl::StartsWith(t, "GC Committed Heap Size:")) return GcTotal(st, text, n, t);
  if (absl::StrContains(t, "Heap Size:") || absl::StrContains(t, "bytes consumed by CLR") ||
      absl::StrContains(t, "Committed Size:") || absl::StrContains(t, "Allocated Size:"))
    return absl::OkStatus();
  const std::vector<absl::string_view> f = TextLines::Fields(t);
  if (LooksLikeSegmentRow(f)) return SegmentRow(st, text, n, f);
  const size_t colon = t.find(':');
  if (colon != absl::string_view::npos && colon > 0) {
    absl::string_view name = absl::StripAsciiWhitespace(t.substr(0, colon));
    absl::string_view rest = t.substr(colon + 1);
    if (absl::StrContains(rest, "Size:")) {
      if (absl::EndsWithIgnoreCase(name, "size")) return TotalLine(st, text, n, rest);
      return HeapLine(st, text, n, name, rest);
    }
    if (Hex(absl::StripAsciiWhitespace(rest))) return absl::OkStatus();  // "System Domain:  ADDR"
  }
  st.table.Skip(n, "not a line of eeheap's output");
  return absl::OkStatus();
}

}  // namespace

bool SosEeheapParser::IsSignature(absl::string_view line) {
  const absl::string_view t = absl::StripAsciiWhitespace(line);
  if (t == "Loader Heap:" || absl::StartsWith(t, "Number of GC Heaps:")) return true;
  const size_t colon = t.find(':'), open = t.find('('), size = t.find("Size: ");
  return colon != absl::string_view::npos && open != absl::string_view::npos && size != absl::string_view::npos &&
         colon < open && open < size && t.find(':', open) < t.find(')', open);
}

absl::StatusOr<RegionTable> SosEeheapParser::Parse(const TextLines& text) {
  State st;
  st.table.format = std::string(kFormat);
  st.table.has_state = true;
  int first = 0;
  for (int n = 1; n <= text.size(); ++n) {
    if (!st.started) {
      if (!IsSignature(text.line(n))) {
        if (!absl::StripAsciiWhitespace(text.line(n)).empty()) st.table.Skip(n, "before the eeheap output");
        continue;
      }
      st.started = true;
      first = n;
    }
    absl::Status s = Line(st, text, n);
    if (!s.ok()) return s;
  }
  if (!st.started)
    return text.FileError("no SOS eeheap output ('Loader Heap:' or 'Number of GC Heaps:') found");
  if (st.table.regions.empty()) return text.Error(first, "eeheap output with no heap block or GC segment");
  return std::move(st.table);
}

}  // namespace pageblame::regions
