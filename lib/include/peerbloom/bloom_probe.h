// Hot probe math shared by every filter: header-only, no virtuals, no allocation.
//
// Positions come from Kirsch & Mitzenmacher, "Less Hashing, Same Performance: Building a
// Better Bloom Filter" (ESA 2006): g_i(x) = h1(x) + i * h2(x), i = 0..k-1, which keeps the
// asymptotic false-positive rate of k independent hashes. h2 is forced odd, so for a
// power-of-two size m the k positions are distinct whenever k < m (i*h2 == j*h2 mod 2^t only
// if i == j when h2 is invertible).
//
// Sizes are powers of two and a position is reduced with a mask. That makes every smaller
// filter a projection of a larger one: (g mod 2^a) mod 2^b == g mod 2^b for b <= a, so
// folding a filter (OR of its two halves) equals building it at half the size, and a
// counting filter projects onto a Bloom filter of any smaller power-of-two size exactly.
#ifndef PEERBLOOM_BLOOM_PROBE_H_
#define PEERBLOOM_BLOOM_PROBE_H_

#include <cstdint>

#include "peerbloom/hash.h"

namespace peerbloom {

inline constexpr unsigned kMinLog2Bits = 6;   // one 64-bit word
inline constexpr unsigned kMaxLog2Bits = 34;  // 2 GiB of bits; configs cap lower
inline constexpr unsigned kMaxHashes = 32;

// The i-th position of a key's probe sequence in a filter of size mask + 1.
inline uint64_t ProbePosition(const KeyHash& h, unsigned i, uint64_t mask) noexcept {
  return (h.h1 + static_cast<uint64_t>(i) * (h.h2 | 1)) & mask;
}

// Calls fn(position) for each of the k positions.
template <typename Fn>
inline void ForEachProbe(const KeyHash& h, unsigned k, uint64_t mask, Fn&& fn) noexcept {
  const uint64_t step = h.h2 | 1;
  uint64_t g = h.h1;
  for (unsigned i = 0; i < k; ++i, g += step) fn(g & mask);
}

}  // namespace peerbloom

#endif  // PEERBLOOM_BLOOM_PROBE_H_
