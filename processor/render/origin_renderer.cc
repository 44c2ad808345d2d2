#include "processor/render/origin_renderer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "processor/analysis/app_frames.h"
#include "processor/analysis/syscall_format.h"
#include "processor/base/format.h"
#include "processor/base/text_escape.h"
#include "processor/symbols/absl_compat.h"

namespace pageblame::render {

OriginRenderer::Printed& OriginRenderer::PrintedOf(const index::CallEvent& ev) {
  const session::StackFrames::Stack& stack = frames_.Of(ev);
  // Bounded as StackFrames is: a stack's Printed is made again from its
  // frames when it is needed again (the same text), where keeping every
  // stack's (growth --json of 2 M stacks) held ~100 B and its JSON each.
  const std::pair<uint32_t, uint32_t> key{ev.stack.value(), ev.pid};
  if (printed_.size() >= session::StackFrames::kMaxStacks && !printed_.contains(key)) printed_.clear();
  Printed& p = printed_[key];
  if (p.serial != stack.serial) {
    p.serial = stack.serial;
    p.first_app = analysis::FirstAppFrame(stack.frames);
    p.json.clear();
  }
  return p;
}

std::string DisplayName(const symbols::Frame& f) {
  if (!f.symbol) return Hex(f.ip);
  return f.inlined ? absl::StrCat(EscapeName(*f.symbol), " (inlined)") : EscapeName(*f.symbol);
}

namespace {

Json FramesJson(const std::vector<symbols::Frame>& frames) {
  Json stack = Json::array();
  for (const symbols::Frame& f : frames) {
    Json j;
    j["ip"] = Hex(f.ip);
    j["symbol"] = f.symbol ? Json(*f.symbol) : Json(nullptr);
    j["dso"] = f.dso.empty() ? Json(nullptr) : Json(f.dso);
    if (f.inlined) j["inlined"] = true;
    stack.push_back(std::move(j));
  }
  return stack;
}

}  // namespace

Json OriginRenderer::StackJson(const index::CallEvent& ev) { return FramesJson(Frames(ev)); }

Json OriginRenderer::OriginJson(EventId id) {
  if (!id.valid()) return nullptr;
  const index::CallEvent& ev = idx_.event(id);
  Json j;
  j["syscall"] = std::string(decode::SyscallName(ev.syscall));
  j["time"] = TimeSeconds(ev.time);
  j["pid"] = ev.pid;
  j["tid"] = ev.tid;
  j["comm"] = std::string(idx_.strings().Get(ev.comm));
  j["stack"] = FramesJson(frames_.Of(ev).frames);
  // Where the application's own code begins (app_frames.h), for tools that
  // want its frames without knowing every runtime's libraries.
  const std::optional<size_t> app = PrintedOf(ev).first_app;
  j["first_app_frame"] = app ? Json(*app) : Json(nullptr);
  return j;
}

std::string DumpJson(const Json& j) {
  return JsonControlsEscaped(j.dump(1, ' ', false, Json::error_handler_t::replace));
}

std::string JsonControlsEscaped(std::string json) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  size_t done = 0;  // json[0, done) is in `out`
  for (size_t i = 0; i < json.size(); ++i) {
    const auto c = static_cast<unsigned char>(json[i]);
    // nlohmann's output is UTF-8: 0xc2 is a lead byte, and its continuation
    // byte, 0x80-0x9f for a C1 control, is the code point.
    const bool c1 = c == 0xc2 && i + 1 < json.size() && static_cast<unsigned char>(json[i + 1]) < 0xa0;
    if (c != 0x7f && !c1) continue;
    const auto cp = static_cast<unsigned char>(c1 ? json[i + 1] : c);
    out.append(json, done, i - done);
    out.append({'\\', 'u', '0', '0', kHex[cp >> 4], kHex[cp & 15]});
    i += c1 ? 1 : 0;
    done = i + 1;
  }
  if (done == 0) return json;
  out.append(json, done);
  return out;
}

void AppendJsonString(std::string* out, std::string_view s) {
  const bool plain = std::all_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u < 0x7f && c != '"' && c != '\\';
  });
  if (plain) {
    absl::StrAppend(out, "\"", symbols::ToAbsl(s), "\"");
  } else {
    absl::StrAppend(out, DumpJson(Json(std::string(s))));
  }
}

void OriginRenderer::AppendOriginJson(std::string* out, EventId id, int indent) {
  if (!id.valid()) {
    absl::StrAppend(out, "null");
    return;
  }
  const index::CallEvent& ev = idx_.event(id);
  // The layout of dump(1): one space more per level, "key": value.
  const std::string nl = "\n" + std::string(indent, ' ');
  absl::StrAppend(out, "{", nl, " \"syscall\": \"",
                  symbols::ToAbsl(decode::SyscallName(ev.syscall)), "\",", nl, " \"time\": ",
                  Json(TimeSeconds(ev.time)).dump(), ",", nl, " \"pid\": ", ev.pid, ",", nl,
                  " \"tid\": ", ev.tid, ",", nl, " \"comm\": ");
  AppendJsonString(out, idx_.strings().Get(ev.comm));
  absl::StrAppend(out, ",", nl, " \"stack\": ");
  // The stack's text is most of the output (kilobytes per region):
  // std::string::append copies it once, where StrAppend would first
  // zero-fill the room for it (libstdc++ has no uninitialized resize).
  const Printed& c = StackJsonText(ev, nl);
  out->append(c.json);
  absl::StrAppend(out, ",", nl, " \"first_app_frame\": ", c.first_app ? absl::StrCat(*c.first_app) : "null");
  out->append(nl);
  out->push_back('}');
}

