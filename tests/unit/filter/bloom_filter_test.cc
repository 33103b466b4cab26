#include "peerbloom/bloom_filter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "peerbloom/counting_bloom_filter.h"
#include "peerbloom/params.h"
#include "tests/unit/filter/filter_test_keys.h"

namespace peerbloom {
namespace {

using testing::HashesOfIds;

BloomFilter Build(unsigned log2_bits, unsigned k, const std::vector<KeyHash>& keys) {
  BloomFilter f(log2_bits, k);
  for (const KeyHash& h : keys) f.Add(h);
  return f;
}

TEST(BloomFilter, BitLayout) {
  BloomFilter f(7, 1);
  f.SetBit(0);
  f.SetBit(65);
  f.SetBit(127);
  EXPECT_EQ(f.words()[0], uint64_t{1});
  EXPECT_EQ(f.words()[1], (uint64_t{1} << 1) | (uint64_t{1} << 63));
  EXPECT_TRUE(f.TestBit(65));
  f.FlipBit(65);
  EXPECT_FALSE(f.TestBit(65));
  EXPECT_EQ(f.PopCount(), 2u);
  EXPECT_EQ(f.bytes(), 16u);
}

TEST(BloomFilter, CreateRejectsBadGeometry) {
  BloomFilter f;
  Status s = BloomFilter::Create(5, 1, &f);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(s.message(), "log2 of filter bits '5' is outside [6, 34]");
  s = BloomFilter::Create(35, 1, &f);
  EXPECT_EQ(s.message(), "log2 of filter bits '35' is outside [6, 34]");
  s = BloomFilter::Create(10, 0, &f);
  EXPECT_EQ(s.message(), "hash count '0' is outside [1, 32]");
  s = BloomFilter::Create(10, 33, &f);
  EXPECT_EQ(s.message(), "hash count '33' is outside [1, 32]");
  ASSERT_TRUE(BloomFilter::Create(10, 7, &f).ok());
  EXPECT_EQ(f.bits(), 1024u);
  EXPECT_EQ(f.k(), 7u);
  EXPECT_EQ(f.PopCount(), 0u);
}

// Fold(Build_m(S)) == Build_{m/2}(S), bit for bit, at every size down to the minimum.
TEST(BloomFilter, FoldEqualsBuildAtHalfSize) {
  const std::vector<KeyHash> keys = HashesOfIds(0, 3000);
  for (unsigned k : {1u, 2u, 4u, 7u}) {
    BloomFilter folded = Build(16, k, keys);
    while (folded.log2_bits() > kMinLog2Bits) {
      folded.Fold();
      EXPECT_TRUE(folded == Build(folded.log2_bits(), k, keys))
          << "k " << k << " at 2^" << folded.log2_bits();
    }
  }
}

TEST(BloomFilter, FoldToReachesTargetAndRejectsBadSizes) {
  const std::vector<KeyHash> keys = HashesOfIds(0, 500);
  BloomFilter f = Build(14, 3, keys);
  ASSERT_TRUE(f.FoldTo(14).ok());
  EXPECT_EQ(f.log2_bits(), 14u);
  ASSERT_TRUE(f.FoldTo(9).ok());
  EXPECT_TRUE(f == Build(9, 3, keys));
  Status s = f.FoldTo(10);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(s.message(), "cannot fold a filter of 2^9 bits to 2^10");
  s = f.FoldTo(5);
  EXPECT_EQ(s.message(), "cannot fold a filter of 2^9 bits to 2^5");
  EXPECT_EQ(f.log2_bits(), 9u);
}

TEST(BloomFilter, FoldAtMinimumSizeIsANoOp) {
  BloomFilter f = Build(kMinLog2Bits, 2, HashesOfIds(0, 10));
  const BloomFilter before = f;
  f.Fold();
  EXPECT_TRUE(f == before);
}

// Project(CBF, b) == Bloom built at 2^b directly, for every b down to the minimum, also
// after removes (the counters then hold exactly the remaining keys).
TEST(BloomFilter, ProjectionEqualsDirectBuild) {
  const std::vector<KeyHash> keys = HashesOfIds(0, 4000);
  for (unsigned k : {1u, 2u, 5u, 7u}) {
    CountingBloomFilter cbf(17, k);
    for (const KeyHash& h : keys) cbf.Add(h);
    for (size_t i = 0; i < 1000; ++i) ASSERT_TRUE(cbf.Remove(keys[i]));
    const std::vector<KeyHash> remaining(keys.begin() + 1000, keys.end());
    for (unsigned log2 = 17; log2 >= kMinLog2Bits; --log2) {
      BloomFilter projected;
      ASSERT_TRUE(cbf.Project(log2, &projected).ok());
      EXPECT_TRUE(projected == Build(log2, k, remaining)) << "k " << k << " at 2^" << log2;
    }
  }
}

TEST(BloomFilter, UnionIsTheFilterOfTheUnion) {
  const std::vector<KeyHash> a = HashesOfIds(0, 1500);
  const std::vector<KeyHash> b = HashesOfIds(1000, 1500);  // overlaps a
  std::vector<KeyHash> both = HashesOfIds(0, 2500);
  BloomFilter u = Build(15, 4, a);
  ASSERT_TRUE(u.Union(Build(15, 4, b)).ok());
  EXPECT_TRUE(u == Build(15, 4, both));
}

TEST(BloomFilter, UnionRejectsOtherGeometry) {
  BloomFilter f = Build(12, 3, HashesOfIds(0, 10));
  const BloomFilter before = f;
  Status s = f.Union(BloomFilter(13, 3));
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(s.message(), "union of filters with different geometry");
  s = f.Union(BloomFilter(12, 4));
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_TRUE(f == before);
}

// The estimator's standard deviation is SD(X) / (k e^(-kn/m)) with
// Var(X) ~= m e^(-kn/m) (1 - (1 + kn/m) e^(-kn/m)) for X set bits: at these sizes 0.08 % of
// n for k = 7, 0.05 % for k = 2, 0.02 % for k = 1 and 0.18 % for k = 4, the widest. A 2 %
// tolerance is over 10 standard deviations; the keys and the test secret are fixed, so the
// outcome is the same on every run anyway.
TEST(BloomFilter, EstimatedItemsWithinTwoPercent) {
  const uint64_t n = 100000;
  const std::vector<KeyHash> keys = HashesOfIds(0, n);
  struct Case {
    unsigned log2, k;
  } cases[] = {{20, 7}, {21, 2}, {23, 1}, {18, 4}};
  for (const Case& c : cases) {
    const BloomFilter f = Build(c.log2, c.k, keys);
    EXPECT_NEAR(f.EstimatedItems(), static_cast<double>(n), 0.02 * n)
        << "k " << c.k << " at 2^" << c.log2;
  }
}

TEST(BloomFilter, EstimatesAtTheExtremes) {
  BloomFilter empty(10, 3);
  EXPECT_EQ(empty.EstimatedItems(), 0.0);
  EXPECT_EQ(empty.EstimatedFpr(), 0.0);
  BloomFilter full(10, 3);
  for (uint64_t pos = 0; pos < full.bits(); ++pos) full.SetBit(pos);
  EXPECT_EQ(full.EstimatedItems(), std::numeric_limits<double>::infinity());
  EXPECT_EQ(full.EstimatedFpr(), 1.0);
}

// EstimatedFpr is fill^k; for a filter of n keys it tracks the formula (1 - e^(-kn/m))^k
// within 2 % (the fill's relative deviation is below 0.2 % here, raised to the k-th power).
TEST(BloomFilter, EstimatedFprIsFillToTheK) {
  const uint64_t n = 100000;
  const BloomFilter f = Build(20, 7, HashesOfIds(0, n));
  EXPECT_DOUBLE_EQ(f.EstimatedFpr(), std::pow(f.FillRatio(), 7));
  const double theory = FalsePositiveRate(static_cast<double>(f.bits()), n, 7);
  EXPECT_NEAR(f.EstimatedFpr(), theory, 0.02 * theory);
}

}  // namespace
}  // namespace peerbloom
