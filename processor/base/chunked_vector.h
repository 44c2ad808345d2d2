// An append-only array stored in fixed blocks of 2^kShift elements. The index
// tables (calls, versions) grow to millions of entries during replay; a
// std::vector would copy the whole table at every doubling, keep up to twice
// the memory it needs at its peak (old and new buffers together), and move
// every element (so no reference survives a push_back). Here a push_back
// never moves anything: references stay valid and memory is at most one
// block over what is used.
//
//   ChunkedVector<Version> versions;
//   size_t i = versions.push_back(v);   // index of the new element
//   versions[i].t_to = t;
#ifndef PAGEBLAME_BASE_CHUNKED_VECTOR_H_
#define PAGEBLAME_BASE_CHUNKED_VECTOR_H_

#include <cstddef>
#include <memory>
#include <vector>

namespace pageblame {

template <typename T, int kShift = 14>
class ChunkedVector {
 public:
  static constexpr size_t kBlock = size_t{1} << kShift;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Bytes held: whole blocks, used or not.
  size_t bytes() const { return blocks_.size() * kBlock * sizeof(T); }

  // Appends `v`; returns its index.
  size_t push_back(const T& v) {
    if ((size_ & (kBlock - 1)) == 0 && (size_ >> kShift) == blocks_.size()) {
      blocks_.push_back(std::make_unique<T[]>(kBlock));
    }
    blocks_[size_ >> kShift][size_ & (kBlock - 1)] = v;
    return size_++;
  }

  T& operator[](size_t i) { return blocks_[i >> kShift][i & (kBlock - 1)]; }
  const T& operator[](size_t i) const { return blocks_[i >> kShift][i & (kBlock - 1)]; }

 private:
  std::vector<std::unique_ptr<T[]>> blocks_;
  size_t size_ = 0;
};

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_CHUNKED_VECTOR_H_
