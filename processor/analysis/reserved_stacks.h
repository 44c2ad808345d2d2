// The PROT_NONE part of an answer, apart from its ranking: the stacks whose
// reserved (mapped, not committed) bytes are not zero, most first. `attribute`
// and `growth` show them below their tables; every renderer that lists
// reservations takes them from here.
//
//   ReservedStacks r = ReservedStacks(attribution);
//   r.bytes;                 // sum of r.stacks[i].bytes
//   a.stacks[r.stacks[0].stack];  // the stack that reserved the most
//
// Attribution: a stack's reserved bytes are bytes - committed (never
// negative). Growth: the change of its reserved bytes from `from` to `to`
// (negative when reservations were committed or unmapped). Order: bytes
// descending; equal bytes keep the answer's ranking order.
#ifndef PAGEBLAME_ANALYSIS_RESERVED_STACKS_H_
#define PAGEBLAME_ANALYSIS_RESERVED_STACKS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "processor/analysis/attribute_report.h"
#include "processor/analysis/growth_report.h"

namespace pageblame::analysis {

struct ReservedStack {
  size_t stack = 0;   // index into Attribution::stacks or Growth::stacks
  int64_t bytes = 0;  // its reserved bytes (Growth: their change); never 0
};

struct ReservedStacks {
  int64_t bytes = 0;  // the sum over `stacks`
  std::vector<ReservedStack> stacks;
};

ReservedStacks ReservedStacksOf(const Attribution& a);
ReservedStacks ReservedStacksOf(const Growth& g);

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_RESERVED_STACKS_H_
