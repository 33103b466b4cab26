// Shared helpers for the summary tests: deterministic filters, keys and summaries.
#ifndef PEERBLOOM_TESTS_UNIT_SUMMARY_SUMMARY_TEST_UTIL_H_
#define PEERBLOOM_TESTS_UNIT_SUMMARY_SUMMARY_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

#include "peerbloom/bloom_filter.h"
#include "peerbloom/hash.h"
#include "peerbloom/summary.h"

namespace peerbloom::testing_util {

// A key hash drawn from a seeded generator: uniform 128 bits, like the index hash's output.
inline KeyHash RandomHash(std::mt19937_64& rng) { return KeyHash{rng(), rng()}; }

// A filter of 2^log2_bits bits with each bit set with probability `fill` (exactly 0 and 1
// give the empty and the full filter).
inline BloomFilter FilterWithFill(unsigned log2_bits, unsigned k, double fill, uint64_t seed,
                                  unsigned multiplier = 1) {
  BloomFilter filter(log2_bits, k, multiplier);
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution bit(fill);
  for (uint64_t pos = 0; pos < filter.bits(); ++pos) {
    if (bit(rng)) filter.SetBit(pos);
  }
  return filter;
}

inline Summary MakeSummary(BloomFilter filter, uint64_t version = 42) {
  Summary s;
  s.origin = "node-a.example:7000";
  s.epoch = 7;
  s.version = version;
  s.key_scheme = KeyScheme::kSquidMd5;
  s.hash_scheme = HashScheme::kSipHash13x2;
  s.estimated_items = filter.PopCount();
  s.filter = std::move(filter);
  return s;
}

inline void ExpectSameSummary(const Summary& a, const Summary& b) {
  EXPECT_EQ(a.origin, b.origin);
  EXPECT_EQ(a.epoch, b.epoch);
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.key_scheme, b.key_scheme);
  EXPECT_EQ(a.hash_scheme, b.hash_scheme);
  EXPECT_EQ(a.estimated_items, b.estimated_items);
  EXPECT_TRUE(a.filter == b.filter);
}

}  // namespace peerbloom::testing_util

#endif  // PEERBLOOM_TESTS_UNIT_SUMMARY_SUMMARY_TEST_UTIL_H_
