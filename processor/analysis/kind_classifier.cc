#include "processor/analysis/kind_classifier.h"

#include <sys/mman.h>

namespace pageblame::analysis {

StackRole KindClassifier::Role(EventId call) {
  if (!call.valid()) return StackRole::kNone;
  const index::CallEvent& ev = idx_.event(call);
  auto [it, inserted] = roles_.try_emplace({ev.stack.value(), ev.pid}, StackRole::kNone);
  if (inserted) it->second = RoleOf(frames_.Frames(ev));
  return it->second;
}

RegionKind KindClassifier::Of(const index::Version& v) {
  RegionFacts f;
  f.prot = v.attrs.prot;
  f.flags = v.attrs.flags;
  const std::string_view path = idx_.strings().Get(v.attrs.path);
  f.path = absl::string_view(path.data(), path.size());
  if (v.origin.valid()) {
    const index::CallEvent& ev = idx_.event(v.origin);
    f.made_by_brk = ev.syscall == decode::Syscall::kBrk;
    f.file_backed = ev.syscall == decode::Syscall::kMmap && !(ev.args[3] & MAP_ANONYMOUS);
  }
  if (!path.empty()) {
    if (!exec_files_made_) {
      for (uint32_t i = 0; i < idx_.num_versions(); ++i) {
        const index::Version& x = idx_.version(VersionId(i));
        if ((x.attrs.prot & PROT_EXEC) && x.attrs.path.valid()) exec_files_.insert({x.process, x.attrs.path.value()});
      }
      exec_files_made_ = true;
    }
    f.executable_file = exec_files_.contains({v.process, v.attrs.path.value()});
  }
  f.origin = Role(v.origin);
  f.commit = Role(v.commit);
  return KindOf(f);
}

}  // namespace pageblame::analysis
