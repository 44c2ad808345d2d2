#include "processor/decode/event_format.h"

#include <cstdint>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace pageblame::decode {
namespace {

bool IsIdentifier(absl::string_view s) {
  if (s.empty() || absl::ascii_isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// Decimal digits only (the kernel prints offsets and sizes with %u), at most
// `max`.
bool ParseNumber(absl::string_view s, int64_t max, int64_t* out) {
  if (s.empty() || s.size() > 12) return false;
  int64_t v = 0;
  for (char c : s) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
    v = v * 10 + (c - '0');
  }
  if (v > max) return false;
  *out = v;
  return true;
}

// What a field or event line may hold: printable ASCII and tabs.
bool IsPrintable(absl::string_view s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && u != '\t') || u > 0x7e) return false;
  }
  return true;
}

// "KEY:VALUE" (blanks around either allowed) -> VALUE, if the key matches.
bool KeyValue(absl::string_view part, absl::string_view key, absl::string_view* value) {
  part = absl::StripAsciiWhitespace(part);
  if (!absl::ConsumePrefix(&part, key)) return false;
  part = absl::StripLeadingAsciiWhitespace(part);
  if (!absl::ConsumePrefix(&part, ":")) return false;
  *value = absl::StripAsciiWhitespace(part);
  return true;
}

