#include "processor/heap/heap_reader.h"

#include <algorithm>

namespace pageblame::heap {

HeapReader::HeapReader(TargetMemory* memory, uint64_t limit)
    : memory_(memory), limit_(limit > ~uint64_t{0} - kPage ? ~uint64_t{0} / kPage * kPage
                                                           : (limit + kPage - 1) / kPage * kPage) {}

bool HeapReader::Fill(uint64_t start, uint64_t end) {
  start_ = end_ = 0;
  if (buf_.size() < end - start) buf_.resize(std::max<uint64_t>(end - start, kWindow));
  if (!memory_->ReadBulk(start, buf_.data(), end - start)) return false;
  start_ = start;
  end_ = end;
  return true;
}

const uint8_t* HeapReader::At(uint64_t addr, size_t n) {
  if (n > kPage || addr > ~uint64_t{0} - kPage - n) return nullptr;
  if (addr >= held_start_ && n <= held_.size() && addr - held_start_ <= held_.size() - n)
    return held_.data() + (addr - held_start_);
  if (addr >= start_ && addr + n <= end_) return buf_.data() + (addr - start_);
  if (absl::Span<const uint8_t> held = memory_->Contiguous(addr); held.size() >= n) {
    held_ = held;
    held_start_ = addr;
    return held_.data();
  }
  const uint64_t page = addr / kPage * kPage, pages_end = (addr + n + kPage - 1) / kPage * kPage;
  // Going on from the last read: a window. Else only the pages asked for.
  if (page == end_ && end_ != 0) {
    const uint64_t window_end = std::max(pages_end, std::min(limit_, page + kWindow));
    if (window_end > pages_end && Fill(page, window_end)) return buf_.data() + (addr - start_);
  }
  if (Fill(page, pages_end)) return buf_.data() + (addr - start_);
  if (!Fill(addr, addr + n)) return nullptr;
  return buf_.data();
}

}  // namespace pageblame::heap
