// Interns user call stacks (leaf-first ip lists) so that each unique stack is
// stored once and named by a StackId, whatever the number of samples that
// carry it. Nothing is symbolized here (symbols/ does that lazily, for
// printed stacks only).
//
//   StackTable t;
//   StackId a = t.Intern(ips);      // O(depth) expected
//   StackId b = t.Intern(ips);      // a == b, nothing stored twice
//   std::vector<uint64_t> same = t.Ips(a);   // leaf first, O(depth)
//   StackId late = t.Reserve();     // ips not known yet (Ips: empty)
//   StackId c = t.Bind(late, ips);  // c == a: `late` is now an alias of a
//
// Stored as a prefix tree, as heaptrack does: a node is one frame (an ip)
// under its caller's node, the root being "no frame", and a stack is the
// node of its leaf frame. Stacks that share their callers share those
// nodes, so a new stack costs a node per frame that no earlier stack had at
// that depth under the same callers: ~16 bytes a node and ~6-12 in the hash
// set, instead of 8 bytes for every ip of every stack (a service's distinct
// stacks are mostly deep and differ near their leaves). Nodes and ids live
// in fixed blocks (base/chunked_vector.h): growing never copies the tables.
// Interning walks from the outermost frame down, reusing the nodes of the
// previous stack's common outer frames before asking the hash set.
//
// Not movable (the set's functors point back at the table).
#ifndef PAGEBLAME_INDEX_STACK_TABLE_H_
#define PAGEBLAME_INDEX_STACK_TABLE_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/types/span.h"
#include "processor/base/chunked_vector.h"
#include "processor/base/typed_id.h"

namespace pageblame::index {

class IndexCodecAccess;

class StackTable {
 public:
  StackTable();
  StackTable(const StackTable&) = delete;
  StackTable& operator=(const StackTable&) = delete;

  // `unwound`: the ips come from unwinding a stack copy (--call-graph
  // dwarf), not from the kernel's frame-pointer chain. perf shows inlined
  // frames for those only, and so do we (Unwound()). The same ips met
  // again keep the flag they were first interned with.
  StackId Intern(absl::Span<const uint64_t> ips, bool unwound = false);
  // An id for a stack whose ips are known only later (a --call-graph dwarf
  // sample whose unwinding waits for a mapping record further on in the
  // file). Ips() gives nothing until Bind().
  StackId Reserve();
  // Gives a Reserve()d id its ips, and returns the id under which they are
  // interned: `id` itself, or the id an earlier Intern() gave the same ips
  // (then `id` is an alias: Ips(id) gives the same ips, but callers that
  // group by id should use the returned one).
  StackId Bind(StackId id, absl::Span<const uint64_t> ips, bool unwound = true);
  // The stack's ips, leaf first; empty for an invalid or unknown id.
  std::vector<uint64_t> Ips(StackId id) const {
    std::vector<uint64_t> out;
    AppendIps(id, &out);
    return out;
  }
  // The same, appended to `out` (a caller's reused buffer).
  void AppendIps(StackId id, std::vector<uint64_t>* out) const;
  // Whether the stack was unwound from a copy (Intern's `unwound`).
  bool Unwound(StackId id) const {
    return id.valid() && id.value() < entries_.size() && (entries_[id.value()] & kUnwoundBit) != 0;
  }
  size_t size() const { return entries_.size(); }
  // Frames stored: the tree's nodes (the root aside).
  size_t num_frames() const { return nodes_.size() - 1; }
  // Every distinct ip of every stack, each once, in no set order.
  std::vector<uint64_t> DistinctIps() const;
  // A smaller table's numbering: only the stacks `keep` says (by id) and
  // the frames from their leaves to the root, each in its old order (a
  // frame's caller still comes before it; kept ids keep their order, so
  // whatever sorts or groups by id does as before). For a thinned index
  // file (index_thinning.h); this table is not changed. O(ids + frames).
  //   StackTable::Kept k = t.Keeping(keep);
  //   uint32_t now = k.stacks[old.value()];   // Kept::kGone if left out
  struct Kept {
    static constexpr uint32_t kGone = ~0u;
    std::vector<uint32_t> stacks;  // old id -> new id, or kGone
    std::vector<uint32_t> nodes;   // old node -> new node (the root stays 0), or kGone
    size_t num_stacks = 0;
    size_t num_frames = 0;  // the root aside
  };
  Kept Keeping(const std::vector<bool>& keep) const;
  // The same numbering applied to this table, in place (the recorder's
  // memory, replay/load_pass.h): only the kept stacks and their frames
  // stay, under their new ids; the blocks and hash set freed are given back.
  // Every holder of an id must then take its new one (Kept::stacks). A
  // reserved id kept stays reserved (Bind works on its new id); ips met
  // again after their stack went are interned afresh, under a new id. A
  // kept alias (Bind) whose stack went becomes its ips' own id.
  // O(ids + frames), with no second table: kept entries only move down.
  //   StackTable::Kept k = t.Thin(keep);
  Kept Thin(const std::vector<bool>& keep);
  // For the recorder's memory bound (index_thinning.h EarliestCutWithin):
  // what each of a series of thinnings would keep of the table, in buckets.
  // `last[id]` is stack `id`'s bucket: 0 if no thinning keeps it, else the
  // last one that does, counted from 1 (every earlier one keeps it too); a
  // frame is in the largest bucket of the stacks through it. Adds to
  // (*bytes)[b] what bucket b holds as Thin would leave it (KeptBytes).
  // `bytes` has room for every bucket. O(ids + frames), 2 bytes a frame
  // meanwhile.
  //   std::vector<size_t> b(cuts + 2);  t.AddKeptBytes(last, &b);
  void AddKeptBytes(const std::vector<uint16_t>& last, std::vector<size_t>* bytes) const;
  // Bytes held (nodes, ids, hash set), for -v.
  size_t bytes() const {
    return nodes_.bytes() + entries_.bytes() + set_.capacity() * (sizeof(uint32_t) + 1);
  }
  // The same counted as the recorder's memory bound counts (TraceIndex::
  // BoundedBytes): the nodes and ids by count x size (of their blocks, only
  // the pages written are ever resident), the hash set by its capacity.
  size_t CountedBytes() const {
    return nodes_.size() * sizeof(Node) + entries_.size() * sizeof(uint32_t) + set_.capacity() * kSlotBytes;
  }
  // What CountedBytes is at most once Thin kept `stacks` ids and `frames`
  // frames (the root's node aside): 4 bytes an id, a node and its hash
  // set's slots a frame (at most 16/7 slots: Thin makes the set for them).
  static size_t KeptBytes(size_t stacks, size_t frames) { return stacks * sizeof(uint32_t) + frames * kFrameBytes; }

