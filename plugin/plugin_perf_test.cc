// The dlfilter as users run it: the real `perf script` on the traces in
// traces/, with build/lib/pageblame-dlfilter.so. What perf printed is parsed
// back and checked against the library's own answers (render::QueryJson, what
// `pageblame query --json` prints) and against counts made without the plugin.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "processor/analysis/history.h"
#include "processor/analysis/kind_classifier.h"
#include "processor/base/format.h"
#include "processor/base/temp_dir_for_test.h"
#include "processor/perf/chunk_files.h"
#include "processor/render/query_report.h"
#include "processor/session/session.h"
#include "processor/session/selection.h"
#include "tests/cli_runner.h"
#include "tests/hostile_trace.h"
#include "tests/trace_fixtures.h"

namespace pageblame::plugin {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr uint64_t kPage = 4096;

// A trace of traces/ by name, or any trace by absolute path.
std::string TracePath(const std::string& trace) {
  return trace.rfind("/", 0) == 0 ? trace : pageblame::testing::TracePath(trace);
}
constexpr char kFields[] = "trace:pid,tid,time,event,trace";

// ---------------------------------------------------------------- running perf

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Read at once: perf's output with summary=json can be hundreds of MB, which
// an istreambuf_iterator reads a character at a time.
std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  std::string s(in ? static_cast<size_t>(in.tellg()) : 0, '\0');
  in.seekg(0);
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  return s;
}

std::string TempPath(const std::string& what) {
  static int n = 0;
  return pageblame::testing::ScratchPath(absl::StrCat(n++, "-", what));
}

struct PerfEvent {
  uint32_t pid = 0, tid = 0;
  std::string time;     // as perf prints it: "727.535935"
  std::string name;     // "syscalls:sys_enter_mmap"
  std::string payload;  // "addr: 0x..., len: 0x..."
};

struct PerfRun {
  int exit_code = -1;
  bool crashed = false;
  std::string out, err;
  std::vector<PerfEvent> events;  // the event lines perf printed
  std::string tail;               // what followed them (the plugin's summary)
};

// One line of perf's "pid/tid time: event: payload" output, parsed by hand:
// std::regex took minutes over the hundreds of thousands of lines perf prints
// for the .NET traces. Returns false for any other line (call-chain frames).
bool ParseEventLine(absl::string_view line, PerfEvent* e) {
  line = absl::StripLeadingAsciiWhitespace(line);
  auto take_digits = [&line](bool allow_dot) {
    size_t n = 0;
    while (n < line.size() && (absl::ascii_isdigit(line[n]) || (allow_dot && line[n] == '.'))) ++n;
    absl::string_view d = line.substr(0, n);
    line.remove_prefix(n);
    return d;
  };
  absl::string_view pid = take_digits(false);
  if (pid.empty() || !absl::ConsumePrefix(&line, "/")) return false;
  absl::string_view tid = take_digits(false);
  if (tid.empty() || line.empty() || !absl::ascii_isspace(line[0])) return false;
  line = absl::StripLeadingAsciiWhitespace(line);
  absl::string_view time = take_digits(true);
  if (std::count(time.begin(), time.end(), '.') != 1 || time.front() == '.' || time.back() == '.' ||
      !absl::ConsumePrefix(&line, ":") || line.empty() || !absl::ascii_isspace(line[0])) {
    return false;
  }
  line = absl::StripLeadingAsciiWhitespace(line);
  // The event name runs to its last ':' before a space ("syscalls:sys_enter_mmap:").
  absl::string_view token = line.substr(0, std::min(line.size(), line.find_first_of(" \t")));
  size_t colon = token.rfind(':');
  if (colon == absl::string_view::npos || colon == 0) return false;
  e->name = std::string(token.substr(0, colon));
  line.remove_prefix(colon + 1);
  if (!line.empty() && absl::ascii_isspace(line[0])) line.remove_prefix(1);
  e->payload = std::string(line);
  if (!absl::SimpleAtoi(pid, &e->pid) || !absl::SimpleAtoi(tid, &e->tid)) return false;
  e->time = std::string(time);
  return true;
}

void ParseEvents(PerfRun* r) {
  absl::string_view out = r->out;
  size_t at = 0;
  while (at < out.size()) {
    size_t end = out.find('\n', at);
    if (end == absl::string_view::npos) end = out.size();
    absl::string_view line = out.substr(at, end - at);
    if (absl::StartsWith(line, "pageblame:") || line == "[" || line == "[]") {
      // The plugin's summary: everything from here on.
      r->tail = std::string(out.substr(at));
      if (r->tail.back() != '\n') r->tail += '\n';
      return;
    }
    PerfEvent e;
    if (ParseEventLine(line, &e)) r->events.push_back(std::move(e));
    at = end + 1;
  }
}

// perf script [-i TRACE] -F FIELDS [--dlfilter SO --dlarg A ...]; `prefix` is
// put before perf (e.g. "cat X |").
PerfRun RunPerf(const std::string& input_args, const std::vector<std::string>& dlargs,
                bool plugin = true, const std::string& fields = kFields,
                const std::string& prefix = "") {
  std::string out = TempPath("out"), err = TempPath("err");
  // The bundled traces' binaries are found by build id in traces/buildid-cache
  // (a trace names them by the absolute path they were recorded at, which
  // exists only on the machine that recorded them): perf and the plugin
  // both read perf's --buildid-dir.
  std::string cmd = absl::StrCat(prefix, " perf --buildid-dir ", Quote(pageblame::testing::SourceDir() + "/traces/buildid-cache"),
                                 " script ", input_args);
  if (!fields.empty()) absl::StrAppend(&cmd, " -F ", fields);
  if (plugin) absl::StrAppend(&cmd, " --dlfilter ", Quote(PAGEBLAME_DLFILTER));
  for (const std::string& a : dlargs) absl::StrAppend(&cmd, " --dlarg ", Quote(a));
  absl::StrAppend(&cmd, " >", out, " 2>", err);
  int status = std::system(cmd.c_str());
  PerfRun r;
  r.crashed = WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) >= 128 &&
                                      WEXITSTATUS(status) != 255);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = Slurp(out);
  r.err = Slurp(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  ParseEvents(&r);
  return r;
}

PerfRun RunOnTrace(const std::string& trace, const std::vector<std::string>& dlargs) {
  return RunPerf("-i " + Quote(TracePath(trace)), dlargs);
}

// A memory-syscall sample, decided from perf's own text (not the plugin's code).
bool IsMemoryEvent(const PerfEvent& e) {
  static const std::regex kSpecific(
      R"(^syscalls:sys_(enter|exit)_(mmap|munmap|brk|mremap|mprotect|pkey_mprotect|madvise)$)");
  static const std::regex kRaw(R"(^NR (9|11|12|25|10|329|28) .*)");
  if (std::regex_match(e.name, kSpecific)) return true;
  if (e.name == "raw_syscalls:sys_enter" || e.name == "raw_syscalls:sys_exit") {
    return std::regex_match(e.payload, kRaw);
  }
  return false;
}

// ---------------------------------------------------------------- the library's answers

const session::Session* Loaded(const std::string& trace) {
  static auto* cache = new std::map<std::string, std::unique_ptr<session::Session>>();
  auto it = cache->find(trace);
  if (it == cache->end()) {
    session::SessionOptions o = testing::TraceSessionOptions(trace);
    auto t = session::Session::Open(o);
    it = cache->emplace(trace, t.ok() ? std::move(*t) : nullptr).first;
  }
  return it->second.get();
}

// Every trace of the manifest but the big DWARF recordings of JIT runtimes
// (node, the JVM): perf script unwinds every sample of those itself, 25-80 s
// a run, and these tests run it for many pages. The plugin is tested on the
// small DWARF traces (alloc, commit, vec, python) all the same.
std::vector<std::string> AllTraces() {
  std::set<std::string> names;
  for (const auto& row : pageblame::testing::ReadManifest()) {
    if (row["mode"] == "dwarf-z" || row["mode"] == "jit-dwarf-z") continue;
    names.insert(row["trace"]);
  }
  return {names.begin(), names.end()};
}

