// The perf dlfilter entry points (perf 6.1, /usr/include/perf/perf_dlfilter.h;
// tools/perf/util/dlfilter.c calls them): a thin C shim over FilterSession.
//
//   perf script -i trace.data --dlfilter build/lib/pageblame-dlfilter.so
//               --dlarg pages=0x7f3bad120000
//
// perf dlopen()s this file, copies its function table into our writable
// global `perf_dlfilter_fns` (dlfilter__open) and calls start() once. Then,
// for every sample, filter_event_early() (0 = go on, 1 = drop it) runs before
// perf resolves the sample's thread, maps and call chain
// (tools/perf/builtin-script.c, process_sample_event), so dropping there is
// what makes the filter cheap; samples that also pass perf's own filters
// (--pid, --time, ...) reach filter_event(), where we count them and name the
// frames the summary prints. At the end, stop() prints the summary.
// Only the six API symbols are exported (dlfilter.map): the pageblame library
// linked into this file stays private, so perf's own exported functions
// cannot be bound in place of its.
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include <perf/perf_dlfilter.h>
}

#include "absl/strings/str_cat.h"
#include "plugin/filter_session.h"
#include "plugin/perf_command_line.h"
#include "processor/base/text_escape.h"
#include "processor/session/session.h"

using pageblame::plugin::FilterSession;
using pageblame::plugin::PerfFrame;
using pageblame::plugin::SampleView;

extern "C" {

// perf fills this in before start() (dlfilter__open).
struct perf_dlfilter_fns perf_dlfilter_fns;

int start(void** data, void* ctx);
int stop(void* data, void* ctx);
int filter_event_early(void* data, const struct perf_dlfilter_sample* sample, void* ctx);
int filter_event(void* data, const struct perf_dlfilter_sample* sample, void* ctx);
const char* filter_description(const char** long_description);

}  // extern "C"

namespace {

constexpr char kName[] = "pageblame-dlfilter";

// The sample struct grows at its end; `size` says how much of it this perf
// filled in (tools/perf/util/dlfilter.c, dlfilter__do_filter_event).
template <typename T>
bool HasField(const perf_dlfilter_sample* s, size_t offset) {
  return s->size >= offset + sizeof(T);
}

// The sample as FilterSession sees it; false if this perf passes no event
// names (the `event` field came after the struct's first version).
bool View(const perf_dlfilter_sample* sample, SampleView* v) {
  if (!HasField<const char*>(sample, offsetof(perf_dlfilter_sample, event))) return false;
  v->pid = static_cast<uint32_t>(sample->pid);
  v->tid = static_cast<uint32_t>(sample->tid);
  v->time = sample->time;
  v->event = sample->event;
  if (sample->raw_data != nullptr) {
    v->raw = absl::Span<const uint8_t>(static_cast<const uint8_t*>(sample->raw_data), sample->raw_size);
  }
  if (sample->raw_callchain != nullptr) {
    v->callchain = absl::Span<const uint64_t>(reinterpret_cast<const uint64_t*>(sample->raw_callchain),
                                              sample->raw_callchain_nr);
  }
  return true;
}

// Names `ip` in the context of the sample being filtered.
bool ResolveWithPerf(void* ctx, uint64_t ip, PerfFrame* out) {
  if (perf_dlfilter_fns.resolve_address == nullptr) return false;
  struct perf_dlfilter_al al;
  std::memset(&al, 0, sizeof(al));
  al.size = sizeof(al);  // perf copies min(its size, ours) and keeps ours
  if (perf_dlfilter_fns.resolve_address(ctx, ip, &al) != 0) return false;
  if (al.size < offsetof(perf_dlfilter_al, dso) + sizeof(al.dso)) return false;
  if (al.sym != nullptr) {
    out->symbol = std::string(al.sym);
    out->offset = al.symoff;
  }
  if (al.dso != nullptr) out->dso = al.dso;
  return al.sym != nullptr || al.dso != nullptr;
}

}  // namespace

