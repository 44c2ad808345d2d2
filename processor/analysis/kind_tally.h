// Bytes by RegionKind, and the kind that says what a region or a stack's
// memory mostly is: the kind with the most accessible bytes, a reservation
// only when all of it is PROT_NONE, none when there is nothing.
//
//   KindTally t;  t.Add(RegionKind::kMalloc, 4096);  t.Add(RegionKind::kReservation, 1 << 20);
//   t.Dominant();   // kMalloc: reservations never outrank committed memory
//
// Memory: only the kinds with bytes are held, one inline (24 B, not 72 for
// every kind): `growth` keeps two a call and two a stack, and a JIT-heavy
// recording has millions of stacks, nearly all of one kind or none.
#ifndef PAGEBLAME_ANALYSIS_KIND_TALLY_H_
#define PAGEBLAME_ANALYSIS_KIND_TALLY_H_

#include <cstdint>
#include <optional>
#include <utility>

#include "absl/container/inlined_vector.h"

#include "processor/analysis/region_kind.h"

namespace pageblame::analysis {

class KindTally {
 public:
  void Add(RegionKind k, uint64_t bytes) {
    if (bytes == 0) return;
    for (auto& [kind, b] : bytes_) {
      if (kind == k) {
        b += bytes;
        return;
      }
    }
    bytes_.emplace_back(k, bytes);
  }
  void Add(const KindTally& other) {
    for (const auto& [kind, b] : other.bytes_) Add(kind, b);
  }
  uint64_t bytes(RegionKind k) const {
    for (const auto& [kind, b] : bytes_) {
      if (kind == k) return b;
    }
    return 0;
  }

  // Ties go to the kind listed first in kAllKinds.
  std::optional<RegionKind> Dominant() const {
    std::optional<RegionKind> best;
    for (RegionKind k : kAllKinds) {
      if (k == RegionKind::kReservation || bytes(k) == 0) continue;
      if (!best || bytes(k) > bytes(*best)) best = k;
    }
    if (!best && bytes(RegionKind::kReservation) > 0) best = RegionKind::kReservation;
    return best;
  }

 private:
  // The kinds with bytes, in the order they came; no kind twice.
  absl::InlinedVector<std::pair<RegionKind, uint64_t>, 1> bytes_;
};

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_KIND_TALLY_H_