 private:
  friend class IndexCodecAccess;  // index_codec.h
  static constexpr size_t kBlockBytes = 256 << 10;
  static constexpr size_t kSlotBytes = sizeof(uint32_t) + 1;  // the hash set's: a node id, a control byte
  static constexpr uint32_t kRoot = 0;
  static constexpr uint32_t kNoStack = ~0u;
  // An entry: the stack's leaf node, with the unwound flag in its top bit.
  static constexpr uint32_t kUnwoundBit = 1u << 31;
  static constexpr uint32_t kNodeMask = kUnwoundBit - 1;
  struct Node {
    uint64_t ip = 0;
    uint32_t parent = kRoot;   // the caller's node
    uint32_t stack = kNoStack; // the id interned with this node as its leaf
  };
  static constexpr size_t kFrameBytes = sizeof(Node) + (kSlotBytes * 16 + 6) / 7;  // rounded up
  struct Key {  // a child looked up before it exists
    uint32_t parent;
    uint64_t ip;
  };
  struct Hash {
    using is_transparent = void;
    const StackTable* table;
    size_t operator()(uint32_t node) const;
    size_t operator()(Key k) const;
  };
  struct Eq {
    using is_transparent = void;
    const StackTable* table;
    bool operator()(uint32_t a, uint32_t b) const { return a == b; }
    bool operator()(uint32_t a, Key b) const {
      const Node& n = table->nodes_[a];
      return n.parent == b.parent && n.ip == b.ip;
    }
    bool operator()(Key a, uint32_t b) const { return (*this)(b, a); }
  };

  // The leaf node of `ips` (leaf first), made with its callers as needed;
  // the root for no ips. Past 2^31 nodes (32 GiB of them) std::bad_alloc,
  // as any table that outgrows memory.
  uint32_t Walk(absl::Span<const uint64_t> ips);
  uint32_t Child(uint32_t parent, uint64_t ip);
  // Thin's steps: the nodes and entries moved to their new places; each
  // node's owning stack renumbered; the hash set made again.
  void MoveKept(const Kept& k);
  void OwnNodes(const Kept& k, size_t old_entries);
  void RebuildSet();

  ChunkedVector<Node, kBlockBytes> nodes_;        // [0] is the root
  ChunkedVector<uint32_t, kBlockBytes> entries_;  // by StackId
  absl::flat_hash_set<uint32_t, Hash, Eq> set_;   // every node but the root
  // The previous Walk's path, outermost frame first: its ips and nodes.
  std::vector<uint64_t> path_ips_;
  std::vector<uint32_t> path_nodes_;
};

}  // namespace pageblame::index

#endif  // PAGEBLAME_INDEX_STACK_TABLE_H_