int start(void** data, void* ctx) {
  *data = nullptr;
  std::vector<std::string> args;
  int argc = 0;
  char** argv = perf_dlfilter_fns.args != nullptr ? perf_dlfilter_fns.args(ctx, &argc) : nullptr;
  for (int i = 0; argv != nullptr && i < argc; ++i) args.emplace_back(argv[i]);

  pageblame::plugin::PerfEnvironment env;
  if (auto cmdline = pageblame::plugin::ReadOwnCommandLine(); cmdline.ok()) env.argv = *cmdline;
  env.stdin_is_fifo = pageblame::plugin::StdinIsFifo();

  auto session = FilterSession::Start(args, env);
  if (!session.ok()) {
    // One line each, escaped whole: they can quote the trace (a comm, a path).
    std::fprintf(stderr, "%s: %s\n", kName, pageblame::EscapeName(std::string(session.status().message())).c_str());
    return -1;
  }
  for (const std::string& w : (*session)->warnings()) {
    std::fprintf(stderr, "%s: %s\n", kName, pageblame::EscapeName(w).c_str());
  }
  *data = session->release();
  return 0;
}

int filter_event_early(void* data, const struct perf_dlfilter_sample* sample, void* ctx) {
  auto* session = static_cast<FilterSession*>(data);
  if (session == nullptr || sample == nullptr) return 0;
  SampleView v;
  if (!View(sample, &v)) {
    // perf older than 5.16: keep everything rather than guess, and say so once.
    static bool warned = false;
    if (!warned) {
      std::fprintf(stderr, "%s: this perf does not pass event names to dlfilters; nothing filtered\n",
                   kName);
      warned = true;
    }
    return 0;
  }
  return session->Keep(v) ? 0 : 1;
}

int filter_event(void* data, const struct perf_dlfilter_sample* sample, void* ctx) {
  auto* session = static_cast<FilterSession*>(data);
  SampleView v;
  if (session == nullptr || sample == nullptr || !View(sample, &v)) return 0;
  auto resolve = [ctx](uint64_t ip, PerfFrame* out) { return ResolveWithPerf(ctx, ip, out); };
  session->Printed(v, resolve);
  return 0;
}

int stop(void* data, void* ctx) {
  auto* session = static_cast<FilterSession*>(data);
  if (session == nullptr) return 0;
  session->Finish(stdout);
  std::fflush(stdout);
  // The JSON alone goes to stdout; what the text would say of a chunk, to stderr.
  const std::string note = session->StderrNote();
  std::fputs(note.c_str(), stderr);
  delete session;
  return 0;
}

const char* filter_description(const char** long_description) {
  static const std::string kLong = absl::StrCat(
      "Keeps only the memory-syscall events (mmap, munmap, brk, mremap, mprotect, pkey_mprotect,\n"
      "madvise: enter, exit and their raw_syscalls duplicates) of the calls that created, committed,\n"
      "moved or removed the given pages, so perf prints them with\n"
      "its call chains; at the end prints which call stack created each page.\n"
      "It indexes the same perf.data with the pageblame library (see docs/plugin.md).\n"
      "--dlarg options (KEY=VALUE, repeatable):\n"
      "  pages=ADDR[,ADDR...]  pages to explain (0x7f.., bare hex, or WinDbg 7f12`34567000)\n"
      "  regions=FILE          every page of each region of a table (WinDbg !address, SOS\n"
      "                        maddress, page-diff result, pmap, /proc maps, address list)\n"
      "  pid=N                 only process N\n"
      "  summary=text|json|none  the end summary; json = `pageblame query --json` output\n"
      "  trace=FILE            the perf.data to index (default: perf script's -i, else\n"
      "                        ./", pageblame::session::kDefaultTracePath, "; required when perf script reads a pipe)\n"
      "Without pages/regions every memory-syscall event is kept. perf script's own -f\n"
      "makes the plugin, as perf, use a /tmp/perf-PID.map another user owns.");
  if (long_description != nullptr) *long_description = kLong.c_str();
  return "pageblame: keep the memory syscalls that touched given pages; say who created them";
}
