#include "processor/symbols/mapping_history.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "processor/symbols/absl_compat.h"

namespace pageblame::symbols {
namespace {

// Fork chains deeper than this are treated as broken (a pid reused in a cycle).
constexpr int kMaxForkDepth = 256;

}  // namespace

size_t MappingHistory::EpochIndex(const std::vector<Epoch>& epochs, uint64_t time) {
  // The latest epoch begun at or before `time`; at equal times the later
  // event (an exec right after a fork) wins. Before all of them: the first.
  auto it = std::upper_bound(epochs.begin(), epochs.end(), time,
                             [](uint64_t t, const Epoch& e) { return t < e.begin; });
  return it == epochs.begin() ? 0 : static_cast<size_t>(std::prev(it) - epochs.begin());
}

void MappingHistory::Epoch::Add(const Mapping* mapping) {
  const bool in_order = mappings.empty() || mappings.back()->time <= mapping->time;
  if (in_order) {
    mappings.push_back(mapping);
    Place(mapping);
    return;
  }
  // Older than a mapping already placed: it goes before the later ones
  // (after those of its own time, which were added first), and the pieces
  // are laid again in time order.
  auto pos = std::upper_bound(mappings.begin(), mappings.end(), mapping->time,
                              [](uint64_t t, const Mapping* m) { return t < m->time; });
  mappings.insert(pos, mapping);
  Rebuild();
}

void MappingHistory::Epoch::Rebuild() {
  live.clear();
  replaced.clear();
  for (const Mapping* m : mappings) Place(m);
}

void MappingHistory::Epoch::Place(const Mapping* mapping) {
  const uint64_t start = mapping->start, end = mapping->end, time = mapping->time;
  // Like maps__fixup_overlappings(): the parts of older mappings under the
  // new one stop applying at `time`; the parts outside it stay live.
  auto it = live.lower_bound(start);
  if (it != live.begin()) {
    auto prev = std::prev(it);
    if (prev->second.end > start) {
      Piece old = prev->second;
      replaced.push_back({start, std::min(old.end, end), old.added, time, old.mapping});
      prev->second.end = start;
      if (old.end > end) live[end] = Piece{end, old.end, old.added, kForever, old.mapping};
    }
  }
  it = live.lower_bound(start);
  while (it != live.end() && it->first < end) {
    Piece old = it->second;
    replaced.push_back({old.start, std::min(old.end, end), old.added, time, old.mapping});
    it = live.erase(it);
    if (old.end > end) {
      live.emplace(end, Piece{end, old.end, old.added, kForever, old.mapping});
      break;
    }
  }
  live[start] = Piece{start, end, time, kForever, mapping};
}

const MappingHistory::Piece* MappingHistory::Epoch::FindAt(uint64_t ip, uint64_t time) const {
  auto it = live.upper_bound(ip);
  if (it == live.begin()) return nullptr;
  --it;
  // Every replaced part lies under some live piece, so no live piece here
  // means nothing ever covered ip in this epoch.
  if (ip >= it->second.end) return nullptr;
  if (it->second.added <= time) return &it->second;
  const Piece* best = nullptr;
  for (const Piece& p : replaced) {
    if (ip >= p.start && ip < p.end && p.added <= time && time < p.replaced &&
        (best == nullptr || p.added > best->added)) {
      best = &p;
    }
  }
  return best;
}

const MappingHistory::Piece* MappingHistory::Epoch::FindAfter(uint64_t ip, uint64_t time) const {
  const Piece* best = nullptr;
  auto consider = [&](const Piece& p) {
    if (ip >= p.start && ip < p.end && p.added > time &&
        (best == nullptr || p.added < best->added)) {
      best = &p;
    }
  };
  auto it = live.upper_bound(ip);
  if (it != live.begin()) consider(std::prev(it)->second);
  for (const Piece& p : replaced) consider(p);
  return best;
}

void MappingHistory::AddBuildId(std::string_view path, std::string_view build_id) {
  header_build_ids_[std::string(path)] = std::string(build_id);
  Changed(0);
  Op op;
  op.kind = Op::Kind::kBuildId;
  op.path = *strings_.emplace(path).first;
  op.build_id = *strings_.emplace(build_id).first;
  ops_.push_back(op);
}

void MappingHistory::Apply(const Op& op) {
  switch (op.kind) {
    case Op::Kind::kBuildId: return AddBuildId(op.path, op.build_id);
    case Op::Kind::kMapping: return AddMapping(op.pid, op.time, op.start, op.len, op.pgoff, op.path, op.build_id);
    case Op::Kind::kFork: return OnFork(op.pid, op.parent, op.time);
    case Op::Kind::kExec: return OnExec(op.pid, op.time);
  }
}

std::string_view MappingHistory::BuildIdOf(std::string_view path,
                                           std::string_view build_id) const {
  if (!build_id.empty()) return build_id;
  auto it = header_build_ids_.find(ToAbsl(path));
  return it != header_build_ids_.end() ? std::string_view(it->second) : std::string_view();
}

void MappingHistory::AddMapping(uint32_t pid, uint64_t time, uint64_t start, uint64_t len,
                                uint64_t pgoff, std::string_view path, std::string_view build_id) {
  if (len == 0 || start + len < start) return;  // nothing mapped, or a corrupt record
  Changed(time);
  Mapping mapping;
  mapping.start = start;
  mapping.end = start + len;
  mapping.pgoff = pgoff;
  mapping.time = time;
  mapping.path = *strings_.emplace(path).first;
  mapping.build_id = *strings_.emplace(build_id).first;
  mappings_.push_back(mapping);
  Op op;
  op.pid = pid;
  op.time = time;
  op.start = start;
  op.len = len;
  op.pgoff = pgoff;
  op.path = mapping.path;
  op.build_id = mapping.build_id;
  ops_.push_back(op);
  Epoch* epoch = MutableEpochAt(pid, time);
  if (epoch == nullptr) {
    // First sight of the process (attach mode, or records synthesized from
    // /proc at record start): its mappings hold from the beginning.
    AddEpoch(pid, Epoch{});
    epoch = MutableEpochAt(pid, time);
  }
  epoch->Add(&mappings_.back());
}

void MappingHistory::OnFork(uint32_t child, uint32_t parent, uint64_t time) {
  if (child == parent) return;  // a new thread shares the address space
  Changed(time);
  Op op;
  op.kind = Op::Kind::kFork;
  op.pid = child;
  op.parent = parent;
  op.time = time;
  ops_.push_back(op);
  Epoch epoch;
  epoch.begin = time;
  epoch.parent = parent;
  AddEpoch(child, std::move(epoch));
}

void MappingHistory::OnExec(uint32_t pid, uint64_t time) {
  Changed(time);
  Op op;
  op.kind = Op::Kind::kExec;
  op.pid = pid;
  op.time = time;
  ops_.push_back(op);
  Epoch epoch;
  epoch.begin = time;
  AddEpoch(pid, std::move(epoch));
}

void MappingHistory::AddEpoch(uint32_t pid, Epoch epoch) {
  std::vector<Epoch>& epochs = epochs_[pid];
  auto pos = std::upper_bound(epochs.begin(), epochs.end(), epoch.begin,
                              [](uint64_t t, const Epoch& e) { return t < e.begin; });
  const size_t at = static_cast<size_t>(pos - epochs.begin());
  epochs.insert(pos, std::move(epoch));
  // Mappings read before this fork or exec (file order is not time order)
  // sit in the epoch that was in effect at their time then: the one before
  // (those from `begin` on), or the one after if this is now the first
  // (those before its begin). Only those two can hold mappings of its time.
  bool moved = false;
  for (size_t n : {at - 1, at + 1}) {
    if (n >= epochs.size()) continue;  // at - 1 wraps when at == 0
    std::vector<const Mapping*> stay;
    for (const Mapping* m : epochs[n].mappings) {
      if (EpochIndex(epochs, m->time) == at) {
        epochs[at].mappings.push_back(m);
        moved = true;
      } else {
        stay.push_back(m);
      }
    }
    if (stay.size() != epochs[n].mappings.size()) {
      epochs[n].mappings = std::move(stay);
      epochs[n].Rebuild();
    }
  }
  if (moved) {
    std::stable_sort(epochs[at].mappings.begin(), epochs[at].mappings.end(),
                     [](const Mapping* a, const Mapping* b) { return a->time < b->time; });
    epochs[at].Rebuild();
  }
}

const MappingHistory::Epoch* MappingHistory::EpochAt(uint32_t pid, uint64_t time) const {
  auto found = epochs_.find(pid);
  if (found == epochs_.end() || found->second.empty()) return nullptr;
  return &found->second[EpochIndex(found->second, time)];
}

MappingHistory::Epoch* MappingHistory::MutableEpochAt(uint32_t pid, uint64_t time) {
  return const_cast<Epoch*>(std::as_const(*this).EpochAt(pid, time));
}

const MappingHistory::Mapping* MappingHistory::Find(uint32_t pid, uint64_t time, uint64_t ip) const {
  const Epoch* first = EpochAt(pid, time);
  if (first == nullptr) return nullptr;
  const Epoch* epoch = first;
  uint64_t at = time;
  for (int depth = 0; epoch != nullptr && depth < kMaxForkDepth; ++depth) {
    if (const Piece* piece = epoch->FindAt(ip, at)) return piece->mapping;
    if (!epoch->parent.has_value()) break;
    // Inherited: the parent's mappings as they were at the fork.
    at = std::min(at, epoch->begin);
    epoch = EpochAt(*epoch->parent, at);
  }
  if (const Piece* piece = first->FindAfter(ip, time)) return piece->mapping;
  return nullptr;
}

}  // namespace pageblame::symbols
