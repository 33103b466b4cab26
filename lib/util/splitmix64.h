// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA
// 2014): the golden-ratio increment followed by the murmur3-style finalizer of variant 13.
// A bijection on 64 bits, so distinct inputs never share an output. The summary's filter
// digest (lib/summary/summary.cc) is built on it, so its values are frozen: never change the
// constants or the order of the steps.
#ifndef PEERBLOOM_LIB_UTIL_SPLITMIX64_H_
#define PEERBLOOM_LIB_UTIL_SPLITMIX64_H_

#include <cstdint>

namespace peerbloom {

// The output of a SplitMix64 generator whose state was `x` before the step.
constexpr uint64_t SplitMix64(uint64_t x) noexcept {
  uint64_t z = x + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The reference generator's first outputs from state 0 (the Java SplittableRandom and
// Vigna's splitmix64.c agree), pinned so that a change to the function cannot pass unseen.
static_assert(SplitMix64(0) == 0xe220a8397b1dcdafULL);

}  // namespace peerbloom

#endif  // PEERBLOOM_LIB_UTIL_SPLITMIX64_H_
