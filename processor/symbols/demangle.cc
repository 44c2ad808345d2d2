#include "processor/symbols/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace pageblame::symbols {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool IsIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Where the first "operator" keyword at bracket depth 0 starts, or npos. What
// follows it ("<<", "()", " new", " bool") must not be read as brackets.
size_t OperatorKeyword(std::string_view name) {
  size_t found = std::string_view::npos;
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c == '(' || c == '<' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == '>' || c == ']' || c == '}') {
      --depth;
    } else if (depth == 0 && name.compare(i, 8, "operator") == 0 &&
               (i == 0 || !IsIdentChar(name[i - 1])) &&
               (i + 8 == name.size() || !IsIdentChar(name[i + 8]))) {
      found = i;
      break;  // everything after it belongs to the operator's name
    }
  }
  return found;
}

}  // namespace

std::string StripSignature(std::string_view s) {
  // Thunks name the function they forward to: keep the words, strip the rest.
  std::string_view prefix;
  for (std::string_view p : {"non-virtual thunk to ", "virtual thunk to ",
                             "covariant return thunk to "}) {
    if (StartsWith(s, p)) {
      prefix = p;
      s.remove_prefix(p.size());
      break;
    }
  }
  // GCC's clone suffixes (".part.0", ".cold", ".isra.0", ".constprop.0").
  if (size_t clone = s.find(" [clone "); clone != std::string_view::npos) s = s.substr(0, clone);
  // Member function qualifiers after the parameter list.
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (std::string_view q : {" const", " volatile", " &&", " &", " noexcept", " restrict"}) {
      if (EndsWith(s, q)) {
        s.remove_suffix(q.size());
        stripped = true;
      }
    }
  }
  if (!EndsWith(s, ")")) return std::string(prefix) + std::string(s);  // not a function
  // The '(' that opens the final parameter list.
  int depth = 0;
  size_t open = std::string_view::npos;
  for (size_t i = s.size(); i-- > 0;) {
    if (s[i] == ')') ++depth;
    if (s[i] == '(' && --depth == 0) {
      open = i;
      break;
    }
  }
  if (open == std::string_view::npos || open == 0) return std::string(prefix) + std::string(s);
  std::string_view name = s.substr(0, open);
  // A template function's return type comes first ("void ns::f<int>"): cut at
  // the last space outside brackets, before any operator keyword.
  size_t limit = std::min(OperatorKeyword(name), name.size());
  size_t space = std::string_view::npos;
  depth = 0;
  for (size_t i = 0; i < limit; ++i) {
    char c = name[i];
    if (c == '(' || c == '<' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == '>' || c == ']' || c == '}') --depth;
    if (c == ' ' && depth == 0) space = i;
  }
  if (space != std::string_view::npos) name.remove_prefix(space + 1);
  return std::string(prefix) + std::string(name);
}

std::string Demangle(std::string_view name, bool params) {
  // Only "_Z" names are C++ manglings; __cxa_demangle would also "demangle"
  // plain words like "i" into type names ("int"), which must not happen to C
  // symbols.
  if (name.size() < 3 || name.substr(0, 2) != "_Z") return std::string(name);
  std::string owned(name);  // __cxa_demangle wants a NUL-terminated string
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(owned.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || out == nullptr) return owned;
  return params ? std::string(out.get()) : StripSignature(out.get());
}

}  // namespace pageblame::symbols
