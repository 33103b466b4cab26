// CountingBloomFilter: c * 2^log2_counters 4-bit saturating counters (c odd, the size
// multiplier; 1 for power-of-two filters), k probes per key.
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

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "lib/util/huge_page_allocator.h"
#include "peerbloom/bloom_filter.h"
#include "peerbloom/bloom_probe.h"
#include "peerbloom/hash.h"
#include "peerbloom/status.h"

namespace peerbloom {

class CountingBloomFilter {
 public:
  static constexpr uint8_t kMaxCount = 15;

  // REQUIRES: kMinLog2Bits <= log2_counters <= kMaxLog2Bits, 1 <= k <= kMaxHashes,
  // IsValidSizeMultiplier(multiplier).
  CountingBloomFilter(unsigned log2_counters, unsigned k, unsigned multiplier = 1);
  static Status Create(unsigned log2_counters, unsigned k, CountingBloomFilter* out);
  static Status Create(unsigned log2_counters, unsigned k, unsigned multiplier,
                       CountingBloomFilter* out);
  CountingBloomFilter(CountingBloomFilter&&) noexcept = default;
  CountingBloomFilter& operator=(CountingBloomFilter&&) noexcept = default;
  CountingBloomFilter(const CountingBloomFilter&) = delete;
  CountingBloomFilter& operator=(const CountingBloomFilter&) = delete;
  CountingBloomFilter Clone() const;

  unsigned log2_counters() const noexcept { return log2_counters_; }
  unsigned multiplier() const noexcept { return multiplier_; }
  uint64_t counters() const noexcept { return uint64_t{multiplier_} << log2_counters_; }
  const SizeReduction& reduction() const noexcept { return reduce_; }
  unsigned k() const noexcept { return k_; }
  size_t bytes() const noexcept { return cells_.size(); }

  // The hot paths copy the members they need into locals first: stores through uint8_t*
  // may alias anything, so the compiler would otherwise reload k_, the mask and the cell
  // pointer after every counter update. The saturation test is a branch hinted as unlikely;
  // a branchless update measured slower (18 against 14 ns per add with the counters in L2),
  // and prefetching a key's own counters first gained nothing measurable (its loads already
  // overlap). bench/filter_bench has the figures.
  void Add(const KeyHash& h) noexcept {
    uint8_t* const cells = cells_.data();
    uint64_t events = 0;
    uint64_t newly_saturated = 0;
    ForEachProbe(h, k_, reduce_, [&](uint64_t pos) {
      const unsigned shift = static_cast<unsigned>(pos & 1) << 2;
      const uint8_t cell = cells[pos >> 1];
      const unsigned c = (cell >> shift) & 0xfu;
      if (__builtin_expect(c == kMaxCount, 0)) {  // sticky: never wraps
        ++events;
        return;
      }
      cells[pos >> 1] = static_cast<uint8_t>(cell + (1u << shift));
      newly_saturated += c == kMaxCount - 1;
    });
    saturation_events_ += events;
    saturated_counters_ += newly_saturated;
    ++items_;
  }
  // Returns false, counts and changes nothing when some counter of the key is zero.
  // Otherwise decrements every counter of the key that is not saturated.
  bool Remove(const KeyHash& h) noexcept {
    // Positions are distinct (see bloom_probe.h), so checking each once before any change
    // is exact.
    if (!MayContain(h)) {
      ++refused_removes_;
      return false;
    }
    uint8_t* const cells = cells_.data();
    ForEachProbe(h, k_, reduce_, [cells](uint64_t pos) {
      const unsigned shift = static_cast<unsigned>(pos & 1) << 2;
      const uint8_t cell = cells[pos >> 1];
      if (__builtin_expect(((cell >> shift) & 0xfu) != kMaxCount, 1)) {  // 15 stays 15
        cells[pos >> 1] = static_cast<uint8_t>(cell - (1u << shift));
      }
    });
    items_ -= items_ > 0;
    return true;
  }
  bool MayContain(const KeyHash& h) const noexcept {
    const uint8_t* const cells = cells_.data();
    return ForEachProbe(h, k_, reduce_, [cells](uint64_t pos) {
      return (cells[pos >> 1] & (0xfu << ((pos & 1) << 2))) != 0;
    });
  }
  // Asks the CPU to start loading the key's counters. A caller with several keys in hand
  // prefetches them all, then operates on them, so the memory latencies overlap.
  void Prefetch(const KeyHash& h) const noexcept {
    const uint8_t* const cells = cells_.data();
    ForEachProbe(h, k_, reduce_, [cells](uint64_t pos) { __builtin_prefetch(cells + (pos >> 1)); });
  }
  // Batches: the same results as calling the single-key operation on hashes[0], hashes[1],
  // ... in order (a remove still sees the adds and removes before it), with the counter
  // loads of the next few keys prefetched while one key is processed, so their cache misses
  // overlap. Hash a burst of keys first, then make one batch call: hashing between single
  // calls leaves the CPU too little room to overlap the misses of consecutive keys (at 1e6
  // keys, balanced: about 50 ns per key batched against 180 ns single, hash included).
  // out[i] = MayContain(hashes[i]).
  void MayContainBatch(const KeyHash* hashes, size_t count, bool* out) const noexcept {
    Pipelined(hashes, count, [&](size_t i) { out[i] = MayContain(hashes[i]); });
  }
  void AddBatch(const KeyHash* hashes, size_t count) noexcept {
    Pipelined(hashes, count, [&](size_t i) { Add(hashes[i]); });
  }
  // Returns how many removes were accepted; removed[i] = Remove(hashes[i]) when not null.
  size_t RemoveBatch(const KeyHash* hashes, size_t count, bool* removed) noexcept {
    size_t accepted = 0;
    Pipelined(hashes, count, [&](size_t i) {
      const bool ok = Remove(hashes[i]);
      accepted += ok;
      if (removed != nullptr) removed[i] = ok;
    });
    return accepted;
  }

