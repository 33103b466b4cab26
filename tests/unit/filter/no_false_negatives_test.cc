// No false negatives under churn: a counting filter driven by random adds, removes, repeated
// adds past saturation and removes of absent keys, checked against an exact model of the
// multiset of keys it holds. Every key of the model must be reported by the counting filter,
// by its projection to every smaller power-of-two size and by every fold of those.
#include <gtest/gtest.h>

#include <ostream>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "peerbloom/bloom_filter.h"
#include "peerbloom/counting_bloom_filter.h"
#include "peerbloom/params.h"
#include "tests/unit/filter/filter_test_keys.h"

namespace peerbloom {
namespace {

using testing::HashesOfIds;
using testing::HashOfId;

struct ChurnConfig {
  const char* name;
  unsigned log2_counters;
  unsigned k;
  uint64_t universe;   // key ids 0..universe-1 are added and removed
  uint64_t live_goal;  // the live multiset hovers around this size
  uint64_t ops;
};

void PrintTo(const ChurnConfig& config, std::ostream* os) {
  *os << config.name << " (2^" << config.log2_counters << " counters, k " << config.k << ")";
}

// Drives a filter and an exact model side by side.
class ChurnHarness {
 public:
  explicit ChurnHarness(const ChurnConfig& config)
      : config_(config),
        filter_(config.log2_counters, config.k),
        hashes_(HashesOfIds(0, config.universe)),
        rng_(config.log2_counters * 1000 + config.k) {}

  void Run() {
    for (uint64_t op = 0; op < config_.ops; ++op) {
      Step();
      if (::testing::Test::HasFatalFailure()) return;
      if (op % 50000 == 49999) {
        ASSERT_EQ(CountCbfMisses(), 0u) << "after op " << op;
      }
    }
  }

  // Every counter at 15 is counted once by the gauge: saturation never came undone.
  void CheckCounters() const {
    uint64_t at_max = 0;
    for (uint64_t pos = 0; pos < filter_.counters(); ++pos) {
      at_max += filter_.Counter(pos) == CountingBloomFilter::kMaxCount;
    }
    EXPECT_EQ(filter_.saturated_counters(), at_max);
    EXPECT_EQ(filter_.saturation_events(), expected_saturation_events_);
    EXPECT_EQ(filter_.refused_removes(), expected_refused_);
    EXPECT_EQ(filter_.items(), live_.size());
    EXPECT_EQ(model_.size(), live_.size());
  }

  uint64_t CountCbfMisses() const {
    uint64_t misses = 0;
    for (uint64_t id : model_) misses += !filter_.MayContain(hashes_[id]);
    return misses;
  }

  uint64_t CountMisses(const BloomFilter& summary) const {
    uint64_t misses = 0;
    for (uint64_t id : model_) misses += !summary.MayContain(hashes_[id]);
    return misses;
  }

  const CountingBloomFilter& filter() const { return filter_; }
  uint64_t refused() const { return expected_refused_; }
  uint64_t live() const { return live_.size(); }

 private:
  void Step() {
    // Per mille: 5 hot-key bursts, 100 removes of absent keys, then adds and removes of
    // present keys in a ratio that steers the live count toward its goal.
    const uint32_t r = rng_() % 1000;
    const bool grow = live_.size() < config_.live_goal;
    if (r < 5) {
      AddHotKey();
    } else if (r < 105) {
      RemoveAbsent();
    } else if (r < (grow ? 600u : 450u)) {
      Add(rng_() % config_.universe);
    } else if (!live_.empty()) {
      RemoveLive(rng_() % live_.size());
    }
  }

  void Add(uint64_t id) {
    const KeyHash& h = hashes_[id];
    ForEachProbe(h, filter_.k(), filter_.reduction(), [&](uint64_t pos) {
      expected_saturation_events_ += filter_.Counter(pos) == CountingBloomFilter::kMaxCount;
    });
    filter_.Add(h);
    live_.push_back(id);
    model_.insert(id);
  }

  // One of a few hot keys, added 20 to 30 times in a row: its counters saturate.
  void AddHotKey() {
    const uint64_t id = rng_() % 8;
    const int times = 20 + static_cast<int>(rng_() % 11);
    for (int i = 0; i < times; ++i) Add(id);
  }

