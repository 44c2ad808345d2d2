// How the first screens of `attribute` and `growth` say a method
// (analysis/app_method.h) in text: its name whole, then its context, each
// name escaped (EscapeName). "->" reads "calls": the method, the framework
// call it made, the allocator that call reached.
//
//   MethodCell(m);  // "Program::Leak" kPartBreak " -> NativeMemory::Alloc" kPartBreak " -> malloc"
//   MethodLine(m);  // "Program::Leak -> NativeMemory::Alloc -> malloc"
//
// A stack with no application frame is said "(no app frame) " and its
// innermost frames ("__mprotect <- pthread_create@GLIBC_2.2.5 <- ..."); in
// a cell the first frame is never cut, each next one a part kept if it fits.
#ifndef PAGEBLAME_RENDER_METHOD_TEXT_H_
#define PAGEBLAME_RENDER_METHOD_TEXT_H_

#include <cstddef>
#include <string>

#include "processor/analysis/app_method.h"

namespace pageblame::render {

// For the last column of a table (text_table.h): the name a part that is
// never cut, each context name a part that is kept if it fits.
std::string MethodCell(const analysis::AppMethod& m);
// The same on one line, whole.
std::string MethodLine(const analysis::AppMethod& m);
// "  ... 12 more methods with committed bytes (--detail: each method's
// stacks)", or "" when `more` is 0: under a table cut at its row limit.
std::string MoreMethodsLine(size_t more, bool detail);

}  // namespace pageblame::render

#endif  // PAGEBLAME_RENDER_METHOD_TEXT_H_
