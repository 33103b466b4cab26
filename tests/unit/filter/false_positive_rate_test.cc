// Measured false-positive rate of the counting filter at 1e6 keys against the formula
// f = (1 - e^(-kn/m))^k, for realistic sizes of each k.
//
// Tolerance: the measured rate must be within +-15 % of f.
// Why that is safe and still sharp: the number of false positives among N absent probes is
// binomial with mean N f, so its relative standard deviation is sqrt((1 - f) / (N f)). The test
// probes N = max(1e6, ceil(10000 / f)) absent keys, i.e. expects at least 10,000 hits: the
// relative standard deviation is at most 1 %, so 15 % is 15 standard deviations. The fill of
// one filter also varies (Var(X) ~= m e^(-kn/m)(1 - (1 + kn/m) e^(-kn/m)) set bits), adding well
// under 0.3 % here. A broken hash or probe sequence (correlated positions, a lost bit of h2)
// moves the rate by far more than 15 %.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "peerbloom/counting_bloom_filter.h"
#include "peerbloom/params.h"
#include "tests/unit/filter/filter_test_keys.h"

namespace peerbloom {
namespace {

using testing::HashOfId;

constexpr uint64_t kKeys = 1000000;
constexpr double kTolerance = 0.15;
constexpr double kMinExpectedHits = 10000;
constexpr uint64_t kProbeBatch = 4096;

struct FprCase {
  const char* name;
  unsigned log2_counters;
  unsigned k;
};

class FalsePositiveRate : public ::testing::TestWithParam<FprCase> {};

TEST_P(FalsePositiveRate, WithinFifteenPercentOfFormula) {
  const FprCase& c = GetParam();
  CountingBloomFilter f(c.log2_counters, c.k);
  for (uint64_t id = 0; id < kKeys; ++id) f.Add(HashOfId(id));

  const double theory =
      ::peerbloom::FalsePositiveRate(static_cast<double>(f.counters()), kKeys, c.k);
  const uint64_t probes =
      std::max<uint64_t>(1000000, static_cast<uint64_t>(std::ceil(kMinExpectedHits / theory)));
  // Probed in batches (MayContainBatch overlaps the cache misses); BatchesEqualSequentialCalls
  // checks that batches answer exactly as single calls do.
  uint64_t hits = 0;
  std::vector<KeyHash> batch;
  std::vector<char> answers(kProbeBatch);
  for (uint64_t first = kKeys; first < kKeys + probes; first += kProbeBatch) {
    batch.clear();
    for (uint64_t id = first; id < std::min(first + kProbeBatch, kKeys + probes); ++id) {
      batch.push_back(HashOfId(id));
    }
    f.MayContainBatch(batch.data(), batch.size(), reinterpret_cast<bool*>(answers.data()));
    for (size_t i = 0; i < batch.size(); ++i) hits += answers[i] != 0;
  }
  const double measured = static_cast<double>(hits) / static_cast<double>(probes);

  std::printf("2^%u counters, k %u, %llu keys: measured %.6f (%llu / %llu), formula %.6f\n",
              c.log2_counters, c.k, static_cast<unsigned long long>(kKeys), measured,
              static_cast<unsigned long long>(hits), static_cast<unsigned long long>(probes),
              theory);
  RecordProperty("measured_fpr", std::to_string(measured));
  RecordProperty("theory_fpr", std::to_string(theory));
  EXPECT_NEAR(measured, theory, kTolerance * theory)
      << hits << " false positives in " << probes << " probes";
}

INSTANTIATE_TEST_SUITE_P(
    Profiles, FalsePositiveRate,
    ::testing::Values(FprCase{"k1_wire_lean", 27, 1}, FprCase{"k2_balanced", 25, 2},
                      FprCase{"k4_dense", 23, 4}, FprCase{"k7_memory_lean", 24, 7},
                      FprCase{"k7_folded_once", 23, 7}),
    [](const ::testing::TestParamInfo<FprCase>& case_info) { return case_info.param.name; });

}  // namespace
}  // namespace peerbloom
