// For the analysis/ tests that classify or summarize stacks: a frame as the
// symbolizer gives it, from its name ("" for none) and file.
//
//   const std::vector<symbols::Frame> stack = {F("malloc", kLibc), F("Leak", "/app/bin")};
#ifndef PAGEBLAME_ANALYSIS_FRAMES_FOR_TEST_H_
#define PAGEBLAME_ANALYSIS_FRAMES_FOR_TEST_H_

#include <string>

#include "processor/symbols/symbolizer.h"

namespace pageblame::analysis {

inline symbols::Frame F(const std::string& symbol, const std::string& dso, bool inlined = false) {
  symbols::Frame f;
  f.ip = 0x1000;
  if (!symbol.empty()) f.symbol = symbol;
  f.dso = dso;
  f.inlined = inlined;
  return f;
}

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_FRAMES_FOR_TEST_H_
