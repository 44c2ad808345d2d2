#include "processor/report/origin_renderer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "processor/report/syscall_format.h"

namespace pageblame::report {

std::vector<symbols::Frame> OriginRenderer::Frames(const index::CallEvent& ev) {
  std::vector<symbols::Frame> out;
  for (uint64_t ip : idx_.stacks().Get(ev.stack)) out.push_back(sym_.Symbolize(ev.pid, ev.time, ip));
  return out;
}

Json OriginRenderer::StackJson(const index::CallEvent& ev) {
  Json stack = Json::array();
  for (const symbols::Frame& f : Frames(ev)) {
    Json j;
    j["ip"] = Hex(f.ip);
    j["symbol"] = f.symbol ? Json(*f.symbol) : Json(nullptr);
    j["dso"] = f.dso.empty() ? Json(nullptr) : Json(f.dso);
    stack.push_back(std::move(j));
  }
  return stack;
}

Json OriginRenderer::OriginJson(EventId id) {
  if (!id.valid()) return nullptr;
  const index::CallEvent& ev = idx_.event(id);
  Json j;
  j["syscall"] = std::string(decode::SyscallName(ev.syscall));
  j["time"] = TimeSeconds(ev.time);
  j["pid"] = ev.pid;
  j["tid"] = ev.tid;
  j["comm"] = std::string(idx_.strings().Get(ev.comm));
  j["stack"] = StackJson(ev);
  return j;
}

std::string OriginRenderer::StackText(const index::CallEvent& ev, const std::string& indent) {
  std::string out;
  int n = 0;
  for (const symbols::Frame& f : Frames(ev)) {
    absl::StrAppend(&out, indent, "#", n++, " ", Hex(f.ip), " ");
    if (f.symbol) {
      absl::StrAppend(&out, *f.symbol, f.offset ? absl::StrCat("+", Hex(f.offset)) : "");
    } else {
      absl::StrAppend(&out, "[unknown]");
    }
    absl::StrAppend(&out, " (", f.dso.empty() ? "[unknown]" : f.dso, ")\n");
  }
  if (n == 0) absl::StrAppend(&out, indent, "(no user stack recorded)\n");
  return out;
}

std::string OriginRenderer::CallText(const index::CallEvent& ev) {
  return absl::StrCat(DescribeCall(ev), " at ", FormatTime(ev.time), " by ",
                      std::string(idx_.strings().Get(ev.comm)), " ", ev.pid, "/", ev.tid);
}

std::string OriginRenderer::ShortStack(const index::CallEvent& ev, size_t max_frames) {
  std::vector<std::string> names;
  for (uint64_t ip : idx_.stacks().Get(ev.stack)) {
    if (names.size() == max_frames) break;
    symbols::Frame f = sym_.Symbolize(ev.pid, ev.time, ip);
    names.push_back(f.symbol ? *f.symbol : Hex(f.ip));
  }
  return names.empty() ? "(no user stack)" : absl::StrJoin(names, " <- ");
}

}  // namespace pageblame::report