std::vector<std::string> UsableTraces() {
  std::vector<std::string> out;
  for (const std::string& t : AllTraces()) {
    if (Loaded(t) != nullptr) out.push_back(t);
  }
  return out;
}

Json Query(const std::string& trace, const std::vector<uint64_t>& addrs,
           std::optional<uint32_t> pid = std::nullopt) {
  analysis::QueryOptions o;
  o.addresses = addrs;
  o.pid = pid;
  o.processes = session::ProcessesOf(Loaded(trace)->index(), pid);
  // The regions' kinds, as `pageblame query` has them.
  analysis::KindClassifier kinds(Loaded(trace)->frames());
  o.kind_of = kinds.Function();
  return Json::parse(render::QueryJson(*Loaded(trace), o, analysis::Query(Loaded(trace)->index(), o)).dump());
}

std::string Seconds(const Json& t) { return absl::StrFormat("%.6f", t.get<double>()); }

using CallKey = std::pair<uint32_t, std::string>;  // (tid, exit time as perf prints it)

// The calls the plugin must keep for the page at `addr`: every change ever
// made at that address (analysis::PageHistory: earlier tenants too, where the
// first one came from, and madvise calls) but "split", whose call removed a
// neighbour, plus the creating and committing calls of those versions; in
// every process that ever had the page (or only `pid`). Identified as perf
// prints them: (tid, exit time), with their syscall.
std::map<CallKey, decode::Syscall> ExpectedCallsBySyscall(const std::string& trace, uint64_t addr,
                                                        std::optional<uint32_t> pid = std::nullopt) {
  const index::TraceIndex& idx = Loaded(trace)->index();
  std::map<CallKey, decode::Syscall> out;
  auto add = [&](EventId id) {
    if (!id.valid()) return;
    const index::CallEvent& ev = idx.event(id);
    out.emplace(CallKey{ev.tid, FormatTime(ev.time)}, ev.syscall);
  };
  for (uint32_t p = 0; p < idx.num_processes(); ++p) {
    if (pid && idx.process(p).pid != *pid) continue;
    for (const analysis::HistoryEntry& h : analysis::PageHistory(idx, p, addr)) {
      add(idx.version(h.version).origin);
      add(idx.version(h.version).commit);
      if (h.change != analysis::PageChange::kSplit) add(h.event);
    }
  }
  return out;
}
std::set<CallKey> ExpectedCalls(const std::string& trace, uint64_t addr,
                                std::optional<uint32_t> pid = std::nullopt) {
  std::set<CallKey> out;
  for (const auto& [key, sc] : ExpectedCallsBySyscall(trace, addr, pid)) out.insert(key);
  return out;
}

// perf script's output without the plugin (cached per trace).
const PerfRun& Unfiltered(const std::string& trace) {
  static auto* cache = new std::map<std::string, PerfRun>();
  auto it = cache->find(trace);
  if (it == cache->end()) {
    it = cache->emplace(trace, RunPerf("-i " + Quote(TracePath(trace)), {}, /*plugin=*/false)).first;
  }
  return it->second;
}

// Samples perf prints per call of `sc`: enter and exit, and with `perf trace
// record` also their raw_syscalls duplicates (raw enter, enter, raw exit, exit);
// a syscall recorded only as raw_syscalls (mprotect under the seed's
// command) has its two raw samples.
int SamplesPerCall(const std::string& trace, decode::Syscall sc) {
  const PerfRun& all = Unfiltered(trace);
  const std::string own = "syscalls:sys_exit_" + std::string(decode::SyscallName(sc));
  bool raw = false, specific = false;
  for (const PerfEvent& e : all.events) {
    raw |= e.name.rfind("raw_syscalls:", 0) == 0;
    specific |= e.name == own;
  }
  return raw && specific ? 4 : 2;
}
int SamplesOfCalls(const std::string& trace, const std::map<CallKey, decode::Syscall>& calls) {
  int n = 0;
  for (const auto& [key, sc] : calls) n += SamplesPerCall(trace, sc);
  return n;
}

// Pages worth asking about, from what the index knows: one per kind of
// version (created first/inner page, moved, forked, split, unmapped by the
// end, pre-trace; by the syscall that created it), the one with the longest
// history of its kind, so moves and splits are exercised.
std::vector<uint64_t> InterestingPages(const std::string& trace, size_t max_pages = 10) {
  const index::TraceIndex& idx = Loaded(trace)->index();
  std::map<std::string, std::pair<size_t, uint64_t>> by_kind;  // kind -> (history length, page)
  for (uint32_t i = 0; i < idx.num_versions(); ++i) {
    const index::Version& v = idx.version(VersionId(i));
    std::string kind;
    switch (v.begin) {
      case index::Begin::kCreated: kind = "created"; break;
      case index::Begin::kBeforeTrace: kind = "before"; break;
      case index::Begin::kSplit: kind = "split"; break;
      case index::Begin::kMovedIn: kind = "moved"; break;
      case index::Begin::kForked: kind = "forked"; break;
      case index::Begin::kCommitted: kind = "committed"; break;
      case index::Begin::kDecommitted: kind = "decommitted"; break;
      case index::Begin::kProtected: kind = "protected"; break;
    }
    if (v.origin.valid()) {
      kind += std::string("/") + std::string(decode::SyscallName(idx.event(v.origin).syscall));
    }
    if (v.end_kind != index::End::kNotEnded) kind += "/ended";
    for (uint64_t page : {v.start, v.end - v.start > kPage ? v.start + kPage : v.start}) {
      size_t n = analysis::PageHistory(idx, v.process, page).size();
      auto [it, inserted] = by_kind.try_emplace(kind + (page == v.start ? "" : "/inner"), n, page);
      if (!inserted && n > it->second.first) it->second = {n, page};
    }
  }
  std::vector<std::pair<size_t, uint64_t>> ranked;
  for (const auto& [kind, best] : by_kind) ranked.push_back(best);
  std::sort(ranked.rbegin(), ranked.rend());
  std::vector<uint64_t> out;
  for (const auto& [n, page] : ranked) {
    if (out.size() < max_pages && std::find(out.begin(), out.end(), page) == out.end()) out.push_back(page);
  }
  return out;
}

// ---------------------------------------------------------------- checking what perf printed

uint64_t Hex(const std::string& s) {
  uint64_t v = 0;
  std::string t = s.rfind("0x", 0) == 0 ? s.substr(2) : s;
  EXPECT_TRUE(absl::SimpleHexAtoi(t, &v)) << s;
  return v;
}

std::map<std::string, uint64_t> Fields(const std::string& payload) {
  std::map<std::string, uint64_t> out;
  for (absl::string_view f : absl::StrSplit(payload, ", ")) {
    std::vector<std::string> kv = absl::StrSplit(f, absl::MaxSplits(": ", 1));
    if (kv.size() == 2) out[kv[0]] = Hex(kv[1]);
  }
  return out;
}

// The program break before each brk call, from the unfiltered output: brk
// moves the break between the previous value and the one it returns.
const std::map<CallKey, uint64_t>& BreakBefore(const std::string& trace) {
  static auto* cache = new std::map<std::string, std::map<CallKey, uint64_t>>();
  if (auto it = cache->find(trace); it != cache->end()) return it->second;
  std::map<CallKey, uint64_t>& out = (*cache)[trace];
  std::map<uint32_t, uint64_t> brk;  // pid -> current break
  // Attach mode: the break when the trace began is the end of the [heap]
  // mapping perf synthesized. The regex is matched only on those lines:
  // over all of perf's output it took most of this test's minutes.
  static const std::regex kHeap(R"(PERF_RECORD_MMAP2 (\d+)/\d+: \[0x([0-9a-f]+)\(0x([0-9a-f]+)\).*\[heap\])");
  const std::string sideband = RunPerf("-i " + Quote(TracePath(trace)) + " --show-mmap-events", {}, false, "").out;
  for (absl::string_view line : absl::StrSplit(sideband, '\n')) {
    if (!absl::StrContains(line, "PERF_RECORD_MMAP2") || !absl::StrContains(line, "[heap]")) continue;
    std::match_results<absl::string_view::const_iterator> m;
    if (!std::regex_search(line.begin(), line.end(), m, kHeap)) continue;
    brk.emplace(std::stoul(m[1]), Hex(m[2]) + Hex(m[3]));
  }
  for (const PerfEvent& e : Unfiltered(trace).events) {
    if (e.name != "syscalls:sys_exit_brk") continue;
    uint64_t now = Hex(e.payload);
    out[{e.tid, e.time}] = brk.count(e.pid) ? brk[e.pid] : now;
    brk[e.pid] = now;
  }
  return out;
}

