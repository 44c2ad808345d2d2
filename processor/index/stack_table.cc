#include "processor/index/stack_table.h"

#include <algorithm>
#include <new>
#include <utility>

#include "absl/hash/hash.h"

namespace pageblame::index {

StackTable::StackTable() : set_(0, Hash{this}, Eq{this}) { nodes_.push_back(Node{}); }

size_t StackTable::Hash::operator()(uint32_t node) const {
  const Node& n = table->nodes_[node];
  return (*this)(Key{n.parent, n.ip});
}

size_t StackTable::Hash::operator()(Key k) const {
  return absl::Hash<std::pair<uint32_t, uint64_t>>()({k.parent, k.ip});
}

uint32_t StackTable::Child(uint32_t parent, uint64_t ip) {
  auto it = set_.find(Key{parent, ip});
  if (it != set_.end()) return *it;
  if (nodes_.size() >= kNodeMask) throw std::bad_alloc();
  const uint32_t node = static_cast<uint32_t>(nodes_.push_back(Node{ip, parent, kNoStack}));
  set_.insert(node);
  return node;
}

uint32_t StackTable::Walk(absl::Span<const uint64_t> ips) {
  // The outer frames this stack shares with the previous one need no
  // lookup: consecutive calls mostly come from the same callers.
  const size_t n = ips.size();
  size_t same = 0;
  while (same < n && same < path_ips_.size() && path_ips_[same] == ips[n - 1 - same]) ++same;
  path_ips_.resize(same);
  path_nodes_.resize(same);
  uint32_t node = same == 0 ? kRoot : path_nodes_[same - 1];
  for (size_t k = same; k < n; ++k) {
    const uint64_t ip = ips[n - 1 - k];
    node = Child(node, ip);
    path_ips_.push_back(ip);
    path_nodes_.push_back(node);
  }
  return node;
}

StackId StackTable::Intern(absl::Span<const uint64_t> ips, bool unwound) {
  const uint32_t node = Walk(ips);
  Node& leaf = nodes_[node];
  if (leaf.stack != kNoStack) return StackId(leaf.stack);
  leaf.stack = static_cast<uint32_t>(entries_.push_back(node | (unwound ? kUnwoundBit : 0)));
  return StackId(leaf.stack);
}

StackId StackTable::Reserve() {
  // The root: no ips until Bind(); it does not own the root (Intern({})
  // makes the empty stack its own id).
  return StackId(static_cast<uint32_t>(entries_.push_back(kRoot)));
}

StackId StackTable::Bind(StackId id, absl::Span<const uint64_t> ips, bool unwound) {
  if (!id.valid() || id.value() >= entries_.size()) return id;
  const uint32_t node = Walk(ips);
  Node& leaf = nodes_[node];
  if (leaf.stack != kNoStack) {
    entries_[id.value()] = entries_[leaf.stack];  // the same ips, not stored twice
    return StackId(leaf.stack);
  }
  entries_[id.value()] = node | (unwound ? kUnwoundBit : 0);
  leaf.stack = id.value();
  return id;
}

void StackTable::AppendIps(StackId id, std::vector<uint64_t>* out) const {
  if (!id.valid() || id.value() >= entries_.size()) return;
  for (uint32_t node = entries_[id.value()] & kNodeMask; node != kRoot; node = nodes_[node].parent) {
    out->push_back(nodes_[node].ip);
  }
}

StackTable::Kept StackTable::Keeping(const std::vector<bool>& keep) const {
  Kept k;
  k.stacks.assign(entries_.size(), Kept::kGone);
  k.nodes.assign(nodes_.size(), Kept::kGone);
  k.nodes[kRoot] = kRoot;
  for (size_t i = 0; i < entries_.size() && i < keep.size(); ++i) {
    if (!keep[i]) continue;
    k.stacks[i] = static_cast<uint32_t>(k.num_stacks++);
    // Up to the first frame already marked: each frame is walked once.
    for (uint32_t node = entries_[i] & kNodeMask; k.nodes[node] == Kept::kGone; node = nodes_[node].parent) {
      k.nodes[node] = 0;
    }
  }
  for (size_t node = 1; node < nodes_.size(); ++node) {
    if (k.nodes[node] != Kept::kGone) k.nodes[node] = static_cast<uint32_t>(++k.num_frames);
  }
  return k;
}

StackTable::Kept StackTable::Thin(const std::vector<bool>& keep) {
  Kept k = Keeping(keep);
  const size_t old_entries = entries_.size();
  MoveKept(k);
  OwnNodes(k, old_entries);
  RebuildSet();
  // The previous Walk's path names old nodes.
  path_ips_.clear();
  path_nodes_.clear();
  return k;
}

void StackTable::MoveKept(const Kept& k) {
  // Kept ids and nodes keep their order, so each moves to a slot at or
  // before its own (a node's caller before it): one pass from the front.
  for (size_t node = 1; node < nodes_.size(); ++node) {
    const uint32_t to = k.nodes[node];
    if (to == Kept::kGone) continue;
    Node n = nodes_[node];
    n.parent = k.nodes[n.parent];  // kept: a kept frame's callers are
    n.stack = n.stack == kNoStack ? kNoStack : k.stacks[n.stack];  // kGone == kNoStack
    nodes_[to] = n;
  }
  Node& root = nodes_[kRoot];
  root.stack = root.stack == kNoStack ? kNoStack : k.stacks[root.stack];
  nodes_.Truncate(k.num_frames + 1);
  for (size_t id = 0; id < entries_.size(); ++id) {
    const uint32_t to = k.stacks[id];
    if (to == Kept::kGone) continue;
    const uint32_t e = entries_[id];
    entries_[to] = k.nodes[e & kNodeMask] | (e & kUnwoundBit);
  }
  entries_.Truncate(k.num_stacks);
}

void StackTable::OwnNodes(const Kept& k, size_t old_entries) {
  // A kept alias whose own stack went: the first such id owns the node now,
  // or the same ips interned again would get a second id. Not the root: a
  // reserved id not bound yet points there too, and is no alias.
  for (size_t id = 0; id < old_entries; ++id) {
    const uint32_t to = k.stacks[id];
    if (to == Kept::kGone) continue;
    const uint32_t node = entries_[to] & kNodeMask;
    if (node != kRoot && nodes_[node].stack == kNoStack) nodes_[node].stack = to;
  }
}

void StackTable::RebuildSet() {
  // A new set: clearing the old one would keep its capacity.
  absl::flat_hash_set<uint32_t, Hash, Eq> set(0, Hash{this}, Eq{this});
  set.reserve(nodes_.size() - 1);
  for (size_t node = 1; node < nodes_.size(); ++node) set.insert(static_cast<uint32_t>(node));
  set_.swap(set);
}

void StackTable::AddKeptBytes(const std::vector<uint16_t>& last, std::vector<size_t>* bytes) const {
  std::vector<uint16_t> node_last(nodes_.size(), 0);
  for (size_t id = 0; id < entries_.size() && id < last.size(); ++id) {
    if (last[id] == 0) continue;
    (*bytes)[last[id]] += KeptBytes(1, 0);
    uint16_t& leaf = node_last[entries_[id] & kNodeMask];
    leaf = std::max(leaf, last[id]);
  }
  // A frame's caller comes before it: from the last frame back, each hands
  // its bucket on to its caller, whose own is then final when it is reached.
  for (size_t node = nodes_.size(); node-- > 1;) {
    const uint16_t b = node_last[node];
    if (b == 0) continue;
    (*bytes)[b] += KeptBytes(0, 1);
    uint16_t& caller = node_last[nodes_[node].parent];
    caller = std::max(caller, b);
  }
}

std::vector<uint64_t> StackTable::DistinctIps() const {
  absl::flat_hash_set<uint64_t> seen;
  for (size_t i = 1; i < nodes_.size(); ++i) seen.insert(nodes_[i].ip);
  return std::vector<uint64_t>(seen.begin(), seen.end());
}

}  // namespace pageblame::index
