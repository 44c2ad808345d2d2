#include "processor/regions/resident_bytes.h"

#include <algorithm>

namespace pageblame::regions {

void ResidentBytes::Add(uint64_t row_bytes, uint64_t row_rss, uint64_t part_bytes) {
  if (part_bytes == 0) return;
  if (part_bytes >= row_bytes) {
    ++whole_rows;
    whole_bytes += row_bytes;
    rss += row_rss;
    return;
  }
  const uint64_t elsewhere = row_bytes - part_bytes;  // the rest of the row
  ++partly_rows;
  partly_bytes += part_bytes;
  partly_at_least += row_rss > elsewhere ? row_rss - elsewhere : 0;
  partly_at_most += std::min(row_rss, part_bytes);
}

void ResidentBytes::AddUnknown(uint64_t part_bytes) {
  if (part_bytes == 0) return;
  ++partly_rows;
  partly_bytes += part_bytes;
  partly_at_most += part_bytes;
}

}  // namespace pageblame::regions