  uint8_t Counter(uint64_t pos) const noexcept {
    return (cells_[pos >> 1] >> ((pos & 1) << 2)) & 0xf;
  }

  // The Bloom filter of m = multiplier * 2^log2_bits bits whose bit j is set when any
  // counter j', with j' mod m == j, is non-zero. Equals building that Bloom filter directly
  // from the same keys, because m divides counters() (bloom_probe.h). InvalidArgument unless
  // kMinLog2Bits <= log2_bits <= log2_counters() and multiplier divides multiplier().
  Status Project(unsigned log2_bits, unsigned multiplier, BloomFilter* out) const;
  // The same with this filter's multiplier: the counters folded by halves.
  Status Project(unsigned log2_bits, BloomFilter* out) const {
    return Project(log2_bits, multiplier_, out);
  }
  // Whether bit `pos` of a projection to `bits` bits is set: OR over its counters.
  // REQUIRES: bits is a size Project accepts, pos < bits.
  bool ProjectedBit(uint64_t pos, uint64_t bits) const noexcept;

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
  // Software pipeline: key i + ahead is prefetched while key i is processed, with `ahead`
  // chosen so that about kLoadsInFlight counter loads are outstanding (k per key).
  template <typename Fn>
  void Pipelined(const KeyHash* hashes, size_t count, Fn&& fn) const noexcept {
    const size_t ahead = kLoadsInFlight / k_ > 0 ? kLoadsInFlight / k_ : 1;
    for (size_t i = 0; i < ahead && i < count; ++i) Prefetch(hashes[i]);
    for (size_t i = 0; i < count; ++i) {
      if (i + ahead < count) Prefetch(hashes[i + ahead]);
      fn(i);
    }
  }
  static constexpr size_t kLoadsInFlight = 24;

  unsigned log2_counters_;
  unsigned multiplier_;
  unsigned k_;
  SizeReduction reduce_;
  std::vector<uint8_t, HugePageAllocator<uint8_t>> cells_;  // huge pages: see the allocator
  uint64_t items_ = 0;
  uint64_t saturated_counters_ = 0;
  uint64_t saturation_events_ = 0;
  uint64_t refused_removes_ = 0;
};

}  // namespace peerbloom

#endif  // PEERBLOOM_COUNTING_BLOOM_FILTER_H_
