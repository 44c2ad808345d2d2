#include "processor/session/libc_cut.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "processor/symbols/absl_compat.h"

namespace pageblame::session {
namespace {

bool IsLibc(absl::string_view dso) {
  const size_t slash = dso.rfind('/');
  const absl::string_view base = slash == absl::string_view::npos ? dso : dso.substr(slash + 1);
  return absl::StartsWith(base, "libc.so") || absl::StartsWith(base, "libc-");
}

// Where a process's or a thread's stack legitimately ends inside libc.
bool IsRoot(absl::string_view symbol) {
  return absl::StartsWith(symbol, "__libc_start") || absl::StartsWith(symbol, "start_thread") ||
         absl::StrContains(symbol, "clone");
}

}  // namespace

namespace {

// One unique stack's verdict, and its leaf function's name if it is cut.
// 8 bytes a stack (judged once per stack, and a recording can hold
// millions): a cut stack's leaf name is kept once, in `names`.
struct StackVerdict {
  enum Kind : int8_t { kUnknown, kNoStack, kWhole, kCut } kind = kUnknown;
  uint32_t leaf = 0;  // kCut: its index in the leaf names
};

// The cut stacks' leaf names, each once, with their calls.
struct LeafNames {
  absl::flat_hash_map<std::string, uint32_t> ids;
  std::vector<std::pair<std::string, uint64_t>> counts;  // by id
  uint32_t Id(const std::string& name) {
    auto [it, fresh] = ids.try_emplace(name, static_cast<uint32_t>(counts.size()));
    if (fresh) counts.emplace_back(name, 0);
    return it->second;
  }
};

// Symbolizes the outermost and the leaf frame of every stack alike, cut or
// not, resolved or not: what -v counts as looked up must not depend on
// whether the symbols were found. An outermost frame in libc that cannot
// be named is not taken for a cut (no symbols, no evidence).
StackVerdict Judge(symbols::Symbolizer& sym, const index::CallEvent& ev,
                   absl::Span<const uint64_t> ips, LeafNames* names) {
  StackVerdict v;
  if (ips.empty()) {
    v.kind = StackVerdict::kNoStack;
    return v;
  }
  const symbols::Frame outer = sym.Symbolize(ev.pid, ev.time, ips.back());
  const symbols::Frame leaf = sym.Symbolize(ev.pid, ev.time, ips.front());
  const bool cut = IsLibc(symbols::ToAbsl(outer.dso)) && outer.symbol &&
                   !IsRoot(symbols::ToAbsl(*outer.symbol));
  v.kind = cut ? StackVerdict::kCut : StackVerdict::kWhole;
  if (cut) v.leaf = names->Id(leaf.symbol.value_or("[unknown]"));
  return v;
}

}  // namespace

LibcCut FindLibcCut(const index::TraceIndex& idx, symbols::Symbolizer& sym) {
  std::vector<StackVerdict> verdicts(idx.stacks().size());
  LeafNames names;
  LibcCut out;
  for (size_t i = 0; i < idx.num_events(); ++i) {
    const index::CallEvent& ev = idx.event(EventId(static_cast<uint32_t>(i)));
    if (!ev.stack.valid() || ev.stack.value() >= verdicts.size()) continue;
    StackVerdict& v = verdicts[ev.stack.value()];
    if (v.kind == StackVerdict::kUnknown) v = Judge(sym, ev, idx.stacks().Ips(ev.stack), &names);
    if (v.kind == StackVerdict::kNoStack) continue;
    ++out.calls;
    if (v.kind != StackVerdict::kCut) continue;
    ++out.cut;
    ++names.counts[v.leaf].second;
  }
  // By name, then the most calls first (a tie keeps the name order).
  std::vector<std::pair<std::string, uint64_t>> sorted = std::move(names.counts);
  std::sort(sorted.begin(), sorted.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (size_t i = 0; i < sorted.size() && i < 3; ++i) out.leaves.push_back(sorted[i].first);
  return out;
}

std::string LibcCutHint(const LibcCut& cut) {
  return absl::StrCat(
      "note: ", cut.cut, " of ", cut.calls, " memory calls (",
      cut.calls ? 100 * cut.cut / cut.calls : 0, "%) have stacks that stop inside libc (",
      absl::StrJoin(cut.leaves, ", "),
      "): this libc has no frame pointers, so --call-graph fp loses the function that called "
      "malloc/mmap. Record DWARF stacks on the enter events instead: `pageblame record` does "
      "that by default; with perf: perf record -m 128M "
      "-e 'syscalls:sys_enter_mmap/call-graph=dwarf,stack-size=16384/' "
      "-e 'syscalls:sys_exit_mmap/call-graph=no/' and the same pair for munmap, brk, mremap, "
      "mprotect, pkey_mprotect and madvise, then -p PID or the program. Each call then carries "
      "a 16 KiB stack copy (~16.5 KB of trace per call; with -z ~0.2-1 KB). A libc built with "
      "frame pointers (Fedora 38+, Ubuntu 24.04+) needs none of this.");
}

}  // namespace pageblame::session
