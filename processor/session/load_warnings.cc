#include "processor/session/load_warnings.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "processor/session/libc_cut.h"
#include "processor/base/format.h"

namespace pageblame::session {
namespace {

// Each span of unparsed records is said on its own line, up to this many (a
// trace damaged all over would otherwise bury the answer).
constexpr size_t kSpansSaid = 5;

std::string Counted(uint64_t n, const char* what) { return absl::StrCat(n, " ", what, n == 1 ? "" : "s"); }

// Answers for 32-bit processes would be wrong: say so instead.
void Warn32Bit(const index::TraceIndex& idx, std::vector<std::string>* out) {
  for (uint32_t p = 0; p < idx.num_processes(); ++p) {
    const index::Process& proc = idx.process(p);
    if (!proc.is_32bit) continue;
    out->push_back(absl::StrCat(
        "warning: pid ", proc.pid, " (", std::string(idx.strings().Get(proc.comm)),
        ") is a 32-bit program: the kernel fires no syscalls:* events for its calls and raw_syscalls carry "
        "i386 numbers, so its memory changes are not replayed (",
        idx.stats().calls_32bit, " calls skipped)"));
  }
}

void WarnLost(const index::TraceStats& s, std::vector<std::string>* out) {
  for (const index::LostSpan& l : s.lost) {
    out->push_back(absl::StrCat("warning: ", l.count, l.samples ? " samples" : " events", " lost between ",
                                FormatTime(l.t_from), " and ", FormatTime(l.t_to),
                                "; pages changed then may be misattributed"));
  }
}

void WarnUnparsed(const index::TraceStats& s, std::vector<std::string>* out) {
  for (size_t i = 0; i < s.unparsed.size() && i < kSpansSaid; ++i) {
    const index::UnparsedSpan& u = s.unparsed[i];
    std::string what;
    if (u.samples) what = Counted(u.samples, "sample");
    if (u.records) absl::StrAppend(&what, what.empty() ? "" : " and ", Counted(u.records, "record"));
    // 0: from the start, to the end of the trace (UnparsedSpan).
    const uint64_t from = u.t_from ? u.t_from : s.first_time;
    const uint64_t to = u.t_to ? u.t_to : s.last_time;
    out->push_back(absl::StrCat("warning: ", what, " could not be parsed between ", FormatTime(from),
                                " and ", FormatTime(to), "; pages changed then may be misattributed"));
  }
  if (s.unparsed.size() > kSpansSaid) {
    out->push_back(absl::StrCat("warning: and ", s.unparsed.size() - kSpansSaid,
                                " more runs of records that could not be parsed"));
  }
  if (!s.unparsed.empty()) out->push_back(absl::StrCat("the first could not be parsed because: ", s.first_unparsed));
}

void WarnImpossible(const index::TraceStats& s, std::vector<std::string>* out) {
  if (s.impossible_calls == 0) return;
  out->push_back(absl::StrCat("warning: ", Counted(s.impossible_calls, "call"),
                              " with values the kernel cannot have returned, between ",
                              FormatTime(s.impossible_from), " and ", FormatTime(s.impossible_to),
                              ", not replayed (the trace is damaged; the first: ", s.first_impossible,
                              "); pages changed then may be misattributed"));
}

// A folded recording read although binaries it read changed since.
void WarnChangedBinaries(const replay::LoadedTrace& trace, std::vector<std::string>* out) {
  const std::vector<std::string>& c = trace.changed_binaries();
  if (c.empty()) return;
  constexpr size_t kSaid = 3;
  std::string what = c.front();
  for (size_t i = 1; i < std::min(c.size(), kSaid); ++i) absl::StrAppend(&what, "; ", c[i]);
  if (c.size() > kSaid) absl::StrAppend(&what, "; and ", c.size() - kSaid, " more");
  out->push_back(absl::StrCat("warning: ", what,
                              " since the recording was folded: its stacks are as they were unwound then (a folded "
                              "recording cannot be replayed again), their names are read from the files as they "
                              "are now"));
}

}  // namespace

std::vector<std::string> LoadWarnings(const replay::LoadedTrace& trace) {
  std::vector<std::string> out;
  const index::TraceStats& s = trace.index().stats();
  for (const std::string& w : trace.format_warnings()) out.push_back(absl::StrCat("warning: ", w));
  Warn32Bit(trace.index(), &out);
  WarnLost(s, &out);
  WarnUnparsed(s, &out);
  WarnImpossible(s, &out);
  // TRACE.attach-maps beside the trace that is not its own (replay/attach_maps.h).
  if (!trace.attach_maps().warning.empty()) out.push_back(absl::StrCat("warning: ", trace.attach_maps().warning));
  if (const index::TraceStats& s = trace.index().stats(); s.thinned_before != 0) {
    out.push_back(absl::StrCat("warning: record --max-size thinned this recording's history at ",
                               FormatTime(s.thinned_before), ": ", Counted(s.thinned_calls, "call"),
                               " of regions gone by then are not kept (the state from then on is whole; before, "
                               "not kept)"));
  }
  WarnChangedBinaries(trace, &out);
  // A frame-pointer trace whose stacks stop in libc names no caller.
  if (trace.unwind_stats() == nullptr) {
    if (LibcCut cut = FindLibcCut(trace.index(), trace.symbolizer()); cut.Mostly()) out.push_back(LibcCutHint(cut));
  }
  return out;
}

}  // namespace pageblame::session