// "field:DECL;\toffset:N;\tsize:N;\tsigned:N;" (signed: since Linux 2.6.32).
absl::Status ParseField(absl::string_view line, FieldFormat* f) {
  std::vector<absl::string_view> parts = absl::StrSplit(line, ';');
  absl::string_view decl, offset, size, is_signed;
  if (parts.size() < 4 || !KeyValue(parts[0], "field", &decl)) {
    return absl::DataLossError(
        "expected 'field:TYPE NAME;<TAB>offset:N;<TAB>size:N;[<TAB>signed:0|1;]'");
  }
  if (!KeyValue(parts[1], "offset", &offset) || !KeyValue(parts[2], "size", &size)) {
    return absl::DataLossError("expected 'offset:N;' and 'size:N;' after the field's declaration");
  }
  size_t next = 3;
  if (next + 1 < parts.size() && KeyValue(parts[next], "signed", &is_signed)) ++next;
  // Whatever follows must be KEY:VALUE parts (ignored: none is defined
  // today), then nothing after the last ';'.
  if (!absl::StripAsciiWhitespace(parts.back()).empty()) {
    return absl::DataLossError("text after the field's last ';'");
  }
  for (size_t i = next; i + 1 < parts.size(); ++i) {
    absl::string_view key = absl::StripAsciiWhitespace(parts[i]);
    const size_t colon = key.find(':');
    if (colon == absl::string_view::npos ||
        !IsIdentifier(absl::StripTrailingAsciiWhitespace(key.substr(0, colon)))) {
      return absl::DataLossError(absl::StrCat("unexpected '", key, "' in the field"));
    }
  }

  int64_t v;
  if (!ParseNumber(offset, EventFormat::kMaxFieldEnd, &v)) {
    return absl::DataLossError(absl::StrCat("bad offset '", offset, "'"));
  }
  f->offset = static_cast<int>(v);
  if (!ParseNumber(size, EventFormat::kMaxFieldEnd - f->offset, &v)) {
    return absl::DataLossError(
        absl::StrCat("bad size '", size, "' (at offset ", f->offset, ")"));
  }
  f->size = static_cast<int>(v);
  if (!is_signed.empty()) {
    if (is_signed != "0" && is_signed != "1") {
      return absl::DataLossError(absl::StrCat("bad signed '", is_signed, "'"));
    }
    f->is_signed = is_signed == "1";
  }

  // DECL: type words, the name, array suffixes ("char comm[16]"), or the
  // name after the brackets ("__data_loc char[] filename").
  absl::string_view rest = decl;
  while (absl::EndsWith(rest, "]")) {
    const size_t open = rest.rfind('[');
    if (open == absl::string_view::npos) return absl::DataLossError("unbalanced ']'");
    rest = absl::StripTrailingAsciiWhitespace(rest.substr(0, open));
  }
  // `rest` is a prefix of `decl`: the array suffixes are what follows it.
  const absl::string_view arrays = absl::StripAsciiWhitespace(decl.substr(rest.size()));
  size_t start = rest.size();
  while (start > 0 && (absl::ascii_isalnum(static_cast<unsigned char>(rest[start - 1])) ||
                       rest[start - 1] == '_')) {
    --start;
  }
  absl::string_view name = rest.substr(start);
  absl::string_view type = absl::StripTrailingAsciiWhitespace(rest.substr(0, start));
  if (!IsIdentifier(name) || type.empty()) {
    return absl::DataLossError(absl::StrCat("bad field declaration '", decl, "'"));
  }
  f->name = std::string(name);
  f->type = absl::StrCat(type, arrays);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<EventFormat> EventFormat::Parse(std::string_view text,
                                              std::string_view system_name) {
  EventFormat ev;
  const absl::string_view system(system_name.data(), system_name.size());
  if (!IsIdentifier(system)) {
    return absl::DataLossError(absl::StrCat("bad event system name '", system, "'"));
  }
  ev.system_ = std::string(system);
  enum class Want { kName, kId, kFormat, kFields, kDone } want = Want::kName;
  bool common = true;
  int n = 0;
  for (absl::string_view raw : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    ++n;
    auto error = [&](absl::string_view what) {
      return absl::DataLossError(absl::StrCat(
          ev.name_.empty() ? "event format" : absl::StrCat("format of ", ev.name_), ", line ", n,
          ": ", what));
    };
    if (want == Want::kDone) break;
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty()) {
      // One blank line ends the common fields; others mean nothing.
      if (want == Want::kFields && !ev.fields_.empty()) common = false;
      continue;
    }
    if (want == Want::kFields && absl::StartsWith(line, "print fmt:")) {
      want = Want::kDone;  // never parsed: see the header
      continue;
    }
    if (!IsPrintable(line)) return error("not text");
    absl::string_view value;
    switch (want) {
      case Want::kName:
        if (!KeyValue(line, "name", &value) || !IsIdentifier(value)) {
          return error("expected 'name: EVENT'");
        }
        ev.name_ = std::string(value);
        want = Want::kId;
        break;
      case Want::kId: {
        int64_t id;
        if (!KeyValue(line, "ID", &value) || !ParseNumber(value, INT32_MAX, &id)) {
          return error("expected 'ID: NUMBER'");
        }
        ev.id_ = static_cast<int>(id);
        want = Want::kFormat;
        break;
      }
      case Want::kFormat:
        if (!KeyValue(line, "format", &value) || !value.empty()) return error("expected 'format:'");
        want = Want::kFields;
        break;
      case Want::kFields: {
        FieldFormat f;
        if (absl::Status s = ParseField(line, &f); !s.ok()) return error(s.message());
        f.common = common;
        for (const FieldFormat& other : ev.fields_) {
          if (other.name == f.name) return error(absl::StrCat("a second field '", f.name, "'"));
        }
        ev.fields_.push_back(std::move(f));
        break;
      }
      case Want::kDone:
        break;
    }
  }
  if (want == Want::kName || want == Want::kId || want == Want::kFormat) {
    return absl::DataLossError(absl::StrCat(
        ev.name_.empty() ? "event format" : absl::StrCat("format of ", ev.name_),
        ": ends before its ", want == Want::kName ? "name" : want == Want::kId ? "ID" : "fields"));
  }
  return ev;
}

const FieldFormat* EventFormat::FindField(std::string_view name) const {
  for (const FieldFormat& f : fields_) {
    if (!f.common && f.name == name) return &f;
  }
  return nullptr;
}

}  // namespace pageblame::decode
