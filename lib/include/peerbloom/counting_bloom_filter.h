// CountingBloomFilter: 2^log2_counters 4-bit saturating counters, k probes per key.
//
// The local truth of what this node's cache holds. Counters are packed two per byte
// (counter j is the low nibble of byte j/2 when j is even, the high nibble when odd).
//
// No false negatives, ever:
//  - a counter that reaches 15 saturates and is sticky: it is never decremented again, so a
//    key whose counters overflowed can never be removed from under another key;
//  - a remove whose probe positions include a zero counter cannot be right (the key was
//    never added, or the caller's bookkeeping is wrong); it is refused, counted, not applied.
// Both events are counted so the daemon can export them.
//
// Thread-safety: const methods may run concurrently; anything else needs external locking.
// Resource owner (hundreds of MiB at 10 M keys): not copyable; Clone() copies on purpose.
#ifndef PEERBLOOM_COUNTING_BLOOM_FILTER_H_
#define PEERBLOOM_COUNTING_BLOOM_FILTER_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "peerbloom/bloom_filter.h"
#include "peerbloom/bloom_probe.h"
#include "peerbloom/hash.h"
#include "peerbloom/status.h"

namespace peerbloom {

class CountingBloomFilter {
 public:
  static constexpr uint8_t kMaxCount = 15;

  // REQUIRES: kMinLog2Bits <= log2_counters <= kMaxLog2Bits, 1 <= k <= kMaxHashes.
  CountingBloomFilter(unsigned log2_counters, unsigned k);
  static Status Create(unsigned log2_counters, unsigned k, CountingBloomFilter* out);
  CountingBloomFilter(CountingBloomFilter&&) noexcept = default;
  CountingBloomFilter& operator=(CountingBloomFilter&&) noexcept = default;
  CountingBloomFilter(const CountingBloomFilter&) = delete;
  CountingBloomFilter& operator=(const CountingBloomFilter&) = delete;
  CountingBloomFilter Clone() const;

  unsigned log2_counters() const noexcept { return log2_counters_; }
  uint64_t counters() const noexcept { return uint64_t{1} << log2_counters_; }
  uint64_t mask() const noexcept { return counters() - 1; }
  unsigned k() const noexcept { return k_; }
  size_t bytes() const noexcept { return cells_.size(); }

  void Add(const KeyHash& h) noexcept {
    ForEachProbe(h, k_, mask(), [this](uint64_t pos) { Increment(pos); });
    ++items_;
  }
  // Returns false, counts and changes nothing when some counter of the key is zero.
  bool Remove(const KeyHash& h) noexcept;
  bool MayContain(const KeyHash& h) const noexcept {
    const uint64_t step = h.h2 | 1;
    uint64_t g = h.h1;
    for (unsigned i = 0; i < k_; ++i, g += step) {
      if (Counter(g & mask()) == 0) return false;
    }
    return true;
  }

  uint8_t Counter(uint64_t pos) const noexcept {
    return (cells_[pos >> 1] >> ((pos & 1) << 2)) & 0xf;
  }

  // The Bloom filter of 2^log2_bits bits whose bit j is set when any counter j', with
  // j' mod 2^log2_bits == j, is non-zero. Equals building that Bloom filter directly from
  // the same keys. InvalidArgument unless kMinLog2Bits <= log2_bits <= log2_counters().
  Status Project(unsigned log2_bits, BloomFilter* out) const;
  // Whether summary bit `pos` of a projection to 2^log2_bits is set: OR over its counters.
  bool ProjectedBit(uint64_t pos, unsigned log2_bits) const noexcept;

  // Adds minus accepted removes: the number of keys the filter believes it holds.
  uint64_t items() const noexcept { return items_; }
  // Counters stuck at 15 (a gauge; it never goes down).
  uint64_t saturated_counters() const noexcept { return saturated_counters_; }
  // Increments that found their counter already saturated.
  uint64_t saturation_events() const noexcept { return saturation_events_; }
  // Removes refused because a counter of the key was zero.
  uint64_t refused_removes() const noexcept { return refused_removes_; }

  // The packed counters, for snapshots.
  std::string_view raw_cells() const noexcept {
    return {reinterpret_cast<const char*>(cells_.data()), cells_.size()};
  }
  // Replaces the state with a snapshot's. Corruption if the sizes disagree; the filter is
  // unchanged then. Recomputes the saturated-counter gauge.
  Status Restore(std::string_view cells, uint64_t items, uint64_t saturation_events,
                 uint64_t refused_removes);

 private:
  void Increment(uint64_t pos) noexcept {
    const uint8_t c = Counter(pos);
    if (c == kMaxCount) {
      ++saturation_events_;
      return;
    }
    cells_[pos >> 1] += static_cast<uint8_t>(1u << ((pos & 1) << 2));
    if (c + 1 == kMaxCount) ++saturated_counters_;
  }

  unsigned log2_counters_;
  unsigned k_;
  std::vector<uint8_t> cells_;
  uint64_t items_ = 0;
  uint64_t saturated_counters_ = 0;
  uint64_t saturation_events_ = 0;
  uint64_t refused_removes_ = 0;
};

}  // namespace peerbloom

#endif  // PEERBLOOM_COUNTING_BLOOM_FILTER_H_
