// IndexIterator: an input iterator over a container whose operator[] makes
// its elements by value (rows kept in a compact form and expanded when read:
// RegionList's regions, GrowthStacks' churned stacks), so range-for works.
//
//   class Rows {
//    public:
//     Row operator[](size_t i) const;
//     size_t size() const;
//     using const_iterator = IndexIterator<Rows, Row>;
//     const_iterator begin() const { return {this, 0}; }
//     const_iterator end() const { return {this, size()}; }
//   };
#ifndef PAGEBLAME_BASE_INDEX_ITERATOR_H_
#define PAGEBLAME_BASE_INDEX_ITERATOR_H_

#include <cstddef>
#include <iterator>

namespace pageblame {

template <typename Container, typename Value>
class IndexIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = Value;
  using difference_type = std::ptrdiff_t;
  using pointer = void;
  using reference = Value;

  IndexIterator(const Container* rows, size_t i) : rows_(rows), i_(i) {}
  Value operator*() const { return (*rows_)[i_]; }
  IndexIterator& operator++() {
    ++i_;
    return *this;
  }
  bool operator==(const IndexIterator& o) const { return i_ == o.i_; }
  bool operator!=(const IndexIterator& o) const { return i_ != o.i_; }

 private:
  const Container* rows_;
  size_t i_;
};

}  // namespace pageblame

#endif  // PAGEBLAME_BASE_INDEX_ITERATOR_H_
