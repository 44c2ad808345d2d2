#include "processor/analysis/reserved_stacks.h"

#include <algorithm>

namespace pageblame::analysis {
namespace {

// Keeps the non-zero entries of `bytes` (one per stack), most first.
ReservedStacks FromBytes(const std::vector<int64_t>& bytes) {
  ReservedStacks out;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] == 0) continue;
    out.bytes += bytes[i];
    out.stacks.push_back({i, bytes[i]});
  }
  std::stable_sort(out.stacks.begin(), out.stacks.end(),
                   [](const ReservedStack& x, const ReservedStack& y) { return x.bytes > y.bytes; });
  return out;
}

int64_t Signed(uint64_t n) { return static_cast<int64_t>(n); }  // address-space sizes: below 2^57

}  // namespace

ReservedStacks ReservedStacksOf(const Attribution& a) {
  std::vector<int64_t> bytes;
  bytes.reserve(a.stacks.size());
  for (const StackTotal& st : a.stacks) bytes.push_back(Signed(st.bytes - st.committed));
  return FromBytes(bytes);
}

ReservedStacks ReservedStacksOf(const Growth& g) {
  std::vector<int64_t> bytes;
  bytes.reserve(g.stacks.size());
  for (const StackGrowth& s : g.stacks) {
    bytes.push_back(Signed(s.to.mapped - s.to.committed) - Signed(s.from.mapped - s.from.committed));
  }
  return FromBytes(bytes);
}

}  // namespace pageblame::analysis
