// Hot probe math shared by every filter: header-only, no virtuals, no allocation.
//
// Positions come from Kirsch & Mitzenmacher, "Less Hashing, Same Performance: Building a
// Better Bloom Filter" (ESA 2006): g_i(x) = (h1(x) + i * h2(x)) mod m, i = 0..k-1, which
// keeps the asymptotic false-positive rate of k independent hashes. The sum is taken modulo
// m, not modulo 2^64: the sequence starts at h1 mod m and steps by (h2 | 1) mod m. For a
// power-of-two m both are the same as the 64-bit sum masked. h2 is forced odd, so the k
// positions are distinct for m = c * 2^j with j >= 6 and k <= 32: i*h2 == i'*h2 (mod m)
// needs 2^j | (i - i') * h2, so 2^j | (i - i') with |i - i'| < 32 < 2^j, so i == i'.
//
// Sizes are m = c * 2^j with c odd and small (1 <= c <= kMaxSizeMultiplier), and a position
// is g mod m. That makes every smaller filter whose size divides m a projection of the larger
// one: (g mod m) mod m' == g mod m' whenever m' divides m, so folding a filter (OR of its
// two halves, c * 2^j -> c * 2^(j-1)) equals building it at half the size, and a counting
// filter projects exactly onto a Bloom filter of any size d * 2^i with d | c and i <= j.
// With c = 1 the reduction is the mask g & (2^j - 1): power-of-two filters are unchanged.
// Odd multipliers up to 63 give every size s * 2^i with 32 <= s <= 63 (an even s is an odd
// one times a power of two), so a size can be within 1/32 of any target and m/n sits near
// its optimum for every n instead of moving in steps of 2.
//
// g mod m is computed as ((g >> j) mod c) << j | (g & (2^j - 1)) (m = c 2^j), and the small
// remainder q mod c without a division, after Lemire, Kaser & Kurz, "Faster Remainder by
// Direct Computation" (2019), Theorem 1: with M = ceil(2^64 / c), the fractional part of
// q M / 2^64, kept in 64 bits as lo = q M mod 2^64, times c, floored, is q mod c, exactly,
// whenever q < 2^N and N + log2(c) <= 64. Here q = g >> j < 2^58 (j >= kMinLog2Bits = 6)
// and c <= 63 < 2^6, so 58 + 6 <= 64 holds. For c = 1, M wraps to 0 and the remainder is 0.
// tests/unit/filter/size_reduction_test.cc checks it against the % operator.
#ifndef PEERBLOOM_BLOOM_PROBE_H_
#define PEERBLOOM_BLOOM_PROBE_H_

#include <cstdint>
#include <type_traits>

#include "peerbloom/hash.h"

namespace peerbloom {

inline constexpr unsigned kMinLog2Bits = 6;   // one 64-bit word
inline constexpr unsigned kMaxLog2Bits = 34;  // 2 GiB of bits; configs cap lower
inline constexpr unsigned kMaxHashes = 32;
// The largest odd factor c of a filter size c * 2^j.
inline constexpr unsigned kMaxSizeMultiplier = 63;

// Whether c may be the odd factor of a filter's size.
constexpr bool IsValidSizeMultiplier(unsigned c) noexcept {
  return c >= 1 && c <= kMaxSizeMultiplier && c % 2 == 1;
}

// Reduces a probe value g to a position in a filter of c * 2^log2 slots: g mod (c 2^log2).
// REQUIRES: IsValidSizeMultiplier(c), kMinLog2Bits <= log2 <= kMaxLog2Bits.
class SizeReduction {
 public:
  SizeReduction(unsigned log2, unsigned c) noexcept
      : log2_(log2), low_mask_((uint64_t{1} << log2) - 1), c_(c), magic_(~uint64_t{0} / c + 1) {}

  uint64_t size() const noexcept { return c_ << log2_; }
  bool power_of_two() const noexcept { return c_ == 1; }
  uint64_t low_mask() const noexcept { return low_mask_; }
  uint64_t operator()(uint64_t g) const noexcept {
    __extension__ using Wide = unsigned __int128;
    const uint64_t lo = magic_ * (g >> log2_);
    const uint64_t rem = static_cast<uint64_t>((static_cast<Wide>(lo) * c_) >> 64);
    return (rem << log2_) | (g & low_mask_);
  }

 private:
  unsigned log2_;
  uint64_t low_mask_;
  uint64_t c_;
  uint64_t magic_;  // ceil(2^64 / c); 0 for c = 1
};

// The i-th position of a key's probe sequence in a filter of size reduce.size().
inline uint64_t ProbePosition(const KeyHash& h, unsigned i, const SizeReduction& reduce) noexcept {
  // i * (step mod m) < 32 * 2^39: no overflow before the last reduction.
  return reduce(reduce(h.h1) + static_cast<uint64_t>(i) * reduce(h.h2 | 1));
}

// Calls fn(position) for each of the k positions, in order. Returning false from fn stops
// the walk (for a fn returning void it never stops); returns whether it ran to the end.
// For a power of two the positions are the wrapping 64-bit sum masked: independent of each
// other, where the modular walk chains an add, a compare and a select per probe (measured
// 8 against 14 ns per k = 7 may-contain with the counters in L2), so that case keeps its loop.
template <typename Fn>
inline bool ForEachProbe(const KeyHash& h, unsigned k, const SizeReduction& reduce,
                         Fn&& fn) noexcept {
  auto visit = [&fn](uint64_t pos) {
    if constexpr (std::is_same_v<decltype(fn(pos)), bool>) {
      return fn(pos);
    } else {
      fn(pos);
      return true;
    }
  };
  if (reduce.power_of_two()) {
    const uint64_t mask = reduce.low_mask();
    const uint64_t step = h.h2 | 1;
    uint64_t g = h.h1;
    for (unsigned i = 0; i < k; ++i, g += step) {
      if (!visit(g & mask)) return false;
    }
    return true;
  }
  const uint64_t m = reduce.size();
  const uint64_t step = reduce(h.h2 | 1);
  uint64_t pos = reduce(h.h1);
  for (unsigned i = 0; i < k; ++i) {
    if (!visit(pos)) return false;
    pos += step;
    pos -= pos >= m ? m : 0;
  }
  return true;
}

}  // namespace peerbloom

#endif  // PEERBLOOM_BLOOM_PROBE_H_
