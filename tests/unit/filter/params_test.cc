#include "peerbloom/params.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "peerbloom/bloom_probe.h"

namespace peerbloom {
namespace {

double Pow2(unsigned log2) { return std::ldexp(1.0, static_cast<int>(log2)); }

TEST(Params, OptimalBitsAndHashes) {
  // -1e6 ln(0.01) / (ln 2)^2 = 9585058.38, rounded up.
  EXPECT_EQ(OptimalBits(1e6, 0.01), 9585059u);
  EXPECT_EQ(OptimalBits(1e6, 0.001), 14377588u);
  // (m / n) ln 2 = 6.64 -> 7.
  EXPECT_EQ(OptimalHashes(9585059, 1e6), 7u);
  EXPECT_EQ(OptimalHashes(8e6, 1e6), 6u);  // 5.55
  EXPECT_EQ(OptimalHashes(1, 1e6), 1u);
  EXPECT_EQ(OptimalHashes(1e9, 1), kMaxHashes);
}

TEST(Params, FalsePositiveRateFormula) {
  EXPECT_EQ(FalsePositiveRate(1024, 0, 3), 0.0);
  // k = 1: 1 - e^(-n/m).
  EXPECT_NEAR(FalsePositiveRate(1000, 10, 1), 0.009950166250831893, 1e-15);
  // (1 - e^(-0.7))^7 with m = 10 n.
  EXPECT_NEAR(FalsePositiveRate(1e7, 1e6, 7), 0.008193722065862417, 1e-15);
  // The optimum meets its target.
  EXPECT_LE(FalsePositiveRate(9585059, 1e6, 7), 0.0101);
  EXPECT_NEAR(FalsePositiveRate(Pow2(24), 1e6, 7), 0.0005376007159002883, 1e-15);
}

TEST(Params, CapacityInvertsFalsePositiveRate) {
  for (double bits : {1e4, 9585059.0, Pow2(27)}) {
    for (unsigned k : {1u, 2u, 4u, 7u, 12u}) {
      for (double p : {0.1, 0.01, 0.001}) {
        const double n = Capacity(bits, k, p);
        EXPECT_GT(n, 0.0);
        EXPECT_NEAR(FalsePositiveRate(bits, n, k), p, 1e-9 * p) << bits << " " << k << " " << p;
      }
    }
  }
  // The optimal filter for 1e6 keys at 1 % and k = 7 holds about 1e6 keys.
  EXPECT_NEAR(Capacity(9585059, 7, 0.01), 1e6, 0.01 * 1e6);
}

TEST(Params, SmallestLog2BitsIsTheFirstSizeThatMeetsTheTarget) {
  for (double n : {1e3, 1e5, 1e6, 1e7}) {
    for (unsigned k : {1u, 2u, 7u}) {
      const unsigned log2 = SmallestLog2Bits(n, k, 0.01, kMinLog2Bits, kMaxLog2Bits);
      EXPECT_LE(FalsePositiveRate(Pow2(log2), n, k), 0.01) << n << " " << k;
      EXPECT_GT(FalsePositiveRate(Pow2(log2 - 1), n, k), 0.01) << n << " " << k;
    }
  }
  EXPECT_EQ(SmallestLog2Bits(1e6, 7, 0.01, kMinLog2Bits, kMaxLog2Bits), 24u);
  // Never below the minimum, and the maximum when nothing meets the target.
  EXPECT_EQ(SmallestLog2Bits(1, 7, 0.01, 10, 20), 10u);
  EXPECT_EQ(SmallestLog2Bits(1e6, 7, 0.01, 10, 20), 20u);
}

// round(log2(1/p)), at least 1 and at most kMaxHashes; the memory-lean profile's k.
TEST(Params, HashesForFpr) {
  EXPECT_EQ(HashesForFpr(0.5), 1u);
  EXPECT_EQ(HashesForFpr(0.9), 1u);
  EXPECT_EQ(HashesForFpr(0.01), 7u);    // log2(100) = 6.64
  EXPECT_EQ(HashesForFpr(0.001), 10u);  // 9.97
  EXPECT_EQ(HashesForFpr(1e-9), 30u);   // 29.9
  EXPECT_EQ(HashesForFpr(1e-12), kMaxHashes);
  for (double p : {0.5, 0.1, 0.02, 0.01, 0.001, 1e-6}) {
    Geometry g;
    ASSERT_TRUE(ChooseGeometry(Profile::kMemoryLean, 1000, p, &g).ok());
    EXPECT_EQ(g.k, HashesForFpr(p)) << p;
  }
}

TEST(Params, ProfileNames) {
  for (Profile p : {Profile::kMemoryLean, Profile::kBalanced, Profile::kWireLean}) {
    EXPECT_EQ(ParseProfile(ProfileName(p)), p);
  }
  EXPECT_EQ(ProfileName(Profile::kMemoryLean), "memory-lean");
  EXPECT_EQ(ProfileName(Profile::kBalanced), "balanced");
  EXPECT_EQ(ProfileName(Profile::kWireLean), "wire-lean");
  EXPECT_EQ(ParseProfile("Balanced"), std::nullopt);
  EXPECT_EQ(ParseProfile(""), std::nullopt);
}

struct GeometryCase {
  Profile profile;
  uint64_t capacity;
  double fpr;
  unsigned k;
  unsigned log2_counters;
};

// Expected sizes worked out from f = (1 - e^(-kn/m))^k against the design rate DesignFpr(p) =
// 0.98 p, e.g. memory-lean at 1e6 keys and 1 %: k = round(log2(100)) = 7, f(2^23) = 1.86 % >
// 0.98 %, f(2^24) = 0.054 % -> 2^24.
TEST(Params, ChooseGeometryPerProfile) {
  const GeometryCase cases[] = {
      {Profile::kMemoryLean, 1000000, 0.01, 7, 24},   {Profile::kBalanced, 1000000, 0.01, 2, 25},
      {Profile::kWireLean, 1000000, 0.01, 1, 27},     {Profile::kMemoryLean, 10000000, 0.01, 7, 27},
      {Profile::kBalanced, 10000000, 0.01, 2, 28},    {Profile::kWireLean, 10000000, 0.01, 1, 30},
      {Profile::kMemoryLean, 1000000, 0.001, 10, 24}, {Profile::kMemoryLean, 1, 0.5, 1, 6},
  };
  for (const GeometryCase& c : cases) {
    SCOPED_TRACE(std::string(ProfileName(c.profile)) + " " + std::to_string(c.capacity) + " " +
                 std::to_string(c.fpr));
    Geometry g;
    ASSERT_TRUE(ChooseGeometry(c.profile, c.capacity, c.fpr, &g).ok());
    EXPECT_EQ(g.k, c.k);
    EXPECT_EQ(g.log2_counters, c.log2_counters);
    const double n = static_cast<double>(c.capacity);
    EXPECT_LE(FalsePositiveRate(Pow2(g.log2_counters), n, g.k), DesignFpr(c.fpr));
    if (g.log2_counters > kMinLog2Bits) {
      EXPECT_GT(FalsePositiveRate(Pow2(g.log2_counters - 1), n, g.k), DesignFpr(c.fpr));
    }
  }
}

// Wire-lean at 10400 keys: f(2^20) = 0.987 % meets 1 % but not the design rate 0.98 %, so the
// filter doubles rather than measure above 1 % about half the time.
TEST(Params, ChooseGeometryLeavesTheDesignMargin) {
  EXPECT_DOUBLE_EQ(DesignFpr(0.01), 0.0098);
  const double f = FalsePositiveRate(Pow2(20), 10400, 1);
  EXPECT_GT(f, DesignFpr(0.01));
  EXPECT_LE(f, 0.01);
  Geometry g;
  ASSERT_TRUE(ChooseGeometry(Profile::kWireLean, 10400, 0.01, &g).ok());
  EXPECT_EQ(g.log2_counters, 21u);
  ASSERT_TRUE(ChooseGeometry(Profile::kWireLean, 10400, 0.01, &g, SizeSteps::kExact).ok());
  EXPECT_EQ(g.counters(), uint64_t{33} << 15);  // 2^20 gives 0.987 %, 33 x 2^15 0.957 %
}

// The rule before the design margin, kept to recognize old snapshots: at 10400 keys it is
// the 2^20 (0.987 %) that ChooseGeometry now refuses, both with powers of two and exact sizes.
TEST(Params, ChooseLegacyGeometrySizesForTheTargetItself) {
  Geometry g;
  ASSERT_TRUE(ChooseLegacyGeometry(Profile::kWireLean, 10400, 0.01, &g).ok());
  EXPECT_EQ(g, (Geometry{1, 20, 1}));
  ASSERT_TRUE(ChooseLegacyGeometry(Profile::kWireLean, 10400, 0.01, &g, SizeSteps::kExact).ok());
  EXPECT_EQ(g, (Geometry{1, 20, 1}));  // the next size down, 63 x 2^14, gives 1.0025 %
  EXPECT_GT(FalsePositiveRate(63.0 * Pow2(14), 10400, 1), 0.01);
  const Status s = ChooseLegacyGeometry(Profile::kBalanced, 0, 0.01, &g);
  EXPECT_EQ(s.message(), "capacity must be at least 1");
}

// Both rules pick the same k; the legacy size is the smallest meeting p, never above the
// current one, and differs from it exactly when its rate lies in (DesignFpr(p), p].
TEST(Params, ChooseLegacyGeometryIsNeverLarger) {
  int differ = 0;
  for (Profile profile : {Profile::kMemoryLean, Profile::kBalanced, Profile::kWireLean}) {
    for (SizeSteps steps : {SizeSteps::kPowerOfTwo, SizeSteps::kExact}) {
      for (uint64_t n = 1000; n <= 3000000; n = n * 23 / 20) {
        Geometry now, legacy;
        ASSERT_TRUE(ChooseGeometry(profile, n, 0.01, &now, steps).ok());
        ASSERT_TRUE(ChooseLegacyGeometry(profile, n, 0.01, &legacy, steps).ok());
        EXPECT_EQ(legacy.k, now.k);
        EXPECT_LE(legacy.counters(), now.counters()) << n;
        const double f = FalsePositiveRate(static_cast<double>(legacy.counters()),
                                           static_cast<double>(n), legacy.k);
        EXPECT_LE(f, 0.01) << n;
        EXPECT_EQ(legacy == now, f <= DesignFpr(0.01)) << n;
        differ += !(legacy == now);
      }
    }
  }
  EXPECT_GT(differ, 0);
}

TEST(Params, ChooseGeometryRejectsBadArguments) {
  Geometry g{3, 9};
  Status s = ChooseGeometry(Profile::kBalanced, 0, 0.01, &g);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(s.message(), "capacity must be at least 1");
  s = ChooseGeometry(Profile::kBalanced, 100, 0.0, &g);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(s.message(), "false-positive rate '0' is outside (0, 0.5]");
  s = ChooseGeometry(Profile::kBalanced, 100, 0.6, &g);
  EXPECT_EQ(s.message(), "false-positive rate '0.6' is outside (0, 0.5]");
  s = ChooseGeometry(Profile::kBalanced, 100, -0.01, &g);
  EXPECT_EQ(s.message(), "false-positive rate '-0.01' is outside (0, 0.5]");
  s = ChooseGeometry(Profile::kBalanced, 100, std::numeric_limits<double>::quiet_NaN(), &g);
  EXPECT_EQ(s.message(), "false-positive rate 'nan' is outside (0, 0.5]");
  s = ChooseGeometry(Profile::kWireLean, 1000000000, 0.01, &g);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(s.message(),
            "capacity '1000000000' at false-positive rate '0.01' needs more than 2^34 counters");
  EXPECT_EQ(g.k, 3u);  // untouched on error
  EXPECT_EQ(g.log2_counters, 9u);
}

}  // namespace
}  // namespace peerbloom