// Every kept call (enter+exit of syscalls:*) touched the page, or the place
// the page was before an mremap moved it (walking back in time).
void ExpectCallsTouch(const std::string& trace, const std::vector<PerfEvent>& events, uint64_t page) {
  const std::map<CallKey, uint64_t>& break_before = BreakBefore(trace);
  struct Call {
    std::string name;
    std::map<std::string, uint64_t> args;
    uint64_t ret = 0;
    std::string time;
    uint32_t tid = 0;
  };
  std::vector<Call> calls;
  std::map<uint32_t, Call> open;
  for (const PerfEvent& e : events) {
    if (e.name.rfind("syscalls:sys_enter_", 0) == 0) {
      open[e.tid] = Call{e.name.substr(19), Fields(e.payload), 0, e.time, e.tid};
    } else if (e.name.rfind("syscalls:sys_exit_", 0) == 0 && open.count(e.tid)) {
      Call c = open[e.tid];
      c.ret = Hex(e.payload);
      c.time = e.time;
      calls.push_back(c);
      open.erase(e.tid);
    }
  }
  std::set<uint64_t> places = {page & ~(kPage - 1)};
  auto touches = [&](uint64_t start, uint64_t len) {
    for (uint64_t p : places) {
      if (p + kPage > start && p < start + len) return true;
    }
    return false;
  };
  for (auto it = calls.rbegin(); it != calls.rend(); ++it) {
    const Call& c = *it;
    bool ok = false;
    if (c.name == "mmap") {
      ok = touches(c.ret, c.args.at("len"));
    } else if (c.name == "mprotect" || c.name == "pkey_mprotect") {
      ok = touches(c.args.at("start"), c.args.at("len"));
    } else if (c.name == "madvise") {
      ok = touches(c.args.at("start"), c.args.at("len_in"));
    } else if (c.name == "munmap") {
      ok = touches(c.args.at("addr"), c.args.at("len"));
    } else if (c.name == "brk") {
      auto old = break_before.find({c.tid, c.time});
      ASSERT_NE(old, break_before.end()) << c.time;
      uint64_t lo = std::min(old->second, c.ret), hi = std::max(old->second, c.ret);
      lo &= ~(kPage - 1);
      hi = (hi + kPage - 1) & ~(kPage - 1);
      ok = touches(lo, hi - lo);
    } else if (c.name == "mremap") {
      uint64_t old_addr = c.args.at("addr");
      ok = touches(old_addr, c.args.at("old_len")) || touches(c.ret, c.args.at("new_len"));
      for (uint64_t p : std::set<uint64_t>(places)) {
        if (p >= c.ret && p < c.ret + c.args.at("new_len")) places.insert(p - c.ret + old_addr);
      }
    }
    EXPECT_TRUE(ok) << c.name << " at " << c.time << " does not touch page 0x" << std::hex << page;
  }
}

// The stop summary, parsed: one block per answer.
struct SummaryFrame {
  std::string ip, symbol, dso;
};
struct SummaryAnswer {
  std::string address;
  std::optional<uint32_t> pid;
  std::string region;  // "0xS-0xE" or ""
  bool before_trace = false;
  std::string created_by, at_time;
  uint32_t at_tid = 0;
  std::vector<SummaryFrame> stack;
  std::string committed_by, commit_time;  // "" when it names no commit
  std::vector<SummaryFrame> commit_stack;
  std::string method;  // the "app method:" line, "" without a creating stack
  int history_calls = -1, history_samples = -1;
};

std::vector<SummaryAnswer> ParseSummary(const std::string& tail) {
  static const std::regex kHead(R"(^(0x[0-9a-f]+) in pid (\d+) \(.*\)$)");
  static const std::regex kNone(R"(^(0x[0-9a-f]+): not mapped in any traced process.*$)");
  static const std::regex kRegion(R"(^  region (0x[0-9a-f]+-0x[0-9a-f]+) .*$)");
  static const std::regex kAt(R"(^  at (\S+) by .* (\d+)/(\d+)$)");
  static const std::regex kFrame(R"(^    #\d+ (0x[0-9a-f]+) (.*?)(\+0x[0-9a-f]+)? \((.*)\)$)");
  static const std::regex kHistory(R"(^  history: (\d+) calls? touched this page; perf printed (\d+) of its samples above$)");
  std::vector<SummaryAnswer> out;
  std::istringstream in(tail);
  std::string line;
  std::smatch m;
  bool in_commit = false;  // the lines after "committed by" describe the commit
  while (std::getline(in, line)) {
    if (line.rfind("pageblame: the app methods", 0) == 0) break;  // ParseMethodRows'
    if (std::regex_match(line, m, kHead)) {
      in_commit = false;
      out.emplace_back();
      out.back().address = m[1];
      out.back().pid = std::stoul(m[2]);
    } else if (std::regex_match(line, m, kNone)) {
      in_commit = false;
      out.emplace_back();
      out.back().address = m[1];
    } else if (out.empty()) {
      continue;
    } else if (std::regex_match(line, m, kRegion)) {
      out.back().region = m[1];
    } else if (line.rfind("  created by ", 0) == 0) {
      out.back().created_by = line.substr(13);
    } else if (line.rfind("  committed by ", 0) == 0) {
      in_commit = true;
      out.back().committed_by = line.substr(15);
    } else if (std::regex_match(line, m, kAt)) {
      (in_commit ? out.back().commit_time : out.back().at_time) = m[1];
      if (!in_commit) out.back().at_tid = std::stoul(m[3]);
    } else if (std::regex_match(line, m, kFrame)) {
      (in_commit ? out.back().commit_stack : out.back().stack).push_back({m[1], m[2], m[4]});
    } else if (line.rfind("  app method: ", 0) == 0) {
      out.back().method = line.substr(14);
    } else if (line.rfind("  existed before the trace", 0) == 0) {
      out.back().before_trace = true;
    } else if (std::regex_match(line, m, kHistory)) {
      out.back().history_calls = std::stoi(m[1]);
      out.back().history_samples = std::stoi(m[2]);
    }
  }
  return out;
}

// The summary's last section: one row per app method.
struct MethodRow {
  std::string bytes;  // as printed: "32.0 MiB"
  uint64_t regions = 0, stacks = 0;
  std::string method;
};
struct MethodRows {
  std::string header;  // "" if there is no such section
  std::vector<MethodRow> rows;
};

MethodRows ParseMethodRows(const std::string& tail) {
  static const std::regex kRow(R"(^ +(\S+ \S+) +(\d+) regions? +(\d+) stacks? +(\S.*)$)");
  MethodRows out;
  std::istringstream in(tail);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (line.rfind("pageblame: the app methods", 0) == 0) {
      out.header = line;
    } else if (!out.header.empty() && std::regex_match(line, m, kRow)) {
      out.rows.push_back({m[1], std::stoull(m[2]), std::stoull(m[3]), m[4]});
    } else if (!out.header.empty() && !line.empty()) {
      break;  // the plugin's closing line
    }
  }
  return out;
}