const OriginRenderer::Printed& OriginRenderer::StackJsonText(const index::CallEvent& ev, const std::string& nl) {
  Printed& c = PrintedOf(ev);
  if (!c.json.empty() && c.json_nl == nl) return c;
  const session::StackFrames::Stack& stack = frames_.Of(ev);
  const std::vector<symbols::Frame>& frames = stack.frames;
  std::string& out = c.json;
  out.clear();
  if (frames.empty()) {
    out = "[]";
  } else {
    out = "[";
    for (size_t i = 0; i < frames.size(); ++i) {
      const symbols::Frame& f = frames[i];
      auto [it, made] = frame_json_.try_emplace(
          FrameJsonKey(ev.pid, stack.frame_keys[i], f.ip, stack.frame_parts[i], nl));
      std::string& frame = it->second;
      if (made) {
        absl::StrAppend(&frame, nl, "  {", nl, "   \"ip\": \"", Hex(f.ip), "\",", nl,
                        "   \"symbol\": ");
        if (f.symbol) {
          AppendJsonString(&frame, *f.symbol);
        } else {
          absl::StrAppend(&frame, "null");
        }
        absl::StrAppend(&frame, ",", nl, "   \"dso\": ");
        if (f.dso.empty()) {
          absl::StrAppend(&frame, "null");
        } else {
          AppendJsonString(&frame, f.dso);
        }
        if (f.inlined) absl::StrAppend(&frame, ",", nl, "   \"inlined\": true");
        absl::StrAppend(&frame, nl, "  }");
      }
      if (i) out.push_back(',');
      out.append(frame);
    }
    absl::StrAppend(&out, nl, " ]");
  }
  c.json_nl = nl;
  return c;
}

std::string OriginRenderer::StackText(const index::CallEvent& ev, const std::string& indent) {
  std::string out;
  int n = 0;
  for (const symbols::Frame& f : Frames(ev)) {
    absl::StrAppend(&out, indent, "#", n++, " ", Hex(f.ip), " ");
    if (f.inlined) {
      absl::StrAppend(&out, DisplayName(f), "\n");  // as perf script prints it
      continue;
    }
    if (f.symbol) {
      absl::StrAppend(&out, EscapeName(*f.symbol), f.offset ? absl::StrCat("+", Hex(f.offset)) : "");
    } else {
      absl::StrAppend(&out, "[unknown]");
    }
    absl::StrAppend(&out, " (", f.dso.empty() ? "[unknown]" : EscapeName(f.dso), ")\n");
  }
  if (n == 0) absl::StrAppend(&out, indent, "(no user stack recorded)\n");
  return out;
}

std::string OriginRenderer::CallText(const index::CallEvent& ev) {
  return absl::StrCat(analysis::DescribeCall(ev), " at ", FormatTime(ev.time), " by ",
                      EscapeName(idx_.strings().Get(ev.comm)), " ", ev.pid, "/", ev.tid);
}

std::string OriginRenderer::ShortStack(const index::CallEvent& ev, size_t max_frames) {
  // Only the frames the summary needs (app_frames.h: up to the application's
  // first `max_frames`): symbolizing them directly is cheaper than checking a
  // whole cached stack.
  std::vector<symbols::Frame> frames;
  const std::vector<uint64_t> ips = idx_.stacks().Ips(ev.stack);
  const bool inlines = idx_.stacks().Unwound(ev.stack);
  const bool all = summary_.style == analysis::SummaryStyle::kAll;
  size_t app = 0;
  for (size_t i = 0; i < ips.size() && app < max_frames && (!all || frames.size() < max_frames); ++i) {
    const size_t before = frames.size();
    session::AppendFrames(sym_, ev, ips, i, inlines, &frames);
    if (summary_.hide) {
      frames.erase(std::remove_if(frames.begin() + before, frames.end(),
                                  [&](const symbols::Frame& f) { return summary_.Hides(f); }),
                   frames.end());
    }
    for (size_t j = before; j < frames.size(); ++j) app += analysis::KindOf(frames[j]) == analysis::FrameKind::kApp;
  }
  std::vector<std::string> names;
  if (all) {
    for (size_t i = 0; i < frames.size() && i < max_frames; ++i) names.push_back(DisplayName(frames[i]));
  } else {
    for (size_t i : analysis::SummaryFrames(frames, max_frames)) {
      names.push_back(EscapeName(analysis::SummaryName(frames[i])));
    }
  }
  return names.empty() ? "(no user stack)" : absl::StrJoin(names, " <- ");
}

}  // namespace pageblame::render
