#include "processor/perf/chunk_chain_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "processor/base/status_macros.h"

namespace pageblame::perf {

absl::StatusOr<std::unique_ptr<PerfReader>> ChunkChainReader::Open(Chunks next, ChunkDone done) {
  std::unique_ptr<ChunkChainReader> r(new ChunkChainReader(std::move(next), std::move(done)));
  ASSIGN_OR_RETURN(std::string first, r->next_());
  if (first.empty()) return absl::NotFoundError("a recording in chunks without any chunk");
  ASSIGN_OR_RETURN(r->current_, PerfReader::Open(first));
  r->current_path_ = first;
  r->chunks_ = 1;
  // The first chunk's header is the recording's: its attrs parse every
  // chunk's records (CheckSameEvents holds the later ones to them).
  r->info_ = r->current_->info();
  r->path_ = first;
  r->first_path_ = first;
  r->IndexAttrs();
  return std::unique_ptr<PerfReader>(std::move(r));
}

absl::StatusOr<std::unique_ptr<PerfReader>> ChunkChainReader::OpenFiles(const std::vector<std::string>& paths) {
  auto at = std::make_shared<size_t>(0);
  ASSIGN_OR_RETURN(std::unique_ptr<PerfReader> r,
                   Open([paths, at]() -> absl::StatusOr<std::string> {
                     return *at < paths.size() ? paths[(*at)++] : std::string();
                   },
                        nullptr));
  // The whole chain's size, for progress and the replay's buffers (about
  // the data: each chunk's header and features are counted too).
  uint64_t total = 0;
  for (const std::string& p : paths) {
    struct stat st;
    if (::stat(p.c_str(), &st) == 0) total += static_cast<uint64_t>(st.st_size);
  }
  static_cast<ChunkChainReader*>(r.get())->info_.data_size = std::max(r->info().data_size, total);
  return r;
}

absl::StatusOr<bool> ChunkChainReader::Next(RawRecord* out) {
  while (true) {
    ASSIGN_OR_RETURN(bool got, current_->Next(out));
    if (!got) {
      ASSIGN_OR_RETURN(bool more, OpenNext());
      if (!more) return false;
      continue;
    }
    if (in_preamble_) {
      // perf synthesized these again for the new file (perf_event__synthesize_*
      // in record__switch_output); the earlier chunks said it all.
      if (out->type == kRecordFinishedInit) {
        in_preamble_ = false;
        continue;
      }
      if (out->type != kRecordSample) continue;
      in_preamble_ = false;  // perf < 5.19: no FINISHED_INIT
    }
    return true;
  }
}

absl::StatusOr<bool> ChunkChainReader::OpenNext() {
  ASSIGN_OR_RETURN(std::string path, next_());
  if (path.empty()) {
    set_cut_at_end(current_->cut_at_end());
    if (done_) done_(current_path_);
    return false;
  }
  ASSIGN_OR_RETURN(std::unique_ptr<PerfReader> later, PerfReader::Open(path));
  RETURN_IF_ERROR(CheckSameEvents(*later, path));
  later->ContinueStreamOf(current_.get());
  done_bytes_ += current_->bytes_read();
  const std::string finished = current_path_;
  current_ = std::move(later);  // the records handed out before are no longer used
  current_path_ = path;
  path_ = path;
  ++chunks_;
  in_preamble_ = true;
  if (done_) done_(finished);
  return true;
}

absl::Status ChunkChainReader::CheckSameEvents(const PerfReader& later, const std::string& path) const {
  const std::vector<EventAttr>& a = info_.attrs;
  const std::vector<EventAttr>& b = later.info().attrs;
  bool same = a.size() == b.size();
  for (size_t i = 0; same && i < a.size(); ++i) {
    same = a[i].type == b[i].type && a[i].config == b[i].config && a[i].sample_type == b[i].sample_type &&
           a[i].sample_regs_user == b[i].sample_regs_user && a[i].sample_id_all == b[i].sample_id_all &&
           a[i].ids == b[i].ids;
  }
  if (same) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat(path, ": not a chunk of the recording begun by ", first_path_,
                   ": its events (attrs and their ids) differ"));
}

}  // namespace pageblame::perf