// "Program::Leak -> NativeMemory::Alloc -> malloc" -> "Program::Leak": the
// method, without the context its stack (or its row's top stack) adds.
std::string MethodName(const std::string& line) {
  return std::vector<std::string>(absl::StrSplit(line, " -> "))[0];
}

// The summary says what `pageblame query --json` says for the same addresses.
void ExpectSummaryMatchesQuery(const std::string& trace, const PerfRun& r,
                               const std::vector<uint64_t>& addrs, std::optional<uint32_t> pid) {
  Json q = Query(trace, addrs, pid);
  std::vector<SummaryAnswer> s = ParseSummary(r.tail);
  ASSERT_EQ(s.size(), q.size()) << r.tail;
  for (size_t i = 0; i < s.size(); ++i) {
    const Json& a = q[i];
    SCOPED_TRACE(a.dump());
    EXPECT_EQ(s[i].address, a["address"].get<std::string>());
    EXPECT_EQ(s[i].pid.has_value(), !a["pid"].is_null());
    if (s[i].pid && !a["pid"].is_null()) {
      EXPECT_EQ(*s[i].pid, a["pid"].get<uint32_t>());
    }
    if (a["region"].is_null()) {
      EXPECT_EQ(s[i].region, "");
    } else {
      EXPECT_EQ(s[i].region, a["region"]["start"].get<std::string>() + "-" +
                                 a["region"]["end"].get<std::string>());
    }
    const Json& o = a["origin"];
    EXPECT_EQ(s[i].before_trace, !a["region"].is_null() && o.is_null());
    const Json& c = a["commit"];
    if (c.is_null()) {
      EXPECT_EQ(s[i].commit_time, "");
    } else {
      EXPECT_EQ(s[i].committed_by.rfind(c["syscall"].get<std::string>() + "(", 0), 0u);
      EXPECT_EQ(s[i].commit_time, Seconds(c["time"]));
      EXPECT_EQ(s[i].commit_stack.size(), c["stack"].size());
    }
    if (o.is_null()) {
      EXPECT_TRUE(s[i].stack.empty());
      continue;
    }
    EXPECT_EQ(s[i].created_by.rfind(o["syscall"].get<std::string>() + "(", 0), 0u) << s[i].created_by;
    EXPECT_EQ(s[i].at_time, Seconds(o["time"]));
    EXPECT_EQ(s[i].at_tid, o["tid"].get<uint32_t>());
    // The creating call is in the history (as "created") with the same text.
    bool found = false;
    for (const Json& h : a["history"]) {
      found |= h["change"] == "created" && h["call"] == s[i].created_by &&
               Seconds(h["time"]) == s[i].at_time;
    }
    EXPECT_TRUE(found) << s[i].created_by;
    ASSERT_EQ(s[i].stack.size(), o["stack"].size());
    for (size_t f = 0; f < s[i].stack.size(); ++f) {
      const Json& jf = o["stack"][f];
      EXPECT_EQ(s[i].stack[f].ip, jf["ip"].get<std::string>());
      // perf and the library name a frame alike; where the library has no
      // name, perf may (or print [unknown]).
      if (!jf["symbol"].is_null()) {
        EXPECT_EQ(s[i].stack[f].symbol, jf["symbol"].get<std::string>());
      }
    }
  }
}

// ---------------------------------------------------------------- tests

TEST(PluginPerfTest, TracesAreThere) {
  std::vector<std::string> usable = UsableTraces();
  EXPECT_GE(usable.size(), 5u) << absl::StrJoin(usable, " ");
}

TEST(PluginPerfTest, NoPagesKeepsEveryMemoryEvent) {
  for (const std::string& trace : UsableTraces()) {
    SCOPED_TRACE(trace);
    const PerfRun& all = Unfiltered(trace);
    ASSERT_EQ(all.exit_code, 0) << all.err;
    std::vector<std::string> expected;
    for (const PerfEvent& e : all.events) {
      if (IsMemoryEvent(e)) expected.push_back(absl::StrCat(e.tid, " ", e.time, " ", e.name));
    }
    ASSERT_FALSE(expected.empty());
    PerfRun kept = RunOnTrace(trace, {});
    ASSERT_EQ(kept.exit_code, 0) << kept.err;
    std::vector<std::string> got;
    for (const PerfEvent& e : kept.events) got.push_back(absl::StrCat(e.tid, " ", e.time, " ", e.name));
    EXPECT_EQ(got, expected);
    EXPECT_THAT(kept.tail, HasSubstr(absl::StrCat("perf printed ", expected.size(), " of ", expected.size(),
                                                  " memory-syscall samples")));
    EXPECT_LT(expected.size(), all.events.size() + 1);
  }
}

TEST(PluginPerfTest, NoPagesWithPidKeepsThatProcess) {
  for (std::string trace : {"rules-trace.data", "rules-record.data"}) {
    SCOPED_TRACE(trace);
    const PerfRun& all = Unfiltered(trace);
    std::map<uint32_t, size_t> per_pid;
    for (const PerfEvent& e : all.events) per_pid[e.pid] += IsMemoryEvent(e);
    ASSERT_GE(per_pid.size(), 2u);
    for (const auto& [pid, n] : per_pid) {
      PerfRun kept = RunOnTrace(trace, {absl::StrCat("pid=", pid)});
      ASSERT_EQ(kept.exit_code, 0) << kept.err;
      EXPECT_EQ(kept.events.size(), n) << pid;
      for (const PerfEvent& e : kept.events) EXPECT_EQ(e.pid, pid);
    }
  }
}

// Asks for each interesting page of `trace` (by an address inside it) and
// checks what perf printed and what the summary says.
void CheckPages(const std::string& trace) {
  std::vector<uint64_t> pages = InterestingPages(trace);
  ASSERT_GE(pages.size(), 2u);
  for (uint64_t page : pages) {
    SCOPED_TRACE(absl::StrCat(trace, " page 0x", absl::Hex(page)));
    uint64_t addr = page + 0x123;
    PerfRun r = RunOnTrace(trace, {absl::StrCat("pages=0x", absl::Hex(addr))});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const PerfEvent& e : r.events) EXPECT_TRUE(IsMemoryEvent(e)) << e.name << " " << e.payload;
    std::set<CallKey> expected = ExpectedCalls(trace, addr);
    EXPECT_EQ(r.events.size(), SamplesOfCalls(trace, ExpectedCallsBySyscall(trace, addr)));
    std::set<CallKey> exits;
    for (const PerfEvent& e : r.events) {
      if (e.name.find("sys_exit") != std::string::npos) exits.insert({e.tid, e.time});
    }
    for (const CallKey& k : expected) {
      EXPECT_TRUE(exits.count(k)) << "call of tid " << k.first << " at " << k.second << " not kept";
    }
    ExpectCallsTouch(trace, r.events, page);
    ExpectSummaryMatchesQuery(trace, r, {addr}, std::nullopt);
    // Each answer counts the samples perf printed for its page's calls.
    for (const SummaryAnswer& s : ParseSummary(r.tail)) {
      if (!s.pid) continue;
      EXPECT_EQ(s.history_samples, SamplesOfCalls(trace, ExpectedCallsBySyscall(trace, addr, *s.pid)));
      EXPECT_EQ(s.history_calls, static_cast<int>(ExpectedCalls(trace, addr, *s.pid).size()));
    }
  }
}

TEST(PluginPerfTest, PagesKeepTheirHistoryAndNameTheCreator) {
  for (const std::string& trace : UsableTraces()) CheckPages(trace);
}

