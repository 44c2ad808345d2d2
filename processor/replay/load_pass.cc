#include "processor/replay/load_pass.h"

#include <unistd.h>

#include <cstdio>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "processor/base/side_file_trust.h"
#include "processor/perf/chunk_chain_reader.h"
#include "processor/perf/record_decompressor.h"
#include "processor/replay/attach_maps.h"

namespace pageblame::replay {
namespace {

// How errors name the trace: its path, or "<stdin>" for "-".
std::string NameOf(const std::string& path) { return path == "-" ? "<stdin>" : path; }

// Errors name the file once (the reader's own errors already do).
absl::Status WithPath(const absl::Status& s, const std::string& path) {
  const std::string name = NameOf(path);
  if (absl::StartsWith(s.message(), name)) return s;
  return absl::Status(s.code(), absl::StrCat(name, ": ", s.message()));
}

// Why a sample's payload could not be decoded, as the reader words errors.
absl::Status BadPayload(const perf::RawRecord& rec, const perf::Sample& s,
                        const std::string& path) {
  return absl::DataLossError(absl::StrCat(
      NameOf(path), ": ",
      perf::RecordDecompressor::Where(rec.offset, rec.decompressed_offset), ": the sample's ",
      s.raw.size(), "-byte payload is too short for the format of its event"));
}

uint64_t TimeOf(const perf::SampleId& id) { return id.has_time ? id.time : 0; }

// A record's CPU (LaneSorter's lane), or kNoCpu if it does not say.
uint32_t CpuOf(const perf::SampleId& id) { return id.has_cpu ? id.cpu : TraceEvent::kNoCpu; }

// Whether any event copies user stacks (--call-graph dwarf): then enters are
// unwound, and the unwinder needs the trace's code mappings.
bool HasStackCopies(const perf::FileInfo& info) {
  for (const perf::EventAttr& a : info.attrs) {
    if ((a.sample_type & perf::kSampleRegsUser) && (a.sample_type & perf::kSampleStackUser)) {
      return true;
    }
  }
  return false;
}

}  // namespace

LoadPass::LoadPass(const LoadOptions& options, ReplayWorker::Ordering ordering)
    : options_(options), ordering_(ordering) {}

LoadPass::~LoadPass() = default;

absl::Status LoadPass::Open() {
  auto reader_or = options_.next_chunk     ? perf::ChunkChainReader::Open(options_.next_chunk, options_.chunk_done)
                   : !options_.chunks.empty() ? perf::ChunkChainReader::OpenFiles(options_.chunks)
                                              : perf::PerfReader::Open(options_.path);
  if (!reader_or.ok()) return WithPath(reader_or.status(), options_.path);
  reader_ = std::move(reader_or).value();
  const perf::FileInfo& info = reader_->info();

  // No tracepoint formats at all: nothing was recorded with tracepoints.
  if (info.tracing_data.empty()) {
    return WithPath(decode::SyscallDecoder::NoSyscallEvents(), options_.path);
  }
  auto td_or = decode::TracingData::Parse(info.tracing_data);
  if (!td_or.ok()) return WithPath(td_or.status(), options_.path);
  tracing_data_ = std::move(td_or).value();
  auto dec_or = decode::SyscallDecoder::Create(info, *tracing_data_);
  if (!dec_or.ok()) return WithPath(dec_or.status(), options_.path);
  decoder_.emplace(std::move(dec_or).value());
  if (absl::Status s = decoder_->CheckUsable(); !s.ok()) return WithPath(s, options_.path);

  idx_ = std::make_unique<index::TraceIndex>();
  for (const perf::EventAttr& a : info.attrs) idx_->mutable_stats().data_mappings |= a.mmap_data;
  mappings_ = std::make_shared<symbols::MappingHistory>();
  for (const perf::BuildIdEntry& b : info.build_ids) mappings_->AddBuildId(b.filename, b.build_id);
  sym_ = std::make_unique<symbols::Symbolizer>(options_.symbols, mappings_);
  if (HasStackCopies(info)) {
    unwind::Unwinder::Options uo;
    uo.locator = symbols::Symbolizer::LocatorOptions(options_.symbols);
    uo.mappings = mappings_.get();
    // perf writes its uname's machine; traces without the feature are taken
    // as this machine's (x86_64: the only one we unwind).
    uo.x86_64 = info.arch.empty() || info.arch == "x86_64";
    uo.timed = options_.time_unwinding;
    // A file whose CFI unwinding reads holds frames that printing will
    // look up inlined calls in: its DWARF opens meanwhile.
    uo.on_module_opened = [sym = sym_.get()](std::string_view path, std::string_view build_id) {
      sym->PrefetchInline(path, build_id);
    };
    unwinder_ = std::make_unique<unwind::Unwinder>(std::move(uo));
  }

  stacks_ = std::make_unique<StackInterner>(
      &idx_->stacks(), unwinder_.get(),
      [this](const perf::RawRecord& seen, perf::Sample* out) { return ReadSampleAgain(seen, out); });

  // Lanes need every sample's CPU and the number of CPUs.
  bool every_cpu = info.nr_cpus > 0;
  for (const perf::EventAttr& a : info.attrs) every_cpu &= (a.sample_type & perf::kSampleCpu) != 0;
  if (!every_cpu) ordering_ = ReplayWorker::Ordering::kRounds;
  // Sorting and replay run on their own thread, behind this one's reading.
  LoadAttachMaps(info);
  worker_ = std::make_unique<ReplayWorker>(idx_.get(), sym_.get(), ordering_, info.nr_cpus,
                                           info.data_size, attach_.get());
  // Records other than samples go to each sink in turn (record_sink.h).
  replay_feed_ = std::make_unique<ReplayFeed>(idx_.get(), worker_.get());
  history_sink_ = std::make_unique<MappingHistorySink>(mappings_.get());
  sinks_ = {replay_feed_.get(), history_sink_.get()};
  join_calls_ = !options_.raw_duplicate_times;
  // Only in perf's round order: the events it has replayed at any moment
  // are those before a round's end, whose waiting stacks that end resolved.
  checkpoints_ = options_.checkpoint && options_.checkpoint_due && ordering_ == ReplayWorker::Ordering::kRounds;
  progress_ = options_.progress && isatty(STDERR_FILENO);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<LoadedTrace>> LoadPass::Run() {
  perf::RawRecord rec;
  while (true) {
    auto more = reader_->Next(&rec);
    if (!more.ok()) return WithPath(more.status(), options_.path);
    if (!*more) break;
    ++st_.records;
    if ((st_.records & 0xffff) == 0 && worker_->diverged()) break;
    if (progress_ && reader_->bytes_read() >= next_progress_) Progress();
    // Events are made per case, after the checks (most records are skipped
    // samples), samples' in place in the batch (ReplayWorker::Add).
    switch (rec.type) {
      case perf::kRecordSample: OnSample(rec); break;
      case perf::kRecordComm: OnComm(rec); break;
      case perf::kRecordFork:
      case perf::kRecordExit: OnTask(rec); break;
      case perf::kRecordMmap:
      case perf::kRecordMmap2: OnMmap(rec); break;
      case perf::kRecordLost:
      case perf::kRecordLostSamples: OnLost(rec); break;
      case perf::kRecordFinishedRound:
        stacks_->FinishedRound();
        worker_->FinishedRound();
        break;
      case perf::kRecordFinishedInit: break;
      default: ++st_.unknown_records; break;
    }
    if (checkpoints_ && options_.checkpoint_due()) Checkpoint();
  }
  // A record cut by the end of compressed data (PerfReader::cut_at_end) is
  // lost, the rest is good: a warning, as for a record that cannot be parsed.
  if (!reader_->cut_at_end().ok()) BadRecord(reader_->cut_at_end());
  stacks_->Finish();
  // While the replay thread finishes (the last round's first CPU part can
  // hold a quarter of the calls), this thread loads the symbol tables that
  // printing will likely want, one DSO at a time, most frames first.
  std::vector<symbols::PreloadPlan::Dso> dsos;
  if (options_.preload_symbols && !worker_->diverged()) {
    dsos = symbols::PreloadPlan::Of(*mappings_).Needed(idx_->stacks().DistinctIps());
  }
  size_t next_dso = 0;
  const uint64_t out_of_order = worker_->Finish([&] {
    if (next_dso == dsos.size()) return false;
    sym_->Preload(dsos[next_dso].path, dsos[next_dso].build_id);
    ++next_dso;
    return true;
  });
  if (worker_->diverged()) return std::unique_ptr<LoadedTrace>();
  if (st_.memory_samples == 0 && st_.bad_samples > 0) {
    // An empty answer would say "nothing was mapped" where the truth is that
    // nothing could be read.
    const std::string name = NameOf(options_.path);
    return absl::DataLossError(absl::StrCat(
        name, ": none of the trace's ", st_.bad_samples,
        " samples of the events replay reads could be parsed; the first: ",
        absl::StripPrefix(unparsed_.first(), absl::StrCat(name, ": "))));
  }
  idx_->mutable_stats().out_of_order = out_of_order;
  return Finish();
}

void LoadPass::Progress() {
  next_progress_ += 64 << 20;
  if (const uint64_t total = reader_->info().data_size) {
    std::fprintf(stderr, "\rpageblame: read %llu of %llu MiB",
                 (unsigned long long)(reader_->bytes_read() >> 20),
                 (unsigned long long)(total >> 20));
  }
}

bool LoadPass::ReadSampleAgain(const perf::RawRecord& seen, perf::Sample* out) {
  perf::RawRecord rec;
  absl::StatusOr<bool> got = reader_->ReadAgain(seen, &reread_buffer_, &rec);
  return got.ok() && *got && reader_->ParseSample(rec, out).ok();
}

void LoadPass::OnSample(const perf::RawRecord& rec) {
  ++st_.samples;
  // Samples of events replay does not use (other syscalls; raw_syscalls
  // duplicates of syscalls:* events) are skipped on their id alone.
  const perf::EventAttr* attr = reader_->KnownSampleAttr(rec);
  if (attr == nullptr) {
    auto found = reader_->SampleAttr(rec);
    if (!found.ok()) {  // an id no attr has, or too short for its id
      BadSample(found.status());
      return;
    }
    attr = *found;
  }
  if (!decoder_->Wanted(attr, options_.raw_duplicate_times)) {
    ++st_.skipped_samples;
    return;
  }
  if (absl::Status s = reader_->ParseSample(rec, *attr, &sample_); !s.ok()) {
    BadSample(s);
    return;
  }
  if (!decoder_->Decode(sample_, &dsc_)) {
    if (dsc_.malformed) {
      BadSample(BadPayload(rec, sample_, options_.path));
    } else {
      ++st_.other_syscall_samples;  // raw_syscalls of a call that is not a memory syscall
    }
    return;
  }
  unparsed_.Parsed(sample_.time);
  const uint32_t cpu =
      (attr->sample_type & perf::kSampleCpu) != 0 ? sample_.cpu : TraceEvent::kNoCpu;
  const bool is_exit = dsc_.phase == decode::DecodedSyscall::Phase::kExit;
  if (dsc_.raw_duplicate) {
    if (!options_.raw_duplicate_times) {
      // A raw duplicate read only because another syscall is replayed from
      // raw_syscalls.
      ++st_.skipped_samples;
      return;
    }
    ++st_.memory_samples;
    OnRawDuplicate(sample_, dsc_, cpu);
    return;
  }
  ++st_.memory_samples;
  // The exit of the enter just added becomes part of that event. Anything
  // in between (an MMAP2 record of the call, another thread's call on this
  // CPU) leaves both as they are.
  if (join_calls_ && is_exit &&
      worker_->JoinExit(sample_.pid, sample_.tid, cpu, dsc_.syscall, sample_.time, dsc_.ret)) {
    return;
  }
  TraceEvent& e = worker_->Add();  // a kEnter with a zeroed Call payload
  e.time = sample_.time;
  e.cpu = cpu;
  e.pid = sample_.pid;
  e.tid = sample_.tid;
  e.syscall = dsc_.syscall;
  TraceEvent::Call& call = e.call();
  if (options_.raw_duplicate_times) {
    if (auto t = raw_duplicates_.find(sample_.tid); t != raw_duplicates_.end()) {
      const RawDuplicate& tw = t->second;
      if (tw.syscall == dsc_.syscall && tw.exit == is_exit && tw.time <= sample_.time) {
        call.raw_duplicate_time = tw.time;
      }
      raw_duplicates_.erase(t);
    }
    last_call_sample_[sample_.tid] = LastCallSample{dsc_.syscall, is_exit, call.raw_duplicate_time != 0};
  }
  if (!is_exit) {
    std::copy(std::begin(dsc_.args), std::end(dsc_.args), call.args);
    call.stack = stacks_->Intern(sample_, reader_->CanReadAgain(rec) ? &rec : nullptr);
  } else {
    e.kind = TraceEvent::Kind::kExit;
    call.ret = dsc_.ret;
  }
  worker_->Added();
}

void LoadPass::BadSample(const absl::Status& why) {
  ++st_.bad_samples;
  unparsed_.Failed(/*sample=*/true, why);
}

void LoadPass::BadRecord(const absl::Status& why) {
  ++st_.bad_records;
  unparsed_.Failed(/*sample=*/false, why);
}

void LoadPass::OnRawDuplicate(const perf::Sample& s, const decode::DecodedSyscall& d, uint32_t cpu) {
  // The kernel fires raw_syscalls:sys_enter/exit and syscalls:sys_enter_X/
  // exit_X back to back on the same CPU, in the order the tracepoints were
  // enabled: usually raw first, but raw last in some recordings (attach). A
  // raw duplicate right after its call's own sample goes to replay as a late one;
  // one before it waits here and rides on that sample: no extra event to
  // sort.
  const bool is_exit = d.phase == decode::DecodedSyscall::Phase::kExit;
  auto last = last_call_sample_.find(s.tid);
  if (last != last_call_sample_.end() && last->second.syscall == d.syscall &&
      last->second.exit == is_exit && !last->second.had_raw_duplicate) {
    last->second.had_raw_duplicate = true;
    TraceEvent& e = worker_->Add();
    e.kind = TraceEvent::Kind::kRawDuplicate;
    e.time = s.time;
    e.cpu = cpu;
    e.pid = s.pid;
    e.tid = s.tid;
    e.syscall = d.syscall;
    e.flag = is_exit;
    worker_->Added();
  } else {
    raw_duplicates_[s.tid] = RawDuplicate{s.time, d.syscall, is_exit};
  }
}

void LoadPass::OnComm(const perf::RawRecord& rec) {
  perf::CommRecord c;
  if (absl::Status s = reader_->ParseComm(rec, &c); !s.ok()) {
    BadRecord(s);
    return;
  }
  const RecordAt at{TimeOf(c.sample_id), CpuOf(c.sample_id)};
  unparsed_.Parsed(at.time);
  for (RecordSink* sink : sinks_) sink->OnComm(c, at);
}

void LoadPass::OnTask(const perf::RawRecord& rec) {
  perf::TaskRecord t;
  if (absl::Status s = reader_->ParseTask(rec, &t); !s.ok()) {
    BadRecord(s);
    return;
  }
  const RecordAt at{t.time ? t.time : TimeOf(t.sample_id), CpuOf(t.sample_id)};
  unparsed_.Parsed(at.time);
  for (RecordSink* sink : sinks_) sink->OnTask(t, rec.type == perf::kRecordFork, at);
}

void LoadPass::OnMmap(const perf::RawRecord& rec) {
  perf::MmapRecord m;
  if (absl::Status s = reader_->ParseMmap(rec, &m); !s.ok()) {
    BadRecord(s);
    return;
  }
  const RecordAt at{TimeOf(m.sample_id), CpuOf(m.sample_id)};
  unparsed_.Parsed(at.time);
  if (m.cpumode == perf::kMiscKernel) return;  // kernel text/modules: no sink's business
  for (RecordSink* sink : sinks_) sink->OnMmap(m, at);
}

void LoadPass::OnLost(const perf::RawRecord& rec) {
  perf::LostRecord l;
  if (absl::Status s = reader_->ParseLost(rec, &l); !s.ok()) {
    BadRecord(s);
    return;
  }
  const RecordAt at{TimeOf(l.sample_id), CpuOf(l.sample_id)};
  for (RecordSink* sink : sinks_) sink->OnLost(l, at);
}

void LoadPass::LoadAttachMaps(const perf::FileInfo& info) {
  if (!options_.attach_maps || options_.path == "-") return;
  const std::string path = AttachMaps::PathFor(options_.path);
  if (::access(path.c_str(), F_OK) != 0) return;
  auto refuse = [&](absl::string_view why) {
    attach_use_.warning = absl::StrCat(path, ": ", why, "; the mappings from before the attach are perf's alone");
  };
  absl::StatusOr<std::unique_ptr<InputFile>> file =
      OpenSideFile(path, "table of mappings at the attach", options_.symbols.force);
  absl::StatusOr<std::string> text = file.ok() ? (*file)->ReadAll() : absl::StatusOr<std::string>(file.status());
  if (!text.ok()) return refuse(text.status().message());
  absl::StatusOr<AttachMaps> maps = AttachMaps::Parse(*text, path);
  if (!maps.ok()) return refuse(maps.status().message());
  // Another trace's: its clock is not this one's, or it was read before
  // this recording began (perf's clock reference; the recorder reads it
  // once perf records).
  for (const perf::EventAttr& a : info.attrs) {
    if (a.clockid != maps->clockid()) {
      return refuse(absl::StrCat("read on clock ", maps->clockid(), ", the trace is ",
                                 a.clockid ? absl::StrCat("on clock ", *a.clockid) : "on perf's own clock",
                                 ": another trace's"));
    }
  }
  for (const AttachMaps::Table& t : maps->tables()) {
    if (info.clock_start && t.from < *info.clock_start) {
      return refuse(absl::StrCat("pid ", t.pid, "'s table was read at ", t.from,
                                 " ns, before this recording began: another trace's"));
    }
  }
  attach_ = std::make_unique<AttachReconciler>(*maps, &idx_->strings());
  attach_use_.path = path;
}

void LoadPass::CountersIntoStats(bool copy) {
  index::TraceStats& stats = idx_->mutable_stats();
  stats.time_order_by_rounds = ordering_ == ReplayWorker::Ordering::kRounds;
  stats.records = st_.records;
  stats.samples = st_.samples;
  stats.bad_samples = st_.bad_samples;
  stats.skipped_samples = st_.skipped_samples;
  stats.other_syscall_samples = st_.other_syscall_samples;
  stats.memory_samples = st_.memory_samples;
  stats.unknown_records = st_.unknown_records;
  stats.bad_records = st_.bad_records;
  if (copy) {
    unparsed_.CopyTo(&stats);
  } else {
    unparsed_.Finish(&stats);
  }
}

void LoadPass::ApplyStackAliases() {
  // Calls whose unwinding waited carry a reserved stack id; where their
  // stack was one interned before, the calls take that id (attribute and
  // the reports group calls by it).
  if (stacks_->aliases().empty()) return;
  for (size_t i = 0; i < idx_->num_events(); ++i) {
    const EventId id(static_cast<uint32_t>(i));
    index::CallEvent ev = idx_->event(id);
    if (auto a = stacks_->aliases().find(ev.stack); a != stacks_->aliases().end()) {
      ev.stack = a->second;
      idx_->SetEvent(id, ev);
    }
  }
}

std::vector<symbols::DsoLookup> LoadPass::Lookups() const {
  // Every file the replay read decides its answer: the images' segments
  // (every trace) and, for DWARF stacks, the unwinder's CFI.
  std::vector<symbols::DsoLookup> lookups = sym_->image_lookups();
  if (unwinder_ != nullptr) {
    const std::vector<symbols::DsoLookup>& cfi = unwinder_->modules().lookups();
    lookups.insert(lookups.end(), cfi.begin(), cfi.end());
  }
  return lookups;
}

std::optional<unwind::UnwindStats> LoadPass::UnwindStatsNow() const {
  if (unwinder_ == nullptr) return std::nullopt;
  unwind::UnwindStats u = unwinder_->stats();
  u.waited = stacks_->waited();
  u.waited_reread = stacks_->reread();
  u.waited_lost = stacks_->reread_failed();
  u.waited_max_bytes = stacks_->max_waiting_bytes();
  return u;
}

void LoadPass::Checkpoint() {
  worker_->Paused([this] {
    CountersIntoStats(/*copy=*/true);
    ApplyStackAliases();
    const std::string sources = decoder_->DescribeSources();
    const std::vector<std::string> warnings = decoder_->FormatWarnings();
    const std::optional<unwind::UnwindStats> unwind = UnwindStatsNow();
    const std::vector<symbols::DsoLookup> lookups = Lookups();
    AttachMapsUse attach = attach_use_;
    if (attach_ != nullptr) {
      attach.added_pages = attach_->added_pages();
      attach.removed_pages = attach_->removed_pages();
      attach.mismatched_pages = attach_->mismatched_pages();
    }
    LoadedView v;
    v.index = idx_.get();
    v.info = &reader_->info();
    v.sources = &sources;
    v.format_warnings = &warnings;
    v.unwind = unwind ? &*unwind : nullptr;
    v.mappings = mappings_.get();
    v.dso_lookups = &lookups;
    v.attach_maps = &attach;
    v.stack_thinning = &stack_thinning_;
    std::vector<StackId> held;
    worker_->ForEachHeldWhilePaused([&](TraceEvent& e) {
      if (e.kind != TraceEvent::Kind::kEnter && e.kind != TraceEvent::Kind::kCall) return;
      ++v.held_calls;
      held.push_back(stacks_->Resolved(e.call().stack));
    });
    stacks_->ForEachWaiting([&](StackId s) { held.push_back(s); });
    v.held_stacks = &held;
    const uint64_t cut = options_.checkpoint(v);
    if (cut != 0) {
      worker_->ThinWhilePaused(cut);
      ThinStacks();
    }
    if (options_.after_checkpoint) options_.after_checkpoint(*idx_);
  });
}

void LoadPass::ThinStacks() {
  index::StackTable& table = idx_->stacks();
  std::vector<bool> keep(table.size(), false);
  uint64_t named = 0;
  auto name = [&keep, &named](StackId s) {
    if (s.valid() && s.value() < keep.size() && !keep[s.value()]) {
      keep[s.value()] = true;
      ++named;
    }
  };
  auto carries_stack = [](const TraceEvent& e) {
    return e.kind == TraceEvent::Kind::kEnter || e.kind == TraceEvent::Kind::kCall;
  };
  // The index's calls took their aliases' ids (ApplyStackAliases); the
  // events held take them now, so that no holder names an alias.
  for (size_t i = 0; i < idx_->num_events(); ++i) name(idx_->event(EventId(static_cast<uint32_t>(i))).stack);
  const uint64_t by_calls = named;
  worker_->ForEachHeldWhilePaused([&](TraceEvent& e) {
    if (!carries_stack(e)) return;
    e.call().stack = stacks_->Resolved(e.call().stack);
    name(e.call().stack);
  });
  const uint64_t by_held = named;
  stacks_->ForEachWaiting(name);
  const index::StackTable::Kept k = table.Thin(keep);
  auto renumbered = [&k](StackId s) {
    return s.valid() && s.value() < k.stacks.size() ? StackId(k.stacks[s.value()]) : StackId();
  };
  for (size_t i = 0; i < idx_->num_events(); ++i) {
    const EventId id(static_cast<uint32_t>(i));
    index::CallEvent ev = idx_->event(id);
    ev.stack = renumbered(ev.stack);
    idx_->SetEvent(id, ev);
  }
  worker_->ForEachHeldWhilePaused([&](TraceEvent& e) {
    if (carries_stack(e)) e.call().stack = renumbered(e.call().stack);
  });
  stacks_->Renumbered(k);
  StackThinningStats& st = stack_thinning_;
  ++st.thinnings;
  st.dropped += keep.size() - k.num_stacks;
  st.kept += k.num_stacks;
  st.held += by_held - by_calls;
  st.waiting += named - by_held;
}

std::unique_ptr<LoadedTrace> LoadPass::Finish() {
  CountersIntoStats(/*copy=*/false);
  if (progress_) std::fprintf(stderr, "\r%60s\r", "");
  ApplyStackAliases();
  idx_->Finalize();
  std::vector<symbols::DsoLookup> lookups = Lookups();
  auto trace = std::make_unique<LoadedTrace>(std::move(idx_), std::move(sym_), reader_->info(),
                                             decoder_->DescribeSources());
  trace->set_format_warnings(decoder_->FormatWarnings());
  trace->set_dso_lookups(std::move(lookups));
  if (attach_ != nullptr) {
    attach_use_.added_pages = attach_->added_pages();
    attach_use_.removed_pages = attach_->removed_pages();
    attach_use_.mismatched_pages = attach_->mismatched_pages();
  }
  trace->set_attach_maps(std::move(attach_use_));
  if (std::optional<unwind::UnwindStats> u = UnwindStatsNow()) trace->set_unwind_stats(*u);
  return trace;
}

}  // namespace pageblame::replay
