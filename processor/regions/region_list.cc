#include "processor/regions/region_list.h"

#include <utility>

namespace pageblame::regions {

RegionList::RegionList() : texts_(std::make_shared<Texts>()) {}

RegionList RegionList::SharingTextsOf(const RegionList& other) {
  RegionList out;
  out.texts_ = other.texts_;
  return out;
}

Region RegionList::operator[](size_t i) const {
  const Row& row = rows_[i];
  const RegionText& t = *texts_->by_id[row.text];
  Region r;
  r.start = row.start;
  r.end = row.end;
  r.type = t.type;
  r.state = t.state;
  r.protect = t.protect;
  r.usage = t.usage;
  r.line = row.line;
  r.merged_lines = t.merged_lines;
  r.rss = rss(i);
  return r;
}

std::vector<Region> RegionList::ToVector() const {
  std::vector<Region> out;
  out.reserve(rows_.size());
  for (size_t i = 0; i < rows_.size(); ++i) out.push_back((*this)[i]);
  return out;
}

uint32_t RegionList::Intern(RegionText text) {
  auto [it, inserted] = texts_->ids.try_emplace(std::move(text), static_cast<uint32_t>(texts_->by_id.size()));
  if (inserted) texts_->by_id.push_back(&it->first);
  return it->second;
}

void RegionList::push_back(const Region& r) {
  Row row;
  row.start = r.start;
  row.end = r.end;
  row.line = r.line;
  // An Rss is at most its row's size, so ~0 never is one.
  row.rss = r.rss.value_or(kNoRss);
  row.text = Intern(RegionText{r.type, r.state, r.protect, r.usage, r.merged_lines});
  rows_.push_back(row);
}

void RegionList::AppendPart(const RegionList& from, size_t i, uint64_t start, uint64_t end,
                            std::optional<uint64_t> rss) {
  Row row = from.rows_[i];
  if (from.texts_ != texts_) row.text = Intern(from.text(i));
  row.start = start;
  row.end = end;
  row.rss = rss.value_or(kNoRss);
  rows_.push_back(row);
}

}  // namespace pageblame::regions