// A trace no test has seen: recorded now, both ways the seeds record.
TEST(PluginPerfTest, FreshRecordings) {
  if (geteuid() != 0) GTEST_SKIP() << "recording needs root";
  const std::string rules = pageblame::testing::TracePath("bin/rules");
  const std::string dir = TempPath("fresh");
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  const std::string events = "syscalls:*_mmap,syscalls:*_munmap,syscalls:*_brk,syscalls:*_mremap";
  const std::string record_events =
      "syscalls:sys_enter_mmap,syscalls:sys_exit_mmap,syscalls:sys_enter_munmap,"
      "syscalls:sys_exit_munmap,syscalls:sys_enter_brk,syscalls:sys_exit_brk,"
      "syscalls:sys_enter_mremap,syscalls:sys_exit_mremap";
  for (const auto& [name, cmd] : std::vector<std::pair<std::string, std::string>>{
           {"trace", "perf trace record --call-graph fp -e '" + events + "' -o " + dir + "/trace.data -- "},
           {"record", "perf record -q -g -e " + record_events + " -o " + dir + "/record.data -- "}}) {
    SCOPED_TRACE(name);
    std::string full = cmd + rules + " " + dir + " " + name + " >" + dir + "/" + name + ".log 2>&1";
    ASSERT_EQ(std::system(full.c_str()), 0) << Slurp(dir + "/" + name + ".log");
    const std::string trace = dir + "/" + name + ".data";
    ASSERT_NE(Loaded(trace), nullptr);
    CheckPages(trace);
    // rules maps a data file of its own, /tmp/pageblame-rules.<pid>.dat, and
    // leaves it (the bundled traces' maps name it); its pids are in the names
    // of the maps files it wrote.
    for (const auto& f : std::filesystem::directory_iterator(dir)) {
      const std::string base = f.path().filename();
      std::vector<std::string> parts = absl::StrSplit(base, '.');
      if (parts.size() == 3 && parts[0] == name && parts[2] == "maps") {
        std::remove(absl::StrCat("/tmp/pageblame-rules.", parts[1], ".dat").c_str());
      }
    }
  }
  std::system(("rm -rf " + dir).c_str());
}

