#include "processor/replay/trace_loader.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "processor/base/status_macros.h"
#include "processor/decode/callchain.h"
#include "processor/decode/syscall_decoder.h"
#include "processor/decode/tracing_data.h"
#include "processor/perf/perf_reader.h"
#include "processor/replay/replay_worker.h"
#include "processor/replay/unparsed_tracker.h"
#include "processor/symbols/preload_plan.h"

namespace pageblame::replay {
namespace {

// Errors name the file once (the reader's own errors already do; stdin, "-",
// is "<stdin>" in them).
absl::Status WithPath(const absl::Status& s, const std::string& path) {
  const std::string name = path == "-" ? "<stdin>" : path;
  if (absl::StartsWith(s.message(), name)) return s;
  return absl::Status(s.code(), absl::StrCat(name, ": ", s.message()));
}

uint64_t TimeOf(const perf::SampleId& id) { return id.has_time ? id.time : 0; }

// Why a sample's payload could not be decoded, as the reader words errors.
absl::Status BadPayload(const perf::RawRecord& rec, const perf::Sample& s,
                        const std::string& path) {
  return absl::DataLossError(absl::StrCat(
      path == "-" ? "<stdin>" : path, ": ",
      perf::RecordDecompressor::Where(rec.offset, rec.decompressed_offset), ": the sample's ",
      s.raw.size(), "-byte payload is too short for the format of its event"));
}

// A record's CPU (LaneSorter's lane), or kNoCpu if it does not say.
uint32_t CpuOf(const perf::SampleId& id) { return id.has_cpu ? id.cpu : TraceEvent::kNoCpu; }

// One pass over the file. With Ordering::kLanes, returns null if the trace
// broke the lane rule (the caller loads again with kRounds).
absl::StatusOr<std::unique_ptr<LoadedTrace>> LoadPass(const LoadOptions& options,
                                                      ReplayWorker::Ordering ordering) {
  auto reader_or = perf::PerfReader::Open(options.path);
  if (!reader_or.ok()) return WithPath(reader_or.status(), options.path);
  std::unique_ptr<perf::PerfReader> reader = std::move(reader_or).value();
  const perf::FileInfo& info = reader->info();

  // No tracepoint formats at all: nothing was recorded with tracepoints.
  if (info.tracing_data.empty()) return WithPath(decode::SyscallDecoder::NoSyscallEvents(), options.path);
  auto td_or = decode::TracingData::Parse(info.tracing_data);
  if (!td_or.ok()) return WithPath(td_or.status(), options.path);
  auto dec_or = decode::SyscallDecoder::Create(info, **td_or);
  if (!dec_or.ok()) return WithPath(dec_or.status(), options.path);
  const decode::SyscallDecoder& decoder = *dec_or;
  if (absl::Status s = decoder.CheckUsable(); !s.ok()) return WithPath(s, options.path);

  auto idx = std::make_unique<index::TraceIndex>();
  for (const perf::EventAttr& a : info.attrs) idx->mutable_stats().data_mappings |= a.mmap_data;
  auto sym = std::make_unique<symbols::Symbolizer>(options.symbols);
  for (const perf::BuildIdEntry& b : info.build_ids) sym->AddBuildId(b.filename, b.build_id);

  // Lanes need every sample's CPU and the number of CPUs.
  bool every_cpu = info.nr_cpus > 0;
  for (const perf::EventAttr& a : info.attrs) every_cpu &= (a.sample_type & perf::kSampleCpu) != 0;
  if (!every_cpu) ordering = ReplayWorker::Ordering::kRounds;
  // Sorting and replay run on their own thread, behind this one's reading.
  ReplayWorker worker(idx.get(), sym.get(), ordering, info.nr_cpus, info.data_size);
  // An enter and its exit travel as one kCall event when nothing comes
  // between them (ReplayWorker::JoinExit, lanes only): half the events to
  // hold while a round's first CPU part waits for the rest (the bench
  // trace's biggest holds 357 k samples), and half the keys to sort. Not
  // with twin times: an exit may carry a twin time, which a kCall has no
  // room for.
  const bool join_calls = !options.twin_times;
  // The loader's counters, kept apart from the index's stats until the end:
  // the replay thread updates those stats on every event, and counting into
  // the same cache lines from this thread made both threads wait on each
  // other's writes.
  struct {
    uint64_t records = 0, samples = 0, bad_samples = 0, skipped_samples = 0;
    uint64_t memory_samples = 0, unknown_records = 0, bad_records = 0;
  } st;
  UnparsedTracker unparsed;  // where the bad samples and records were
  auto bad_record = [&](const absl::Status& s) {
    ++st.bad_records;
    unparsed.Failed(/*sample=*/false, s);
  };

  perf::RawRecord rec;
  perf::Sample sample;
  decode::DecodedSyscall dsc;
  std::vector<uint64_t> frames;
  struct Twin {
    uint64_t time;
    decode::Syscall syscall;
    bool exit;
  };
  absl::flat_hash_map<uint32_t, Twin> twins;  // tid -> its last raw twin sample
  struct Own {
    decode::Syscall syscall;
    bool exit;
    bool had_twin;
  };
  absl::flat_hash_map<uint32_t, Own> last_own;  // tid -> its last syscalls:* sample
  symbols::PreloadPlan preload;  // executable file mappings read
  const uint64_t total = info.data_size;
  uint64_t next_progress = 64 << 20;
  const bool progress = options.progress && isatty(STDERR_FILENO);

  while (true) {
    auto more = reader->Next(&rec);
    if (!more.ok()) return WithPath(more.status(), options.path);
    if (!*more) break;
    ++st.records;
    if ((st.records & 0xffff) == 0 && worker.diverged()) break;
    if (progress && reader->bytes_read() >= next_progress) {
      next_progress += 64 << 20;
      if (total) {
        std::fprintf(stderr, "\rpageblame: read %llu of %llu MiB",
                     (unsigned long long)(reader->bytes_read() >> 20),
                     (unsigned long long)(total >> 20));
      }
    }
    // Events are made per case, after the checks (most records are skipped
    // samples), samples' in place in the batch (ReplayWorker::Add).
    switch (rec.type) {
      case perf::kRecordSample: {
        ++st.samples;
        // Samples of events replay does not use (other syscalls; raw_syscalls
        // twins of syscalls:* events) are skipped on their id alone.
        const perf::EventAttr* attr = reader->KnownSampleAttr(rec);
        if (attr == nullptr) {
          auto found = reader->SampleAttr(rec);
          if (!found.ok()) {  // an id no attr has, or too short for its id
            ++st.bad_samples;
            unparsed.Failed(/*sample=*/true, found.status());
            continue;
          }
          attr = *found;
        }
        if (!decoder.Wanted(attr, options.twin_times)) {
          ++st.skipped_samples;
          continue;
        }
        if (absl::Status s = reader->ParseSample(rec, *attr, &sample); !s.ok()) {
          ++st.bad_samples;
          unparsed.Failed(/*sample=*/true, s);
          continue;
        }
        if (!decoder.Decode(sample, &dsc)) {
          if (dsc.malformed) {
            ++st.bad_samples;
            unparsed.Failed(/*sample=*/true, BadPayload(rec, sample, options.path));
          }
          continue;
        }
        unparsed.Parsed(sample.time);
        const uint32_t cpu =
            (attr->sample_type & perf::kSampleCpu) != 0 ? sample.cpu : TraceEvent::kNoCpu;
        const bool is_exit = dsc.phase == decode::DecodedSyscall::Phase::kExit;
        if (dsc.twin && !options.twin_times) {
          // A twin read only because another syscall is replayed from
          // raw_syscalls.
          ++st.skipped_samples;
          continue;
        }
        ++st.memory_samples;
        if (dsc.twin) {
          // The kernel fires raw_syscalls:sys_enter/exit and
          // syscalls:sys_enter_X/exit_X back to back on the same CPU, in the
          // order the tracepoints were enabled: usually raw first, but raw
          // last in some recordings (attach). A twin right after its call's
          // own sample goes to replay as a late twin; one before it waits
          // here and rides on that sample: no extra event to sort.
          auto last = last_own.find(sample.tid);
          if (last != last_own.end() && last->second.syscall == dsc.syscall &&
              last->second.exit == is_exit && !last->second.had_twin) {
            last->second.had_twin = true;
            TraceEvent& e = worker.Add();
            e.kind = TraceEvent::Kind::kTwin;
            e.time = sample.time;
            e.cpu = cpu;
            e.pid = sample.pid;
            e.tid = sample.tid;
            e.syscall = dsc.syscall;
            e.flag = is_exit;
            worker.Added();
          } else {
            twins[sample.tid] = Twin{sample.time, dsc.syscall, is_exit};
          }
          continue;
        }
        // The exit of the enter just added becomes part of that event.
        // Anything in between (an MMAP2 record of the call, another
        // thread's call on this CPU) leaves both as they are.
        if (join_calls && is_exit &&
            worker.JoinExit(sample.pid, sample.tid, cpu, dsc.syscall, sample.time, dsc.ret)) {
          break;
        }
        TraceEvent& e = worker.Add();
        e.time = sample.time;
        e.cpu = cpu;
        e.pid = sample.pid;
        e.tid = sample.tid;
        e.syscall = dsc.syscall;
        if (options.twin_times) {
          if (auto t = twins.find(sample.tid); t != twins.end()) {
            const Twin& tw = t->second;
            if (tw.syscall == dsc.syscall && tw.exit == is_exit && tw.time <= sample.time) {
              e.twin_time = tw.time;
            }
            twins.erase(t);
          }
          last_own[sample.tid] = Own{dsc.syscall, is_exit, e.twin_time != 0};
        }
        if (!is_exit) {
          e.kind = TraceEvent::Kind::kEnter;
          std::copy(std::begin(dsc.args), std::end(dsc.args), e.a);
          // Interned here, on the reading thread, while the chain is still
          // in its cache: a hash and a compare per call, against handing
          // ~300 bytes of frames per call to the replay thread (a copy, its
          // buffers' page faults, and a second pass over cold lines there).
          e.stack = idx->stacks().Intern(decode::UserFrames(sample.callchain, &frames));
        } else {
          e.kind = TraceEvent::Kind::kExit;
          e.ret = dsc.ret;
        }
        worker.Added();
        break;
      }
      case perf::kRecordComm: {
        perf::CommRecord c;
        TraceEvent e;
        if (absl::Status s = reader->ParseComm(rec, &c); !s.ok()) { bad_record(s); continue; }
        unparsed.Parsed(TimeOf(c.sample_id));
        e.kind = TraceEvent::Kind::kComm;
        e.time = TimeOf(c.sample_id);
        e.cpu = CpuOf(c.sample_id);
        e.pid = c.pid;
        e.tid = c.tid;
        e.flag = c.exec;
        e.str = idx->strings().Intern(c.comm);
        worker.Push(e);
        break;
      }
      case perf::kRecordFork:
      case perf::kRecordExit: {
        perf::TaskRecord t;
        TraceEvent e;
        if (absl::Status s = reader->ParseTask(rec, &t); !s.ok()) { bad_record(s); continue; }
        unparsed.Parsed(t.time ? t.time : TimeOf(t.sample_id));
        e.kind = rec.type == perf::kRecordFork ? TraceEvent::Kind::kFork
                                               : TraceEvent::Kind::kTaskExit;
        e.time = t.time ? t.time : TimeOf(t.sample_id);
        e.cpu = CpuOf(t.sample_id);
        e.pid = t.pid;
        e.tid = t.tid;
        e.a[0] = t.ppid;
        e.a[1] = t.ptid;
        worker.Push(e);
        break;
      }
      case perf::kRecordMmap:
      case perf::kRecordMmap2: {
        perf::MmapRecord m;
        TraceEvent e;
        if (absl::Status s = reader->ParseMmap(rec, &m); !s.ok()) { bad_record(s); continue; }
        unparsed.Parsed(TimeOf(m.sample_id));
        if (m.cpumode == perf::kMiscKernel) continue;  // kernel text/modules
        e.kind = TraceEvent::Kind::kMmap;
        e.time = TimeOf(m.sample_id);
        e.cpu = CpuOf(m.sample_id);
        e.pid = m.pid;
        e.tid = m.tid;
        e.a[0] = m.start;
        e.a[1] = m.len;
        e.a[2] = m.pgoff;
        e.a[3] = m.prot;
        e.a[4] = m.flags;
        e.a[5] = m.has_prot ? 1 : 0;
        e.str = idx->strings().Intern(m.filename);
        if (!m.build_id.empty()) e.str2 = idx->strings().Intern(m.build_id);
        worker.Push(e);
        // MMAP (v1) records are of executable mappings only; JIT code
        // (anonymous, memfd) has no table to load.
        if ((!m.has_prot || (m.prot & PROT_EXEC) != 0) && symbols::Symbolizer::MayHaveElf(m.filename)) {
          preload.AddMapping(m.start, m.len, m.filename, m.build_id);
        }
        break;
      }
      case perf::kRecordLost:
      case perf::kRecordLostSamples: {
        perf::LostRecord l;
        TraceEvent e;
        if (absl::Status s = reader->ParseLost(rec, &l); !s.ok()) { bad_record(s); continue; }
        e.kind = TraceEvent::Kind::kLost;
        e.time = TimeOf(l.sample_id);
        e.cpu = CpuOf(l.sample_id);
        e.a[0] = l.lost;
        e.flag = l.samples;
        worker.Push(e);
        break;
      }
      case perf::kRecordFinishedRound:
        worker.FinishedRound();
        break;
      case perf::kRecordFinishedInit:
        break;
      default:
        ++st.unknown_records;
        break;
    }
  }
  // While the replay thread finishes (the last round's first CPU part can
  // hold a quarter of the calls), this thread loads the symbol tables that
  // printing will likely want, one DSO at a time, most frames first.
  std::vector<symbols::PreloadPlan::Dso> dsos;
  if (options.preload_symbols && !worker.diverged()) dsos = preload.Needed(idx->stacks().all_ips());
  size_t next_dso = 0;
  const uint64_t out_of_order = worker.Finish([&] {
    if (next_dso == dsos.size()) return false;
    sym->Preload(dsos[next_dso].path, dsos[next_dso].build_id);
    ++next_dso;
    return true;
  });
  if (worker.diverged()) return std::unique_ptr<LoadedTrace>();
  if (st.memory_samples == 0 && st.bad_samples > 0) {
    // An empty answer would say "nothing was mapped" where the truth is that
    // nothing could be read.
    const std::string name = options.path == "-" ? "<stdin>" : options.path;
    return absl::DataLossError(absl::StrCat(
        name, ": none of the trace's ", st.bad_samples,
        " samples of the events replay reads could be parsed; the first: ",
        absl::StripPrefix(unparsed.first(), absl::StrCat(name, ": "))));
  }
  index::TraceStats& stats = idx->mutable_stats();
  stats.out_of_order = out_of_order;
  stats.time_order_by_rounds = ordering == ReplayWorker::Ordering::kRounds;
  stats.records = st.records;
  stats.samples = st.samples;
  stats.bad_samples = st.bad_samples;
  stats.skipped_samples = st.skipped_samples;
  stats.memory_samples = st.memory_samples;
  stats.unknown_records = st.unknown_records;
  stats.bad_records = st.bad_records;
  unparsed.Finish(&stats);
  if (progress) std::fprintf(stderr, "\r%60s\r", "");
  idx->Finalize();
  return std::make_unique<LoadedTrace>(std::move(idx), std::move(sym), info,
                                       decoder.DescribeSources());
}

}  // namespace

absl::StatusOr<std::unique_ptr<LoadedTrace>> LoadTrace(const LoadOptions& options) {
  // The lane order needs a second pass when a trace breaks its rule, so only
  // a regular file (not stdin or a FIFO) is loaded that way.
  struct stat st;
  const bool file = options.path != "-" && ::stat(options.path.c_str(), &st) == 0 &&
                    S_ISREG(st.st_mode);
  if (file && !options.perf_rounds_only) {
    ASSIGN_OR_RETURN(std::unique_ptr<LoadedTrace> t,
                     LoadPass(options, ReplayWorker::Ordering::kLanes));
    if (t) return t;
  }
  return LoadPass(options, ReplayWorker::Ordering::kRounds);
}

}  // namespace pageblame::replay
