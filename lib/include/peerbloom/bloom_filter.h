// BloomFilter: a plain Bloom filter of c * 2^log2_bits bits (c odd, the size multiplier; 1
// for power-of-two filters) and k probes per key. bloom_probe.h says how positions reduce.
//
// This is the summary a node gossips and the form a peer's summary takes at a receiver.
// Bit j lives in word j / 64 under mask 1 << (j % 64).
//
// Thread-safety: const methods may run concurrently; anything else needs external locking.
// A value type: copyable (explicitly large), movable.
#ifndef PEERBLOOM_BLOOM_FILTER_H_
#define PEERBLOOM_BLOOM_FILTER_H_

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "peerbloom/bloom_probe.h"
#include "peerbloom/hash.h"
#include "peerbloom/status.h"

namespace peerbloom {

// "2^j" for a power-of-two size, "c x 2^j" otherwise: sizes in messages for people.
std::string SizeText(unsigned log2, unsigned multiplier);
// InvalidArgument unless IsValidSizeMultiplier(multiplier).
Status CheckSizeMultiplier(unsigned multiplier);

class BloomFilter {
 public:
  // An empty filter of the minimum size with k = 1.
  BloomFilter() : BloomFilter(kMinLog2Bits, 1) {}
  // REQUIRES: kMinLog2Bits <= log2_bits <= kMaxLog2Bits, 1 <= k <= kMaxHashes,
  // IsValidSizeMultiplier(multiplier). Use Create() for sizes that come from outside.
  BloomFilter(unsigned log2_bits, unsigned k, unsigned multiplier = 1);
  static Status Create(unsigned log2_bits, unsigned k, BloomFilter* out);
  static Status Create(unsigned log2_bits, unsigned k, unsigned multiplier, BloomFilter* out);

  unsigned log2_bits() const noexcept { return log2_bits_; }
  // The odd factor c of the size c * 2^log2_bits.
  unsigned multiplier() const noexcept { return multiplier_; }
  uint64_t bits() const noexcept { return uint64_t{multiplier_} << log2_bits_; }
  const SizeReduction& reduction() const noexcept { return reduce_; }
  unsigned k() const noexcept { return k_; }
  size_t bytes() const noexcept { return words_.size() * sizeof(uint64_t); }
  // Same size and k.
  bool SameGeometry(const BloomFilter& other) const noexcept {
    return log2_bits_ == other.log2_bits_ && multiplier_ == other.multiplier_ && k_ == other.k_;
  }

  void Add(const KeyHash& h) noexcept {
    uint64_t* const words = words_.data();
    ForEachProbe(h, k_, reduce_,
                 [words](uint64_t pos) { words[pos >> 6] |= uint64_t{1} << (pos & 63); });
  }
  bool MayContain(const KeyHash& h) const noexcept {
    const uint64_t* const words = words_.data();
    return ForEachProbe(h, k_, reduce_, [words](uint64_t pos) {
      return ((words[pos >> 6] >> (pos & 63)) & 1) != 0;
    });
  }

  void SetBit(uint64_t pos) noexcept { words_[pos >> 6] |= uint64_t{1} << (pos & 63); }
  void FlipBit(uint64_t pos) noexcept { words_[pos >> 6] ^= uint64_t{1} << (pos & 63); }
  bool TestBit(uint64_t pos) const noexcept { return (words_[pos >> 6] >> (pos & 63)) & 1; }

  // OR of another filter of the same size and k into this one.
  Status Union(const BloomFilter& other);
  // Halves the size (c * 2^j -> c * 2^(j-1)) by OR-ing the upper half onto the lower half.
  // The result equals the filter built at half the size from the same keys. At the minimum
  // size it does nothing.
  void Fold() noexcept;
  // Folds down to c * 2^log2_bits. InvalidArgument if larger than now or below the minimum.
  Status FoldTo(unsigned log2_bits);

  uint64_t PopCount() const noexcept;
  double FillRatio() const noexcept { return static_cast<double>(PopCount()) / bits(); }
  // Swamidass & Baldi (2007): n ~= -(m/k) ln(1 - X/m) for X set bits. Infinity when full.
  double EstimatedItems() const noexcept;
  // The chance that an absent key tests positive: fill^k.
  double EstimatedFpr() const noexcept;

  const std::vector<uint64_t>& words() const noexcept { return words_; }
  std::vector<uint64_t>& mutable_words() noexcept { return words_; }

  bool operator==(const BloomFilter& other) const {
    return SameGeometry(other) && words_ == other.words_;
  }

 private:
  unsigned log2_bits_;
  unsigned multiplier_;
  unsigned k_;
  SizeReduction reduce_;
  std::vector<uint64_t> words_;
};

}  // namespace peerbloom

#endif  // PEERBLOOM_BLOOM_FILTER_H_
