// LruCache: a proxy's cache in the Summary Cache simulation, least recently used out first.
//
// Objects are dense ids (ObjectTable) and all cost one slot: capacity counts objects, not
// bytes (docs/results/README.md says why). The recency list is intrusive over two vectors
// indexed by slot, so a lookup is one hash probe and no allocation once the cache is full.
#ifndef PEERBLOOM_BENCH_SUMMARY_CACHE_LRU_CACHE_H_
#define PEERBLOOM_BENCH_SUMMARY_CACHE_LRU_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

namespace peerbloom::sim {

class LruCache {
 public:
  // REQUIRES: capacity >= 1.
  explicit LruCache(size_t capacity) : capacity_(capacity) {
    slot_of_.reserve(capacity);
    nodes_.reserve(capacity);
  }

  // A hit moves the object to the front.
  bool Touch(uint32_t object) {
    auto it = slot_of_.find(object);
    if (it == slot_of_.end()) return false;
    MoveToFront(it->second);
    return true;
  }
  bool Contains(uint32_t object) const { return slot_of_.count(object) != 0; }

  // Inserts an absent object at the front; returns the object evicted to make room, if any.
  // REQUIRES: !Contains(object).
  std::optional<uint32_t> Insert(uint32_t object) {
    std::optional<uint32_t> evicted;
    uint32_t slot;
    if (nodes_.size() < capacity_) {
      slot = static_cast<uint32_t>(nodes_.size());
      nodes_.push_back(Node{object, kNone, kNone});
    } else {
      slot = tail_;
      evicted = nodes_[slot].object;
      slot_of_.erase(nodes_[slot].object);
      Unlink(slot);
      nodes_[slot].object = object;
    }
    slot_of_[object] = slot;
    PushFront(slot);
    return evicted;
  }

  size_t size() const { return slot_of_.size(); }
  size_t capacity() const { return capacity_; }
  // Objects from most to least recently used (tests).
  std::vector<uint32_t> Order() const {
    std::vector<uint32_t> out;
    for (uint32_t s = head_; s != kNone; s = nodes_[s].next) out.push_back(nodes_[s].object);
    return out;
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Node {
    uint32_t object;
    uint32_t prev;
    uint32_t next;
  };

  void Unlink(uint32_t s) {
    Node& n = nodes_[s];
    (n.prev == kNone ? head_ : nodes_[n.prev].next) = n.next;
    (n.next == kNone ? tail_ : nodes_[n.next].prev) = n.prev;
    n.prev = n.next = kNone;
  }
  void PushFront(uint32_t s) {
    nodes_[s].prev = kNone;
    nodes_[s].next = head_;
    if (head_ != kNone) nodes_[head_].prev = s;
    head_ = s;
    if (tail_ == kNone) tail_ = s;
  }
  void MoveToFront(uint32_t s) {
    if (s == head_) return;
    Unlink(s);
    PushFront(s);
  }

  size_t capacity_;
  std::unordered_map<uint32_t, uint32_t> slot_of_;
  std::vector<Node> nodes_;
  uint32_t head_ = kNone;
  uint32_t tail_ = kNone;
};

}  // namespace peerbloom::sim

#endif  // PEERBLOOM_BENCH_SUMMARY_CACHE_LRU_CACHE_H_
