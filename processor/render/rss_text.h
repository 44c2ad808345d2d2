// Resident bytes (ResidentView) as the answers print them: "12.3 MiB" or "?"
// in text, the number or null in JSON, and which snapshot they came from.
#ifndef PAGEBLAME_RENDER_RSS_TEXT_H_
#define PAGEBLAME_RENDER_RSS_TEXT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "processor/residency/residency_index.h"

namespace pageblame::render {

// "12.3 MiB", or "?" for unknown.
std::string HumanRss(std::optional<uint64_t> bytes);
// JSON: the number, or null.
std::string JsonRss(std::optional<uint64_t> bytes);
// For text: "snapshot at 123.456789, periodic, 0.400 s before the moment
// asked" (at the end, index::kEndOfTrace: without the age), or that there is none.
std::string DescribeSnapshot(const residency::ResidencySnapshot* s, uint64_t at);

}  // namespace pageblame::render

#endif  // PAGEBLAME_RENDER_RSS_TEXT_H_