  void RemoveLive(size_t index) {
    const uint64_t id = live_[index];
    ASSERT_TRUE(filter_.Remove(hashes_[id])) << "remove of present key " << id << " refused";
    live_[index] = live_.back();
    live_.pop_back();
    model_.erase(model_.find(id));
  }

  // A key the model does not hold. When the filter reports it absent the remove must be
  // refused and change nothing. When the filter reports it (a false positive) removing it
  // would be the caller's error, which no counting filter can detect: it is not attempted.
  void RemoveAbsent() {
    const uint64_t id = rng_() % config_.universe;
    if (model_.count(id) != 0 || filter_.MayContain(hashes_[id])) return;
    const uint64_t items = filter_.items();
    std::vector<uint8_t> before;
    ForEachProbe(hashes_[id], filter_.k(), filter_.reduction(),
                 [&](uint64_t pos) { before.push_back(filter_.Counter(pos)); });
    ASSERT_FALSE(filter_.Remove(hashes_[id]));
    ++expected_refused_;
    size_t i = 0;
    ForEachProbe(hashes_[id], filter_.k(), filter_.reduction(),
                 [&](uint64_t pos) { ASSERT_EQ(filter_.Counter(pos), before[i++]); });
    ASSERT_EQ(filter_.items(), items);
  }

  ChurnConfig config_;
  CountingBloomFilter filter_;
  std::vector<KeyHash> hashes_;
  std::mt19937_64 rng_;
  std::vector<uint64_t> live_;               // one entry per copy held
  std::unordered_multiset<uint64_t> model_;  // the truth: every copy of every key held
  uint64_t expected_saturation_events_ = 0;
  uint64_t expected_refused_ = 0;
};

class NoFalseNegatives : public ::testing::TestWithParam<ChurnConfig> {};

TEST_P(NoFalseNegatives, UnderChurnInEveryProjectionAndFold) {
  const ChurnConfig& config = GetParam();
  ChurnHarness harness(config);
  harness.Run();
  if (HasFatalFailure()) return;
  harness.CheckCounters();
  EXPECT_GT(harness.filter().saturated_counters(), 0u) << "hot keys must saturate counters";
  EXPECT_GT(harness.refused(), 1000u) << "absent removes must be exercised";
  ASSERT_EQ(harness.CountCbfMisses(), 0u);

  const CountingBloomFilter& f = harness.filter();
  std::vector<BloomFilter> projections(f.log2_counters() + 1);
  for (unsigned log2 = kMinLog2Bits; log2 <= f.log2_counters(); ++log2) {
    ASSERT_TRUE(f.Project(log2, &projections[log2]).ok());
    EXPECT_EQ(harness.CountMisses(projections[log2]), 0u) << "projection to 2^" << log2;
  }
  for (unsigned from = kMinLog2Bits + 1; from <= f.log2_counters(); ++from) {
    BloomFilter folded = projections[from];
    while (folded.log2_bits() > kMinLog2Bits) {
      folded.Fold();
      EXPECT_EQ(harness.CountMisses(folded), 0u)
          << "projection to 2^" << from << " folded to 2^" << folded.log2_bits();
      EXPECT_TRUE(folded == projections[folded.log2_bits()])
          << "fold of 2^" << from << " to 2^" << folded.log2_bits() << " is not the projection";
    }
  }
}

ChurnConfig MemoryLeanConfig() {
  Geometry g;
  EXPECT_TRUE(ChooseGeometry(Profile::kMemoryLean, 20000, 0.01, &g).ok());
  return {"memory_lean_20k", g.log2_counters, g.k, 60000, 20000, 400000};
}

INSTANTIATE_TEST_SUITE_P(Churn, NoFalseNegatives,
                         ::testing::Values(ChurnConfig{"tight_k4", 14, 4, 20000, 3000, 1000000},
                                           ChurnConfig{"tight_k1", 14, 1, 20000, 3000, 300000},
                                           ChurnConfig{"balanced_k2", 16, 2, 20000, 2000, 300000},
                                           MemoryLeanConfig()),
                         [](const ::testing::TestParamInfo<ChurnConfig>& case_info) {
                           return case_info.param.name;
                         });

}  // namespace
}  // namespace peerbloom