TEST(PluginPerfTest, SeveralPagesAtOnceKeepTheUnion) {
  const std::string trace = "rules-trace.data";
  std::vector<uint64_t> pages = InterestingPages(trace);
  ASSERT_GE(pages.size(), 3u);
  std::map<CallKey, decode::Syscall> expected;
  std::vector<std::string> spelled;
  for (uint64_t p : pages) {
    for (const auto& k : ExpectedCallsBySyscall(trace, p)) expected.insert(k);
    spelled.push_back(absl::StrCat("0x", absl::Hex(p)));
  }
  PerfRun r = RunOnTrace(trace, {"pages=" + absl::StrJoin(spelled, ",")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.events.size(), SamplesOfCalls(trace, expected));
  ExpectSummaryMatchesQuery(trace, r, pages, std::nullopt);
}

TEST(PluginPerfTest, SummaryJsonIsQueryJson) {
  for (const std::string& trace : UsableTraces()) {
    SCOPED_TRACE(trace);
    std::vector<uint64_t> pages = InterestingPages(trace, 4);
    std::vector<std::string> spelled;
    for (uint64_t p : pages) spelled.push_back(absl::StrCat("0x", absl::Hex(p)));
    PerfRun r = RunOnTrace(trace, {"pages=" + absl::StrJoin(spelled, ","), "summary=json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    Json got = Json::parse(r.tail, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(got.is_discarded()) << r.tail;
    EXPECT_EQ(got, Query(trace, pages));
    EXPECT_GE(got.size(), pages.size());  // one answer or more per page
    // And what the CLI prints, byte for byte.
    std::string out = TempPath("query.json");
    std::string cmd = absl::StrCat(PAGEBLAME_BINARY_DIR, "/bin/pageblame query --json -i ",
                                   Quote(TracePath(trace)), " ", absl::StrJoin(spelled, " "), " >", out,
                                   " 2>/dev/null");
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    EXPECT_EQ(r.tail, Slurp(out));
    std::remove(out.c_str());
  }
}

TEST(PluginPerfTest, SaysWhetherAPageWasResident) {
  // traces/residency.data has its snapshots beside it (TRACE.rss): the
  // summary says whether the page was in RAM, as `pageblame query` does.
  std::string every4th;  // the first page of the region written every 4th page
  for (const auto& e : std::filesystem::directory_iterator(TracePath("truth"))) {
    if (e.path().filename().string().rfind("residency.", 0) != 0) continue;
    std::vector<std::string> f = absl::StrSplit(Slurp(e.path()), '\t');
    if (f.size() > 2 && f[0] == "every4th") every4th = f[2];
  }
  ASSERT_FALSE(every4th.empty());
  PerfRun text = RunOnTrace("residency.data", {"pages=" + every4th});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.tail, HasSubstr("  resident (snapshot at ")) << text.tail;
  PerfRun json = RunOnTrace("residency.data", {"pages=" + every4th, "summary=json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  std::string out = TempPath("query-rss.json");
  std::string cmd = absl::StrCat(PAGEBLAME_BINARY_DIR, "/bin/pageblame query --json -i ",
                                 Quote(TracePath("residency.data")), " ", every4th, " >", out, " 2>/dev/null");
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  EXPECT_EQ(json.tail, Slurp(out));
  EXPECT_EQ(Json::parse(json.tail)[0]["resident"]["state"], "resident");
  std::remove(out.c_str());
}

TEST(PluginPerfTest, AtAnswersForThatMoment) {
  // A page unmapped before the end: at=T inside its life answers with its
  // region, as `pageblame query --at T` does; at the end, how it went.
  const std::string trace = "rules-trace.data";
  const index::TraceIndex& idx = Loaded(trace)->index();
  std::optional<std::pair<uint64_t, uint64_t>> page_at;  // (page, a time it was mapped)
  for (uint32_t i = 0; i < idx.num_versions() && !page_at; ++i) {
    const index::Version& v = idx.version(VersionId(i));
    if (v.origin.valid() && v.end_kind == index::End::kUnmapped && v.t_to > v.t_from + 2000 &&
        Query(trace, {v.start})[0]["region"].is_null()) {
      page_at = std::make_pair(v.start, v.t_from + 1000);
    }
  }
  ASSERT_TRUE(page_at.has_value());
  const std::string at = FormatTime(page_at->second);
  const std::string page = absl::StrCat("0x", absl::Hex(page_at->first));
  PerfRun r = RunOnTrace(trace, {"pages=" + page, "at=" + at, "summary=json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string out = TempPath("query-at.json");
  std::string cmd = absl::StrCat(PAGEBLAME_BINARY_DIR, "/bin/pageblame query --json -i ",
                                 Quote(TracePath(trace)), " --at ", at, " ", page, " >", out, " 2>/dev/null");
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  EXPECT_EQ(r.tail, Slurp(out));
  Json got = Json::parse(r.tail);
  ASSERT_FALSE(got.empty());
  EXPECT_FALSE(got[0]["region"].is_null()) << r.tail;
  PerfRun end = RunOnTrace(trace, {"pages=" + page});
  EXPECT_THAT(end.tail, HasSubstr("not mapped; it was in")) << end.tail;
  std::remove(out.c_str());
}

TEST(PluginPerfTest, PidNarrowsToOneProcess) {
  // A page mapped in the parent and in its fork child.
  const std::string trace = "rules-trace.data";
  const index::TraceIndex& idx = Loaded(trace)->index();
  std::optional<uint64_t> page;
  uint32_t child = 0;
  for (uint32_t i = 0; i < idx.num_versions() && !page; ++i) {
    const index::Version& v = idx.version(VersionId(i));
    if (v.begin == index::Begin::kForked && v.origin.valid() && v.end_kind == index::End::kNotEnded) {
      page = v.start;
      child = idx.process(v.process).pid;
    }
  }
  ASSERT_TRUE(page.has_value());
  std::string arg = absl::StrCat("pages=0x", absl::Hex(*page));
  PerfRun both = RunOnTrace(trace, {arg});
  PerfRun only = RunOnTrace(trace, {arg, absl::StrCat("pid=", child)});
  ASSERT_EQ(only.exit_code, 0) << only.err;
  std::vector<SummaryAnswer> answers = ParseSummary(only.tail);
  ASSERT_FALSE(answers.empty());
  for (const SummaryAnswer& a : answers) EXPECT_EQ(a.pid, child);
  EXPECT_GT(ParseSummary(both.tail).size(), answers.size());
  EXPECT_EQ(only.events.size(), SamplesOfCalls(trace, ExpectedCallsBySyscall(trace, *page, child)));
  ExpectSummaryMatchesQuery(trace, only, {*page}, child);
}

TEST(PluginPerfTest, RegionsFileCoversEveryPage) {
  for (std::string trace : {"rules-trace.data", "rules-record.data", "attach-trace.data"}) {
    SCOPED_TRACE(trace);
    const index::TraceIndex& idx = Loaded(trace)->index();
    // Regions spanning neighbouring versions of the first process, each
    // widened by a page on both sides, at most 64 pages.
    std::vector<std::pair<uint64_t, uint64_t>> regions;
    const auto& live = idx.process(0).live;
    for (auto it = live.begin(); it != live.end() && regions.size() < 6; ++it) {
      const index::Version& v = idx.version(it->second.version);
      uint64_t start = v.start - kPage, end = std::min(v.end + kPage, start + 64 * kPage);
      if (regions.empty() || start >= regions.back().second) regions.push_back({start, end});
    }
    std::string path = TempPath("regions.txt");
    {
      std::ofstream f(path);
      f << "# start-end\n";
      for (const auto& [s, e] : regions) f << "0x" << std::hex << s << "-0x" << e << "\n";
    }
    PerfRun r = RunOnTrace(trace, {"regions=" + path});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Brute force: the calls of every page of every region.
    std::map<CallKey, decode::Syscall> expected;
    std::set<std::string> mapped;  // (pid, region, origin time) of every page at the end
    for (const auto& [s, e] : regions) {
      for (uint64_t p = s; p < e; p += kPage) {
        for (const auto& k : ExpectedCallsBySyscall(trace, p)) expected.insert(k);
        for (const Json& a : Query(trace, {p})) {
          if (!a["region"].is_null()) mapped.insert(absl::StrCat(a["pid"].dump(), a["region"].dump(), a["origin"].is_null() ? "-" : Seconds(a["origin"]["time"])));
        }
      }
    }
    EXPECT_EQ(r.events.size(), SamplesOfCalls(trace, expected));
    std::set<CallKey> exits;
    for (const PerfEvent& e : r.events) {
      if (e.name.find("sys_exit") != std::string::npos) exits.insert({e.tid, e.time});
    }
    for (const auto& [k, sc] : expected) EXPECT_TRUE(exits.count(k)) << k.first << " " << k.second;
    // The JSON summary answers for every piece: the same regions and origins.
    PerfRun j = RunOnTrace(trace, {"regions=" + path, "summary=json"});
    Json got = Json::parse(j.tail, nullptr, false);
    ASSERT_FALSE(got.is_discarded()) << j.tail;
    std::set<std::string> answered;
    for (const Json& a : got) {
      if (!a["region"].is_null()) answered.insert(absl::StrCat(a["pid"].dump(), a["region"].dump(), a["origin"].is_null() ? "-" : Seconds(a["origin"]["time"])));
    }
    EXPECT_EQ(answered, mapped);
    std::remove(path.c_str());
  }
}

// Issue 41: the summary ends with the answered regions grouped by the app
// method that created them, as `attribute`'s first screen groups stacks: one
// row per method, its bytes, regions and stacks the sums of its stacks' (each
// region once), its name whole and the one each answer of its regions
// names, which is the function at the JSON's first_app_frame. On the .NET
// demo, node (JIT map) and a C program whose cache_block two paths reach.
// `query --json` text (DumpJson's layout: an answer's keys on lines of their
// own, two spaces in) with each answer's "history" array emptied. Cut by
// lines: parsing a gigabyte of histories at -O0 took minutes.
std::string WithoutHistories(absl::string_view json) {
  std::string out;
  size_t at = 0;
  bool skipping = false;
  while (at < json.size()) {
    size_t end = std::min(json.size(), json.find('\n', at));
    absl::string_view line = json.substr(at, end - at);
    at = end + 1;
    if (skipping) {
      skipping = !absl::StartsWith(line, "  ]");
      if (!skipping) absl::StrAppend(&out, "  \"history\": []", line.substr(3), "\n");
      continue;
    }
    if (line == "  \"history\": [") {
      skipping = true;
      continue;
    }
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

TEST(PluginPerfTest, SummaryGroupsRegionsByAppMethod) {
  struct Run {
    std::string trace, regions, pid;
  };
  const std::vector<Run> runs = {
      // (node-trace, 273 regions in 13 methods, passes too; left out: perf
      // script over it costs this live tier half a minute.)
      {"dotnet/dotnet-leak.data", "dotnet/dotnet-leak.23474.truth.ranges", "23474"},
      {"alloc-dwarf.data", "maps/alloc-dwarf.12300.maps", "12300"},
  };
  for (const Run& run : runs) {
    SCOPED_TRACE(run.trace);
    const std::vector<std::string> args = {"regions=" + TracePath(run.regions), "pid=" + run.pid};
    PerfRun r = RunOnTrace(run.trace, args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::vector<SummaryAnswer> answers = ParseSummary(r.tail);
    std::vector<std::string> json_args = args;
    json_args.push_back("summary=json");
    // Only the origins are compared: the histories (a .NET GC page's runs to
    // megabytes, ~1 GB for the whole list) are cut out before parsing.
    const Json j = Json::parse(WithoutHistories(RunOnTrace(run.trace, json_args).tail));
    ASSERT_EQ(j.size(), answers.size());

    // Expected, from the answers: each stack's distinct regions, each
    // method's stacks.
    struct Stack {
      std::set<std::string> regions;
      uint64_t bytes = 0;
    };
    std::map<std::string, std::map<std::string, Stack>> methods;  // method -> stack -> totals
    std::map<std::string, std::set<std::string>> lines;           // method -> its answers' lines
    bool grouped = false;
    for (size_t i = 0; i < answers.size(); ++i) {
      const SummaryAnswer& a = answers[i];
      if (a.stack.empty()) {
        EXPECT_EQ(a.method, "") << a.address;
        continue;
      }
      ASSERT_NE(a.method, "") << a.address;
      const Json& origin = j[i]["origin"];
      ASSERT_FALSE(origin.is_null()) << a.address;
      if (origin["first_app_frame"].is_null()) {
        EXPECT_TRUE(absl::StartsWith(a.method, "(no app frame) ")) << a.method;
      } else {
        const std::string symbol = origin["stack"][origin["first_app_frame"].get<size_t>()]["symbol"];
        const std::string name = std::string(absl::StripPrefix(MethodName(a.method), "JS:"));
        EXPECT_TRUE(absl::StrContains(symbol, name)) << a.method << " vs " << symbol;
      }
      std::string stack = absl::StrCat(*a.pid);
      for (const SummaryFrame& f : a.stack) absl::StrAppend(&stack, " ", f.ip);
      Stack& st = methods[MethodName(a.method)][stack];
      lines[MethodName(a.method)].insert(a.method);
      if (st.regions.insert(a.region).second) {
        const std::vector<std::string> ends = absl::StrSplit(a.region, '-');
        st.bytes += std::stoull(ends[1], nullptr, 16) - std::stoull(ends[0], nullptr, 16);
      }
    }
    const MethodRows got = ParseMethodRows(r.tail);
    ASSERT_FALSE(got.header.empty()) << r.tail.substr(0, 2000);
    ASSERT_EQ(got.rows.size(), methods.size());
    std::set<std::string> seen;
    uint64_t all_regions = 0;
    for (const MethodRow& row : got.rows) {
      ASSERT_TRUE(seen.insert(MethodName(row.method)).second) << "two rows for " << row.method;
      // Whole: the row says what an answer of one of its stacks says.
      EXPECT_TRUE(lines[MethodName(row.method)].count(row.method)) << row.method;
      auto it = methods.find(MethodName(row.method));
      ASSERT_NE(it, methods.end()) << "no answer names " << row.method;
      uint64_t bytes = 0, regions = 0;
      for (const auto& [stack, st] : it->second) {
        bytes += st.bytes;
        regions += st.regions.size();
      }
      EXPECT_EQ(row.stacks, it->second.size()) << row.method;
      EXPECT_EQ(row.regions, regions) << row.method;
      EXPECT_EQ(row.bytes, HumanBytes(bytes)) << row.method;
      grouped |= it->second.size() > 1;
      all_regions += regions;
    }
    EXPECT_THAT(got.header, HasSubstr(absl::StrCat(got.rows.size(), " methods, ", all_regions, " regions")));
    if (run.trace == "alloc-dwarf.data") {
      EXPECT_TRUE(grouped) << "nothing grouped: the test would not see a wrong sum";
      EXPECT_TRUE(seen.count("cache_block")) << got.header;
    }
  }
}

TEST(PluginPerfTest, DefaultOutputNamesFramesAsPerfDoes) {
  // perf's own call chains are printed; the summary's frames carry the
  // names perf printed for the creating call.
  const std::string trace = "rules-trace.data";
  const index::TraceIndex& idx = Loaded(trace)->index();
  std::optional<uint64_t> page;
  for (const auto& [start, region] : idx.process(0).live) {
    const index::Version& v = idx.version(region.version);
    if (v.origin.valid() && idx.stacks().Ips(idx.event(v.origin).stack).size() >= 3) {
      page = v.start;
      break;
    }
  }
  ASSERT_TRUE(page.has_value());
  PerfRun r = RunPerf("-i " + Quote(TracePath(trace)), {absl::StrCat("pages=0x", absl::Hex(*page))},
                      true, /*fields=*/"");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<SummaryAnswer> s = ParseSummary(r.out.substr(r.out.find("pageblame: who created")));
  ASSERT_FALSE(s.empty());
  ASSERT_GE(s[0].stack.size(), 3u);
  for (const SummaryFrame& f : s[0].stack) {
    // perf prints "\t    5fa5 main+0x12c (/work/main/traces/bin/rules)".
    std::string needle = absl::StrCat(f.symbol, "+");
    EXPECT_THAT(r.out.substr(0, r.out.find("pageblame:")), HasSubstr(needle + "0x")) << f.symbol;
    EXPECT_THAT(r.out, HasSubstr(absl::StrCat(" (", f.dso, ")\n")));
  }
}

TEST(PluginPerfTest, PipeInputNeedsTraceArgument) {
  const std::string trace = TracePath("rules-pipe.data");
  uint64_t page = InterestingPages("rules-pipe.data").front();
  std::string arg = absl::StrCat("pages=0x", absl::Hex(page));
  PerfRun piped = RunPerf("", {arg}, true, kFields, "cat " + Quote(trace) + " |");
  EXPECT_FALSE(piped.crashed);
  EXPECT_NE(piped.exit_code, 0);
  EXPECT_THAT(piped.err, HasSubstr("trace=FILE"));
  EXPECT_EQ(std::count(piped.err.begin(), piped.err.end(), '\n'), 1) << piped.err;

  PerfRun with_trace = RunPerf("", {arg, "trace=" + trace}, true, kFields, "cat " + Quote(trace) + " |");
  ASSERT_EQ(with_trace.exit_code, 0) << with_trace.err;
  PerfRun from_file = RunOnTrace("rules-pipe.data", {arg});
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_EQ(with_trace.out, from_file.out);
  EXPECT_EQ(from_file.events.size(),
            SamplesOfCalls("rules-pipe.data", ExpectedCallsBySyscall("rules-pipe.data", page)));
}

TEST(PluginPerfTest, BadArgumentsFailCleanly) {
  std::string missing_table = TempPath("no-such-table.txt");
  for (const auto& [arg, why] : std::vector<std::pair<std::string, std::string>>{
           {"pages=0xzz", "bad address"},
           {"pages=", "empty value"},
           {"pid=abc", "process id"},
           {"summary=yaml", "text, json or none"},
           {"color=red", "unknown key"},
           {"0x7f00", "KEY=VALUE"},
           {"regions=" + missing_table, missing_table},
           {"trace=/nonexistent/trace.data", "/nonexistent/trace.data"},
           {"trace=" + TracePath("no-syscalls.data"), "no-syscalls.data"}}) {
    SCOPED_TRACE(arg);
    PerfRun r = RunOnTrace("rules-trace.data", {arg});
    EXPECT_FALSE(r.crashed);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_TRUE(r.events.empty());
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr("pageblame-dlfilter: "));
    EXPECT_THAT(r.err, HasSubstr(why));
  }
}

TEST(PluginPerfTest, TracesTheLibraryRefusesFailAtStart) {
  for (const std::string& trace : AllTraces()) {
    if (Loaded(trace) != nullptr) continue;
    SCOPED_TRACE(trace);
    session::SessionOptions o;
    o.path = TracePath(trace);
    std::string why(session::Session::Open(o).status().message());
    PerfRun r = RunOnTrace(trace, {"pages=0x1000"});
    EXPECT_FALSE(r.crashed);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_EQ(r.err, "pageblame-dlfilter: " + why + "\n");
  }
}

// Issue 44: names a hostile program chose (tests/hostile_trace.h) reach the
// summary only escaped, as in `pageblame query`; its JSON has them as they are.
TEST(PluginPerfTest, HostileNamesAreEscapedInTheSummary) {
  using pageblame::testing::kHostileComm;
  TempDir dir("pb_hostile");
  absl::StatusOr<std::string> trace = pageblame::testing::MakeHostileTrace(dir.path());
  ASSERT_TRUE(trace.ok()) << trace.status();
  // A page made by a JIT frame: the first region whose creating stack has one.
  const std::string buildids = " --buildid-dir " + Quote(pageblame::testing::SourceDir() + "/traces/buildid-cache");
  const pageblame::testing::CliRun maps =
      pageblame::testing::Pageblame("maps --json --pid 11358 -i " + Quote(*trace) + buildids);
  ASSERT_EQ(maps.exit_code, 0) << maps.err;
  std::string page;
  for (const Json& region : Json::parse(maps.out)) {
    if (!page.empty() || region["origin"].is_null()) continue;
    for (const Json& f : region["origin"]["stack"]) {
      if (f["symbol"].is_string() && f["symbol"].get<std::string>().rfind("\x1b]0;title", 0) == 0) {
        page = region["start"];
      }
    }
  }
  ASSERT_FALSE(page.empty());

  PerfRun text = RunPerf("-i " + Quote(*trace), {"pages=" + page});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  ASSERT_THAT(text.tail, HasSubstr("pageblame: who created"));
  EXPECT_TRUE(pageblame::testing::TerminalSafe(text.tail));
  EXPECT_THAT(text.tail, HasSubstr(" in pid 11358 (\\x1b]0;t\\x07\\x0a)\n"));
  EXPECT_THAT(text.tail, HasSubstr(" by \\x1b]0;t\\x07\\x0a 11358/11358\n"));
  EXPECT_THAT(text.tail, HasSubstr("\\x1b]0;title\\x07\\x1b[2J\\x1b[31m\\x08\\x08\\x0d\\u009b\\xff\xc3\x9c" "ber:"));
  EXPECT_THAT(text.tail, HasSubstr("(/usr/lib/x86_64-linux-gnu/\\x1b\\u009b\\x0a\\x0d\\x08\\xff.6)\n"));
  for (absl::string_view line : absl::StrSplit(text.err, '\n')) {
    if (absl::StartsWith(line, "pageblame")) {
      EXPECT_TRUE(pageblame::testing::TerminalSafe(std::string(line))) << line;
    }
  }

  PerfRun json = RunPerf("-i " + Quote(*trace), {"pages=" + page, "summary=json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_TRUE(pageblame::testing::TerminalSafe(json.tail));
  const Json answer = Json::parse(json.tail);
  ASSERT_FALSE(answer.empty());
  EXPECT_EQ(answer[0]["origin"]["comm"], kHostileComm);
}

TEST(PluginPerfTest, ListedWithItsDescription) {
  std::string dir = PAGEBLAME_DLFILTER;
  dir = dir.substr(0, dir.rfind('/'));
  PerfRun r = RunPerf("-v --list-dlfilters", {}, false, "", "cd " + Quote(dir) + " &&");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("pageblame-dlfilter.so"));
  EXPECT_THAT(r.out, HasSubstr("pages=ADDR"));
  EXPECT_THAT(r.out, HasSubstr("regions=FILE"));
  EXPECT_THAT(r.out, HasSubstr("summary=text|json|none"));
}

// ---------------------------------------------------------------- one chunk of a recording

// traces/chunks/ (make-chunks.sh): bin/rotate recorded by perf record
// --switch-output, plain and -z, copied to a fresh directory (the plugin
// and the CLI write their indexes beside the recording). Returns TRACE.
std::string CopyChunks(const std::string& name) {
  namespace fs = std::filesystem;
  const std::string dir = TempPath("chunks");
  fs::create_directories(dir);
  for (const fs::directory_entry& e : fs::directory_iterator(pageblame::testing::SourceDir() + "/traces/chunks")) {
    if (absl::StartsWith(e.path().filename().string(), name + ".")) {
      fs::copy_file(e.path(), dir + "/" + e.path().filename().string());
    }
  }
  return dir + "/" + name + ".data";
}

// The blocks the program kept (truth.h: start, end, prot, origin, ...), by origin.
std::map<std::string, uint64_t> KeptBlocks(const std::string& trace) {
  namespace fs = std::filesystem;
  std::map<std::string, uint64_t> out;
  const fs::path dir = fs::path(trace).parent_path();
  const std::string name = fs::path(trace).stem().string();  // "plain" of plain.data
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    const std::string f = e.path().filename().string();
    if (!absl::StartsWith(f, name + ".") || !absl::EndsWith(f, ".tsv")) continue;
    std::istringstream in(Slurp(e.path().string()));
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::vector<std::string> cols = absl::StrSplit(line, '\t');
      if (cols.size() >= 4) out[cols[3]] = Hex(cols[0]);
    }
  }
  return out;
}

std::string QueryJsonOf(const std::string& trace, const std::vector<std::string>& addrs) {
  std::string out = TempPath("query.json");
  std::string cmd = absl::StrCat(PAGEBLAME_BINARY_DIR, "/bin/pageblame query --json -i ", Quote(trace), " ",
                                 absl::StrJoin(addrs, " "), " >", out, " 2>/dev/null");
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::string json = Slurp(out);
  std::remove(out.c_str());
  return json;
}

// perf reads the last chunk; the plugin answers from the whole recording:
// the block kept in the first second is named after its creator, whose
// call perf did not read (an earlier chunk), and the summary says so.
TEST(PluginChunksTest, TheLastChunkNamesAPageMadeInTheFirst) {
  const std::string trace = CopyChunks("plain");
  const std::vector<std::string> chunks = perf::ChunkFiles::Of(trace);
  ASSERT_GE(chunks.size(), 3u);
  const std::map<std::string, uint64_t> kept = KeptBlocks(trace);
  ASSERT_TRUE(kept.count("early_cache") && kept.count("final_block"));
  const std::string early = absl::StrCat("0x", absl::Hex(kept.at("early_cache")));
  const std::string last = absl::StrCat("0x", absl::Hex(kept.at("final_block")));

  PerfRun r = RunPerf("-i " + Quote(chunks.back()), {"pages=" + early + "," + last});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.tail, HasSubstr("app method: early_cache\n  history: 1 call touched this page; perf printed 0 "
                                "of its samples above (1 call is in other chunks, not read by perf: 1 earlier, "
                                "0 later)\n"));
  EXPECT_THAT(r.tail, HasSubstr("app method: final_block\n  history: 1 call touched this page; perf printed 2 "
                                "of its samples above\n"));
  EXPECT_THAT(r.tail, HasSubstr(absl::StrCat(" is chunk ", chunks.size(), " of the ", chunks.size(),
                                             " chunks on disk of the recording ", trace,
                                             ": the answers are the whole recording's")));
  EXPECT_THAT(r.tail, HasSubstr("1 of the 2 calls are in its other chunks (1 earlier, 0 later)\n"));
  // perf printed final_block's mmap (in this chunk), nothing of early_cache's.
  std::vector<std::string> printed;
  for (const PerfEvent& e : r.events) printed.push_back(e.name + " " + e.payload);
  EXPECT_THAT(printed, ::testing::Contains("syscalls:sys_exit_mmap " + last));
  EXPECT_THAT(printed, ::testing::Not(::testing::Contains("syscalls:sys_exit_mmap " + early)));
  EXPECT_EQ(r.events.size(), 2u);

  // The JSON summary is the CLI's answer over the whole recording, byte for byte.
  PerfRun j = RunPerf("-i " + Quote(chunks.back()), {"pages=" + early + "," + last, "summary=json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(j.tail, QueryJsonOf(trace, {early, last}));
  EXPECT_THAT(j.err, HasSubstr("1 of the 2 calls are in its other chunks (1 earlier, 0 later)\n"));
  // The text names the call perf did not read: the creator's, as the JSON has it.
  Json answers = Json::parse(j.tail, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(answers.is_array() && answers.size() == 2u) << j.tail;
  const Json& origin = answers[0]["address"] == early ? answers[0]["origin"] : answers[1]["origin"];
  EXPECT_THAT(r.tail, HasSubstr(absl::StrCat("0 later)\n    not read: mmap at ", Seconds(origin["time"]), " by tid ",
                                             origin["tid"].get<int>(), ", in an earlier chunk\n")));
}

// perf -z: perf itself reads only the first chunk (a later one continues the
// zstd stream); on it the plugin answers from the whole recording, on a
// later one it stops at start saying what to run instead.
TEST(PluginChunksTest, ACompressedRecordingIsReadFromItsFirstChunkOnly) {
  const std::string trace = CopyChunks("zstd");
  const std::vector<std::string> chunks = perf::ChunkFiles::Of(trace);
  ASSERT_GE(chunks.size(), 3u);
  const std::map<std::string, uint64_t> kept = KeptBlocks(trace);
  ASSERT_TRUE(kept.count("early_cache") && kept.count("final_block"));
  const std::vector<std::string> pages = {absl::StrCat("0x", absl::Hex(kept.at("early_cache"))),
                                          absl::StrCat("0x", absl::Hex(kept.at("final_block")))};

  PerfRun first = RunPerf("-i " + Quote(chunks.front()), {"pages=" + absl::StrJoin(pages, ","), "summary=json"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.tail, QueryJsonOf(trace, pages));
  EXPECT_THAT(first.err, HasSubstr("1 of the 2 calls are in its other chunks (0 earlier, 1 later)\n"));

  for (size_t i = 1; i < chunks.size(); ++i) {
    SCOPED_TRACE(chunks[i]);
    // What perf does with it alone (the reason the plugin refuses it).
    PerfRun bare = RunPerf("-i " + Quote(chunks[i]), {}, /*plugin=*/false);
    EXPECT_NE(bare.exit_code, 0);
    EXPECT_THAT(bare.err, HasSubstr("failed to process type: 81"));
    PerfRun r = RunPerf("-i " + Quote(chunks[i]), {"pages=" + pages[0]});
    EXPECT_FALSE(r.crashed);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr(absl::StrCat("pageblame-dlfilter: ", chunks[i], " is chunk ", i + 1, " of the ",
                                              chunks.size(), " chunks on disk of the recording ", trace)));
    EXPECT_THAT(r.err, HasSubstr("perf cannot read it alone"));
    EXPECT_THAT(r.err, HasSubstr("pageblame query -i " + trace + " ADDR"));
  }
}

}  // namespace
}  // namespace pageblame::plugin
