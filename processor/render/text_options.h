// How the text answers of attribute and growth are said: the one-line
// summaries (app_frames.h), and whether the per-region listing and the full
// stacks follow the first screen (--detail).
#ifndef PAGEBLAME_RENDER_TEXT_OPTIONS_H_
#define PAGEBLAME_RENDER_TEXT_OPTIONS_H_

#include <cstddef>

#include "processor/analysis/app_frames.h"

namespace pageblame::render {

struct TextOptions {
  analysis::SummaryOptions frames;
  bool detail = false;
  // The first screen: this many rows in the top table, lines this wide.
  size_t top_rows = 20;
  size_t width = 120;
};

}  // namespace pageblame::render

#endif  // PAGEBLAME_RENDER_TEXT_OPTIONS_H_
