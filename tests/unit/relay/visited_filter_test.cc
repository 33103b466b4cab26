#include <cmath>
#include <string>

#include "gtest/gtest.h"
#include "peerbloom/relay_message.h"

namespace peerbloom {
namespace {

TEST(VisitedFilter, SizedFromTheHopLimit) {
  const VisitedFilterSize s16 = SizeVisitedFilter(16, 0.01);
  EXPECT_EQ(s16.bytes, 20u);  // 16 * 9.59 = 154 bits
  EXPECT_EQ(s16.k, 7u);
  EXPECT_LE(ExpectedFpRate(s16.bytes, s16.k, 16), 0.01);
  const VisitedFilterSize s8 = SizeVisitedFilter(8, 0.01);
  EXPECT_EQ(s8.bytes, 10u);
  EXPECT_EQ(SizeVisitedFilter(100000, 0.01).bytes, kMaxRelayFilterBytes);
}

TEST(VisitedFilter, NoFalseNegatives) {
  const IndexHasher hasher;
  const SipKey key = DeriveIndexKey("");
  for (uint64_t id = 1; id <= 200; ++id) {
    const uint64_t salt = VisitedFilterSalt(key, "origin", id);
    std::string filter(20, '\0');
    for (int n = 0; n < 16; ++n) {
      VisitedFilterAdd(hasher.Hash("node" + std::to_string(n)), salt, 7, &filter);
    }
    for (int n = 0; n < 16; ++n) {
      ASSERT_TRUE(
          VisitedFilterMayContain(hasher.Hash("node" + std::to_string(n)), salt, 7, filter));
    }
  }
}

// 16 ids in a filter sized for 16 at 1 %: over 2,000 messages x 500 outsiders (1e6 probes).
// The textbook formula assumes a large m; at m = 160 bits the fill varies from message to
// message and the rate is the mean of fill^k, which is higher (measured 1.09 % against the
// formula's 0.82 %). The test allows 0.7x to 1.5x the formula; docs/relay.md gives both.
TEST(VisitedFilter, FalsePositiveRateMatchesTheFormula) {
  const IndexHasher hasher;
  const SipKey key = DeriveIndexKey("cluster");
  const VisitedFilterSize size = SizeVisitedFilter(16, 0.01);
  uint64_t hits = 0, probes = 0;
  for (uint64_t id = 1; id <= 2000; ++id) {
    const uint64_t salt = VisitedFilterSalt(key, "o", id);
    std::string filter(size.bytes, '\0');
    for (int n = 0; n < 16; ++n) {
      VisitedFilterAdd(hasher.Hash("in" + std::to_string(n)), salt, size.k, &filter);
    }
    for (int n = 0; n < 500; ++n) {
      hits += VisitedFilterMayContain(hasher.Hash("out" + std::to_string(n)), salt, size.k, filter);
      ++probes;
    }
  }
  const double expected = ExpectedFpRate(size.bytes, size.k, 16);
  const double measured = static_cast<double>(hits) / static_cast<double>(probes);
  EXPECT_GT(measured, 0.7 * expected) << measured << " vs " << expected;
  EXPECT_LT(measured, 1.5 * expected) << measured << " vs " << expected;
}

TEST(VisitedFilter, SaltsDifferPerMessage) {
  const SipKey key = DeriveIndexKey("");
  EXPECT_NE(VisitedFilterSalt(key, "a", 1), VisitedFilterSalt(key, "a", 2));
  EXPECT_NE(VisitedFilterSalt(key, "a", 1), VisitedFilterSalt(key, "b", 1));
}

}  // namespace
}  // namespace peerbloom
