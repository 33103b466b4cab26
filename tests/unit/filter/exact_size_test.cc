// Filters of c x 2^j bits (c odd): the reduction, the probe sequence, folding and projection.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

#include "peerbloom/bloom_filter.h"
#include "peerbloom/counting_bloom_filter.h"
#include "peerbloom/params.h"
#include "tests/unit/filter/filter_test_keys.h"

namespace peerbloom {
namespace {

using testing::HashesOfIds;

constexpr unsigned kMultipliers[] = {1, 3, 5, 9, 15, 21, 31, 45, 63};
__extension__ using Wide = unsigned __int128;

BloomFilter Direct(unsigned log2, unsigned k, unsigned c, const std::vector<KeyHash>& keys) {
  BloomFilter f(log2, k, c);
  for (const KeyHash& h : keys) f.Add(h);
  return f;
}

TEST(SizeReduction, EqualsTheRemainderOperator) {
  std::mt19937_64 rng(14);
  for (unsigned c = 1; c <= kMaxSizeMultiplier; c += 2) {
    for (unsigned log2 = kMinLog2Bits; log2 <= kMaxLog2Bits; ++log2) {
      const SizeReduction reduce(log2, c);
      const uint64_t m = uint64_t{c} << log2;
      ASSERT_EQ(reduce.size(), m);
      for (uint64_t g : {uint64_t{0}, m - 1, m, ~uint64_t{0}, ~uint64_t{0} - m}) {
        ASSERT_EQ(reduce(g), g % m) << c << " " << log2 << " " << g;
      }
      for (int i = 0; i < 2000; ++i) {
        const uint64_t g = rng();
        ASSERT_EQ(reduce(g), g % m) << c << " " << log2 << " " << g;
      }
    }
  }
}

TEST(SizeReduction, ProbeSequenceIsTheSumModuloTheSize) {
  std::mt19937_64 rng(15);
  for (unsigned c : kMultipliers) {
    const SizeReduction reduce(10, c);
    const Wide m = reduce.size();
    for (int t = 0; t < 500; ++t) {
      const KeyHash h{rng(), rng()};
      std::vector<uint64_t> got;
      ForEachProbe(h, kMaxHashes, reduce, [&](uint64_t pos) { got.push_back(pos); });
      std::set<uint64_t> distinct(got.begin(), got.end());
      EXPECT_EQ(distinct.size(), got.size()) << "c=" << c;  // Remove() relies on it
      for (unsigned i = 0; i < kMaxHashes; ++i) {
        // The true integer sum, no 64-bit wrap.
        const auto want = static_cast<uint64_t>(
            (static_cast<Wide>(h.h1) + static_cast<Wide>(i) * (h.h2 | 1)) % m);
        ASSERT_EQ(got[i], want) << c << " " << i;
        ASSERT_EQ(ProbePosition(h, i, reduce), want);
      }
    }
  }
}

TEST(SizeReduction, PowerOfTwoSizesKeepTheMaskedPositions) {
  std::mt19937_64 rng(16);
  const SizeReduction reduce(12, 1);
  for (int t = 0; t < 1000; ++t) {
    const KeyHash h{rng(), rng()};
    uint64_t g = h.h1;
    ForEachProbe(h, 7, reduce, [&](uint64_t pos) {
      EXPECT_EQ(pos, g & 4095);
      g += h.h2 | 1;
    });
  }
}

TEST(ExactSize, ProjectionEqualsTheDirectBuildAtEveryFoldAndDivisor) {
  const std::vector<KeyHash> keys = HashesOfIds(0, 700);
  for (unsigned c : kMultipliers) {
    for (unsigned k : {1u, 2u, 4u}) {
      CountingBloomFilter cbf(12, k, c);
      for (const KeyHash& h : keys) cbf.Add(h);
      for (unsigned d : OddDivisors(c)) {
        for (unsigned log2 = 12; log2 >= kMinLog2Bits; --log2) {
          BloomFilter projected;
          ASSERT_TRUE(cbf.Project(log2, d, &projected).ok());
          ASSERT_EQ(projected, Direct(log2, k, d, keys)) << c << " " << d << " " << log2;
          for (const KeyHash& h : keys) ASSERT_TRUE(projected.MayContain(h));
        }
      }
    }
  }
}

TEST(ExactSize, FoldEqualsTheDirectBuildAndFoldsCompose) {
  const std::vector<KeyHash> keys = HashesOfIds(1000, 500);
  for (unsigned c : kMultipliers) {
    for (unsigned k : {1u, 3u}) {
      BloomFilter folded = Direct(13, k, c, keys);
      for (unsigned log2 = 12; log2 >= kMinLog2Bits; --log2) {
        folded.Fold();
        ASSERT_EQ(folded, Direct(log2, k, c, keys)) << c << " " << log2;
      }
      // Fold of fold: 13 -> 10 -> 7 equals 13 -> 7 in one go.
      BloomFilter twice = Direct(13, k, c, keys);
      ASSERT_TRUE(twice.FoldTo(10).ok());
      ASSERT_TRUE(twice.FoldTo(7).ok());
      BloomFilter once = Direct(13, k, c, keys);
      ASSERT_TRUE(once.FoldTo(7).ok());
      EXPECT_EQ(twice, once);
      EXPECT_EQ(once.multiplier(), c);
      EXPECT_EQ(once.bits(), uint64_t{c} << 7);
    }
  }
}

TEST(ExactSize, ProjectedBitMatchesProject) {
  CountingBloomFilter f(11, 2, 15);
  for (const KeyHash& h : HashesOfIds(0, 600)) f.Add(h);
  for (unsigned d : {1u, 3u, 5u, 15u}) {
    for (unsigned log2 : {11u, 8u, 6u}) {
      BloomFilter projected;
      ASSERT_TRUE(f.Project(log2, d, &projected).ok());
      for (uint64_t pos = 0; pos < projected.bits(); ++pos) {
        ASSERT_EQ(f.ProjectedBit(pos, projected.bits()), projected.TestBit(pos));
      }
    }
  }
}

TEST(ExactSize, RefusesSizesThatDoNotDivide) {
  CountingBloomFilter f(10, 2, 15);
  BloomFilter out;
  Status st = f.Project(10, 7, &out);
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_EQ(st.message(), "cannot project 15 x 2^10 counters onto 7 x 2^10 bits");
  st = f.Project(11, 5, &out);
  EXPECT_EQ(st.message(), "cannot project 15 x 2^10 counters onto 5 x 2^11 bits");
  EXPECT_TRUE(f.Project(10, 5, &out).ok());
  st = BloomFilter::Create(10, 2, 4, &out);
  EXPECT_EQ(st.message(), "size multiplier '4' is not odd in [1, 63]");
  EXPECT_TRUE(BloomFilter::Create(10, 2, 65, &out).IsInvalidArgument());
  CountingBloomFilter cbf(kMinLog2Bits, 1);
  EXPECT_EQ(CountingBloomFilter::Create(10, 2, 0, &cbf).message(),
            "size multiplier '0' is not odd in [1, 63]");
  BloomFilter g(9, 1, 3);
  EXPECT_EQ(g.FoldTo(10).message(), "cannot fold a filter of 3 x 2^9 bits to 3 x 2^10");
}

// Every held key stays present through adds, removes and saturation, at an exact size.
TEST(ExactSize, CountingFilterHasNoFalseNegatives) {
  for (unsigned c : {3u, 7u, 25u}) {
    CountingBloomFilter f(8, 3, c);
    const std::vector<KeyHash> keys = HashesOfIds(0, 3000);  // overloaded: saturates counters
    for (const KeyHash& h : keys) f.Add(h);
    for (size_t i = 0; i < keys.size(); i += 2) ASSERT_TRUE(f.Remove(keys[i]));
    for (size_t i = 1; i < keys.size(); i += 2) ASSERT_TRUE(f.MayContain(keys[i])) << c;
    BloomFilter projected;
    ASSERT_TRUE(f.Project(6, 1, &projected).ok());
    for (size_t i = 1; i < keys.size(); i += 2) ASSERT_TRUE(projected.MayContain(keys[i]));
  }
}

// Measured against theory on 200,000 absent keys (deterministic keys: no flakes). At the
// expected 1 % the standard deviation is 0.022 points; the tolerance is 15 % of the rate.
TEST(ExactSize, FalsePositiveRateMatchesTheory) {
  const std::vector<KeyHash> held = HashesOfIds(0, 10000);
  const std::vector<KeyHash> absent = HashesOfIds(1'000'000, 200'000);
  for (unsigned k : {1u, 2u}) {
    const std::optional<FilterSize> size =
        SmallestSize(10000, k, 0.01, kMinLog2Bits, 30, AllSizeMultipliers());
    ASSERT_TRUE(size.has_value());
    const BloomFilter f = Direct(size->log2, k, size->multiplier, held);
    uint64_t hits = 0;
    for (const KeyHash& h : absent) hits += f.MayContain(h);
    const double measured = static_cast<double>(hits) / static_cast<double>(absent.size());
    const double theory = FalsePositiveRate(static_cast<double>(f.bits()), 10000, k);
    EXPECT_LE(theory, 0.01);
    EXPECT_NEAR(measured, theory, 0.15 * theory) << "k=" << k;
  }
}

TEST(ExactSize, SmallestSizeIsWithinAThirtySecondOfTheNeed) {
  for (double n = 1000; n < 1e7; n *= 1.09) {
    for (unsigned k : {1u, 2u, 7u}) {
      const auto size = SmallestSize(n, k, 0.01, kMinLog2Bits, kMaxLog2Bits, AllSizeMultipliers());
      ASSERT_TRUE(size.has_value());
      EXPECT_LE(FalsePositiveRate(static_cast<double>(size->bits()), n, k), 0.01);
      // One step smaller (31/32 of it, or less) would miss the target.
      const double smaller = static_cast<double>(size->bits()) * 31.0 / 32.0;
      EXPECT_GT(FalsePositiveRate(smaller, n, k), 0.01 * 0.999) << n << " " << k;
    }
  }
}

TEST(ExactSize, ChooseGeometryExactSteps) {
  Geometry pow2, exact;
  ASSERT_TRUE(ChooseGeometry(Profile::kWireLean, 700000, 0.01, &pow2).ok());
  ASSERT_TRUE(ChooseGeometry(Profile::kWireLean, 700000, 0.01, &exact, SizeSteps::kExact).ok());
  EXPECT_EQ(pow2.multiplier, 1u);
  EXPECT_EQ(pow2.log2_counters, 27u);
  EXPECT_LT(exact.counters(), pow2.counters());
  EXPECT_LE(FalsePositiveRate(static_cast<double>(exact.counters()), 700000, 1), DesignFpr(0.01));
  EXPECT_EQ(exact.multiplier % 2, 1u);
}

}  // namespace
}  // namespace peerbloom
