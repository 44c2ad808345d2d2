// C++ symbol demangling, as perf script prints names.
//
//   Demangle("_ZN3foo3barEi")                     // "foo::bar"
//   Demangle("_ZN3foo3barEi", /*params=*/true)    // "foo::bar(int)"
//   Demangle("malloc")                            // "malloc" (not mangled: unchanged)
//
// perf 6.1 demangles without DMGL_PARAMS unless run with -v (demangle_sym()
// in tools/perf/util/symbol-elf.c): no parameter list, no return type of a
// template function, no " [clone .part.0]" suffix. We demangle with
// abi::__cxa_demangle, which always gives the full signature, and cut it back
// to that form unless `params` is set.
#ifndef PAGEBLAME_SYMBOLS_DEMANGLE_H_
#define PAGEBLAME_SYMBOLS_DEMANGLE_H_

#include <string>
#include <string_view>

namespace pageblame::symbols {

// The demangled form of an Itanium-mangled name ("_Z..."); any other name,
// or one the demangler rejects, is returned as is.
std::string Demangle(std::string_view name, bool params = false);

// The name part of a full demangled signature: "void ns::f<int>(int) const"
// -> "ns::f<int>". Exposed for tests.
std::string StripSignature(std::string_view demangled);

}  // namespace pageblame::symbols

#endif  // PAGEBLAME_SYMBOLS_DEMANGLE_H_
