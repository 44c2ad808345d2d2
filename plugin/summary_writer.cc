#include "plugin/summary_writer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "plugin/creator_methods.h"
#include "processor/analysis/app_method.h"
#include "processor/base/format.h"
#include "processor/base/text_escape.h"
#include "processor/decode/memory_event_kind.h"
#include "processor/render/method_text.h"
#include "processor/render/origin_renderer.h"
#include "processor/render/query_report.h"

namespace pageblame::plugin {

analysis::QueryOptions SummaryWriter::Options(const std::vector<uint64_t>& addresses) const {
  analysis::QueryOptions o;
  o.addresses = addresses;
  o.pid = pid_;
  o.processes = selection_.processes();
  o.at = at_;
  o.rss = rss_;
  o.heap = trace_.heap();
  o.kind_of = kinds_->Function();
  return o;
}

std::vector<analysis::QueryAnswer> SummaryWriter::Answers(const std::vector<uint64_t>& addresses) const {
  return analysis::Query(trace_.index(), Options(addresses));
}

std::string SummaryWriter::When() const {
  return at_ == index::kEndOfTrace ? "at the end of the trace" : absl::StrCat("at ", FormatTime(at_));
}

std::vector<EventId> SummaryWriter::PrintedStacks(const std::vector<Target>& targets) const {
  std::vector<EventId> out;
  for (const Target& t : targets) {
    for (const analysis::QueryAnswer& a : Answers(t.addresses)) {
      if (!a.version.valid()) continue;
      const index::Version& v = trace_.index().version(a.version);
      if (v.origin.valid()) out.push_back(v.origin);
      if (v.commit.valid()) out.push_back(v.commit);
    }
  }
  return out;
}

std::string SummaryWriter::StackText(const index::CallEvent& ev) const {
  std::string out;
  int n = 0;
  const std::vector<uint64_t> ips = trace_.index().stacks().Ips(ev.stack);
  const bool inlines = trace_.index().stacks().Unwound(ev.stack);
  std::vector<symbols::Frame> frames;
  for (size_t i = 0; i < ips.size(); ++i) {
    const uint64_t ip = ips[i];
    // Inlined frames come from the DWARF (perf's resolver names only the
    // function that holds the code); perf's name is for the frame itself.
    frames.clear();
    session::AppendFrames(trace_.symbolizer(), ev, ips, i, inlines, &frames);
    for (size_t k = 0; k + 1 < frames.size(); ++k) {
      absl::StrAppend(&out, "    #", n++, " ", Hex(ip), " ", render::DisplayName(frames[k]),
                      "\n");
    }
    const PerfFrame* pf = names_.Find(ev.pid, ip);
    std::optional<std::string> symbol;
    uint64_t offset = 0;
    std::string dso;
    if (pf != nullptr && pf->symbol) {
      symbol = pf->symbol;
      offset = pf->offset;
      dso = pf->dso;
    } else {
      // perf did not name it (or no sample of this call went by): the
      // library's symbolizer, as `pageblame query` prints it.
      const symbols::Frame& f = frames.back();
      symbol = f.symbol;
      offset = f.offset;
      dso = !f.dso.empty() || pf == nullptr ? f.dso : pf->dso;
    }
    // perf's names come from the same ELF files and perf maps: escaped
    // as the library's (EscapeName).
    absl::StrAppend(&out, "    #", n++, " ", Hex(ip), " ",
                    symbol ? EscapeName(*symbol) : std::string("[unknown]"),
                    symbol && offset ? absl::StrCat("+", Hex(offset)) : "", " (",
                    dso.empty() ? std::string("[unknown]") : EscapeName(dso), ")\n");
  }
  if (n == 0) absl::StrAppend(&out, "    (no user stack recorded)\n");
  return out;
}

// The first few calls perf did not read (a churned address can have
// thousands): which syscall, when, which thread, which side of the chunk.
std::string SummaryWriter::UnreadText(const std::vector<EventId>& unread) const {
  constexpr size_t kListed = 5;
  std::string out;
  for (size_t i = 0; i < unread.size() && i < kListed; ++i) {
    const index::CallEvent& ev = trace_.index().event(unread[i]);
    const bool earlier = seen_->Of(ev) == SeenSpan::Where::kBefore;
    absl::StrAppend(&out, "    not read: ", std::string(decode::SyscallName(ev.syscall)), " at ",
                    FormatTime(ev.time), " by tid ", ev.tid,
                    earlier ? ", in an earlier chunk\n" : ", in a later chunk\n");
  }
  if (unread.size() > kListed) absl::StrAppend(&out, "    not read: ", unread.size() - kListed, " more\n");
  return out;
}

std::string SummaryWriter::AnswerText(const analysis::QueryAnswer& a) const {
  const index::TraceIndex& idx = trace_.index();
  if (!a.process) {
    return absl::StrCat(Hex(a.address),
                        ": not mapped in any traced process ", When(), "\n");
  }
  const index::Process& proc = idx.process(*a.process);
  std::string out = absl::StrCat(Hex(a.address), " in pid ", proc.pid, " (",
                                 EscapeName(idx.strings().Get(proc.comm)), ")\n");
  render::OriginRenderer r(trace_.frames());
  if (!a.version.valid()) {
    const std::string gone = render::GoneText(idx, r, a.lineage);
    absl::StrAppend(&out, gone.empty() ? absl::StrCat("  not mapped ", When(), "\n") : gone);
  } else {
    absl::StrAppend(&out, render::RegionText(idx, idx.version(a.version), r,
                                             [&](const index::CallEvent& ev) { return StackText(ev); }));
    const index::Version& v = idx.version(a.version);
    if (v.origin.valid()) {
      // The method `attribute`'s first screen blames for this stack.
      const analysis::AppMethod m =
          analysis::MethodOf(trace_.frames().Frames(idx.event(v.origin)), analysis::SummaryOptions());
      absl::StrAppend(&out, "  app method: ", render::MethodLine(m), "\n");
    }
  }
  absl::StrAppend(&out, render::ResidentText(a, analysis::ResidentView(rss_, idx).has_snapshots()));
  uint64_t calls = 0, samples = 0, before = 0;
  std::vector<EventId> unread;  // in the recording's other chunks
  for (EventId id : selection_.HistoryCalls(*a.process, a.address)) {
    ++calls;
    auto it = samples_.find(id);
    if (it != samples_.end()) {
      samples += it->second;
    } else if (seen_ != nullptr && seen_->Of(idx.event(id)) != SeenSpan::Where::kInside) {
      before += seen_->Of(idx.event(id)) == SeenSpan::Where::kBefore;
      unread.push_back(id);
    }
  }
  absl::StrAppend(&out, "  history: ", calls, calls == 1 ? " call" : " calls",
                  " touched this page; perf printed ", samples, " of its samples above");
  if (unread.empty()) return out + "\n";
  absl::StrAppend(&out, " (", unread.size(), unread.size() == 1 ? " call is" : " calls are",
                  " in other chunks, not read by perf: ", before, " earlier, ", unread.size() - before, " later)\n");
  return out + UnreadText(unread);
}

std::string SummaryWriter::MethodsText(const std::vector<VersionId>& versions) const {
  const std::vector<CreatorMethod> methods = CreatorsByMethod(trace_.frames(), versions);
  uint64_t bytes = 0, regions = 0;
  for (const CreatorMethod& m : methods) {
    bytes += m.bytes;
    regions += m.regions;
  }
  // One region says it all in its answer above.
  if (regions < 2) return "";
  std::string out = absl::StrCat("\npageblame: the app methods that created these regions (", methods.size(),
                                 methods.size() == 1 ? " method, " : " methods, ", regions, " regions, ",
                                 HumanBytes(bytes), ")\n");
  for (const CreatorMethod& m : methods) {
    // The name last and whole: perf's output is read in a pager or a file.
    absl::StrAppend(&out, absl::StrFormat("  %10s %5u %-7s %4u %-6s  ", HumanBytes(m.bytes), m.regions,
                                          m.regions == 1 ? "region" : "regions", m.stacks.size(),
                                          m.stacks.size() == 1 ? "stack" : "stacks"),
                    render::MethodLine(m.group.method), "\n");
  }
  return out;
}

std::string SummaryWriter::Text(const std::vector<Target>& targets) const {
  std::string out = "\npageblame: who created (and committed) these pages\n";
  std::vector<VersionId> versions;
  for (const Target& t : targets) {
    out += "\n";
    if (t.is_region) {
      absl::StrAppend(&out, "region ", Hex(t.start), "-", Hex(t.end), " (",
                      EscapeName(t.source), ", ", HumanBytes(t.end - t.start), ")\n");
    }
    bool first = true;
    for (const analysis::QueryAnswer& a : Answers(t.addresses)) {
      if (!first) out += "\n";
      first = false;
      out += AnswerText(a);
      versions.push_back(a.version);
    }
  }
  return out + MethodsText(versions);
}

bool SummaryWriter::WriteJson(const std::vector<Target>& targets, std::FILE* out) const {
  std::vector<uint64_t> addresses;
  for (const Target& t : targets) addresses.insert(addresses.end(), t.addresses.begin(), t.addresses.end());
  const analysis::QueryOptions o = Options(addresses);
  return render::WriteQueryJson(trace_, o, analysis::Query(trace_.index(), o), out);
}

}  // namespace pageblame::plugin
