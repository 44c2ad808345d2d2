// Bytes by RegionKind, and the kind that says what a region or a stack's
// memory mostly is: the kind with the most accessible bytes, a reservation
// only when all of it is PROT_NONE, none when there is nothing.
//
//   KindTally t;  t.Add(RegionKind::kMalloc, 4096);  t.Add(RegionKind::kReservation, 1 << 20);
//   t.Dominant();   // kMalloc: reservations never outrank committed memory
#ifndef PAGEBLAME_ANALYSIS_KIND_TALLY_H_
#define PAGEBLAME_ANALYSIS_KIND_TALLY_H_

#include <array>
#include <cstdint>
#include <optional>

#include "processor/analysis/region_kind.h"

namespace pageblame::analysis {

class KindTally {
 public:
  void Add(RegionKind k, uint64_t bytes) { bytes_[static_cast<size_t>(k)] += bytes; }
  void Add(const KindTally& other) {
    for (size_t i = 0; i < kNumKinds; ++i) bytes_[i] += other.bytes_[i];
  }
  uint64_t bytes(RegionKind k) const { return bytes_[static_cast<size_t>(k)]; }

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
  std::array<uint64_t, kNumKinds> bytes_{};
};

}  // namespace pageblame::analysis

#endif  // PAGEBLAME_ANALYSIS_KIND_TALLY_H_
