#include "processor/session/unaccounted.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "processor/base/format.h"
#include "processor/base/input_file.h"
#include "processor/base/side_file_trust.h"
#include "processor/base/status_macros.h"
#include "processor/base/usage_error.h"
#include "processor/regions/page_diff.h"
#include "processor/regions/region_table_reader.h"
#include "processor/regions/runtime_table_store.h"
#include "processor/session/residency_load.h"

namespace pageblame::session {
namespace {

std::string Perms(const index::RegionAttrs& a) {
  return absl::StrCat((a.prot & PROT_READ) ? "r" : "-", (a.prot & PROT_WRITE) ? "w" : "-",
                      (a.prot & PROT_EXEC) ? "x" : "-", (a.flags & MAP_SHARED) ? "s" : "p");
}

// The one pid the answer is about: --pid, else the only process selected,
// else the only one with saved runtime tables (a .NET app among the
// processes of its recording).
absl::StatusOr<uint32_t> OnePid(const index::TraceIndex& idx, const Selection& selection,
                                const std::vector<regions::RuntimeTableStore::Entry>& saved) {
  if (selection.pid) return *selection.pid;
  std::set<uint32_t> pids, with_tables;
  for (uint32_t p : selection.processes) pids.insert(idx.process(p).pid);
  if (pids.size() == 1) return *pids.begin();
  for (const auto& e : saved) {
    if (pids.count(e.pid) > 0) with_tables.insert(e.pid);
  }
  if (with_tables.size() == 1) return *with_tables.begin();
  return UsageError(absl::StrCat("--unaccounted is about one process: choose it with --pid (the trace's: ",
                                 absl::StrJoin(pids, ", "), ")"));
}

// The entry of `pid` alive at `time` (a reused pid has several), else its last.
uint32_t EntryAt(const index::TraceIndex& idx, uint32_t pid, uint64_t time) {
  const std::vector<uint32_t> entries = idx.ProcessesWithPid(pid);
  for (uint32_t p : entries) {
    const index::Process& proc = idx.process(p);
    if (proc.t_start <= time && time < proc.t_exit) return p;
  }
  return entries.back();
}

// Why the saved tables beside the trace may not decide an answer, or "":
// the trace's directory is one others can write, and TRACE.runtime/ is not
// a directory of root's or the user's that only they can write.
std::string UntrustedTableDir(const std::string& trace_path, bool force) {
  const std::string dir = regions::RuntimeTableStore::DirFor(trace_path);
  if (force || !InSharedDirectory(dir)) return "";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return absl::StrCat(dir, ": ", std::strerror(errno));
  const absl::Status trusted = TrustedInSharedDir(fd, dir);
  ::close(fd);
  return trusted.ok() ? "" : std::string(trusted.message());
}

// The saved tables of this recording: none from a directory another user
// could have filled, none stamped outside the recording (another
// recording's, or a forged stamp). What was left out is said in `refused`.
std::vector<regions::RuntimeTableStore::Entry> OwnTables(const Session& session,
                                                        std::vector<std::string>* refused) {
  const std::string& trace_path = session.path();
  const residency::ResidencyIndex* rss = session.residency();
  std::vector<regions::RuntimeTableStore::Entry> ours;
  const std::vector<regions::RuntimeTableStore::Entry> all = regions::RuntimeTableStore::List(trace_path);
  if (all.empty()) return ours;
  if (std::string why = UntrustedTableDir(trace_path, session.force()); !why.empty()) {
    refused->push_back(std::move(why));
    return ours;
  }
  residency::TraceFacts facts = session.Facts();
  // The stop snapshot is a tighter end than the file's last write, which a
  // copy of the trace moves.
  if (rss != nullptr && rss->last_time() != 0) {
    facts.end_time = std::max(rss->last_time(), session.index().stats().last_time);
  }
  for (const auto& e : all) {
    if (std::string outside = facts.Outside(e.time); !outside.empty()) {
      refused->push_back(absl::StrCat(e.path, ": stamped ", FormatTime(e.time), ", ", outside));
    } else {
      ours.push_back(e);
    }
  }
  return ours;
}

absl::StatusOr<regions::RuntimeTableStore::Entry> SavedTable(const Session& session, uint32_t pid, uint64_t at) {
  const std::string& trace_path = session.path();
  std::vector<std::string> refused;
  const std::vector<regions::RuntimeTableStore::Entry> ours = OwnTables(session, &refused);
  if (std::optional<regions::RuntimeTableStore::Entry> e = regions::RuntimeTableStore::Latest(ours, pid, at)) {
    return *e;
  }
  return absl::NotFoundError(absl::StrCat(
      "no .NET runtime table of pid ", pid, " saved beside ", trace_path, " at or before ",
      FormatTime(at), " (", regions::RuntimeTableStore::DirFor(trace_path),
      "/): `pageblame record` saves one when it stops recording a .NET process, and on SIGUSR1, with snapshots "
      "on; or give one: --maddress FILE (pageblame dotnet-regions, SOS eeheap)",
      refused.empty() ? "" : absl::StrCat("; not used: ", absl::StrJoin(refused, "; "))));
}

// A saved table, read by the side-file rule (it was found, not named).
absl::StatusOr<regions::RegionTable> ReadSavedTable(const std::string& path, bool force) {
  ASSIGN_OR_RETURN(std::unique_ptr<InputFile> f, OpenSideFile(path, "runtime table", force));
  ASSIGN_OR_RETURN(std::string text, f->ReadAll());
  return regions::RegionTableReader::ParseString(std::move(text), path);
}

}  // namespace

regions::RegionTable AddressSpaceAt(const index::TraceIndex& idx, uint32_t process, uint64_t time) {
  regions::RegionTable t;
  t.format = "maps";
  for (VersionId v : idx.RegionsAt(process, time)) {
    const index::Version& ver = idx.version(v);
    regions::Region r;
    r.start = ver.start;
    r.end = ver.end;
    r.protect = Perms(ver.attrs);
    if (ver.attrs.path.valid()) r.usage = std::string(idx.strings().Get(ver.attrs.path));
    t.regions.push_back(std::move(r));
  }
  return t;
}

absl::StatusOr<Unaccounted> UnaccountedOf(const Session& session, const Selection& selection,
                                          const std::optional<std::string>& runtime_table) {
  const index::TraceIndex& idx = session.index();
  Unaccounted out;
  std::vector<std::string> ignored;  // said when no table is left for the process (SavedTable)
  ASSIGN_OR_RETURN(out.pid, OnePid(idx, selection,
                                   runtime_table ? std::vector<regions::RuntimeTableStore::Entry>()
                                                 : OwnTables(session, &ignored)));
  out.time = selection.at;
  if (runtime_table) {
    out.table = *runtime_table;
  } else {
    ASSIGN_OR_RETURN(regions::RuntimeTableStore::Entry e,
                     SavedTable(session, out.pid, selection.at));
    out.table = e.path;
    out.time = e.time;
    out.saved = true;
  }
  ASSIGN_OR_RETURN(regions::RegionTable runtime, out.saved ? ReadSavedTable(out.table, session.force())
                                                           : regions::RegionTableReader::DetectAndParse(out.table));
  const regions::RegionTable space = AddressSpaceAt(idx, EntryAt(idx, out.pid, out.time), out.time);
  for (const regions::Region& r : space.regions) {
    if (space.IsCommitted(r)) out.committed += r.size();
  }
  regions::DiffResult d = regions::Diff(space, runtime);
  out.bytes = d.unaccounted.bytes;
  out.pieces = d.unaccounted.pieces.ToVector();
  return out;
}

}  // namespace pageblame::session
