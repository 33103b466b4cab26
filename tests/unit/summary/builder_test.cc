#include "peerbloom/summary_builder.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "peerbloom/params.h"
#include "peerbloom/summary.h"
#include "tests/unit/summary/node_sim.h"
#include "tests/unit/summary/summary_test_util.h"

namespace peerbloom {
namespace {

using testing_util::Node;
using testing_util::RandomHash;

double Pow2Bits(unsigned log2) { return static_cast<double>(uint64_t{1} << log2); }

SummaryBuilderOptions Options(unsigned min_log2_bits = 6) {
  SummaryBuilderOptions o;
  o.origin = "cache-1";
  o.epoch = 3;
  o.min_log2_bits = min_log2_bits;
  return o;
}

TEST(SummaryBuilder, FirstPublicationIsFullAtTheSmallestSize) {
  Node node(20, 1, Options());
  std::mt19937_64 rng(1);
  for (int i = 0; i < 1000; ++i) node.Add(RandomHash(rng));
  Publication p;
  ASSERT_TRUE(node.builder.Publish(&p).ok());
  EXPECT_TRUE(p.changed);
  EXPECT_TRUE(p.full);
  const Summary& s = node.builder.current();
  EXPECT_EQ(s.version, 1u);
  EXPECT_EQ(s.epoch, 3u);
  EXPECT_EQ(s.origin, "cache-1");
  EXPECT_EQ(s.estimated_items, 1000u);
  EXPECT_EQ(s.filter.log2_bits(), SmallestLog2Bits(1000, 1, DesignFpr(0.01), 6, 20));
  BloomFilter projected;
  ASSERT_TRUE(node.filter.Project(s.filter.log2_bits(), &projected).ok());
  EXPECT_TRUE(s.filter == projected);
  EXPECT_EQ(node.builder.digest(), FilterDigest(projected));
}

TEST(SummaryBuilder, NothingChangedMeansNothingToSend) {
  Node node(16, 2, Options());
  std::mt19937_64 rng(2);
  for (int i = 0; i < 100; ++i) node.Add(RandomHash(rng));
  Publication p;
  ASSERT_TRUE(node.builder.Publish(&p).ok());
  ASSERT_TRUE(node.builder.Publish(&p).ok());
  EXPECT_FALSE(p.changed);
  EXPECT_EQ(node.builder.current().version, 1u);
  // Adding a key twice and removing it once changes no bit either.
  node.Add(node.held[0]);
  node.RemoveAt(node.held.size() - 1);
  EXPECT_EQ(node.builder.pending(), 4u);  // two touches of k = 2
  ASSERT_TRUE(node.builder.Publish(&p).ok());
  EXPECT_FALSE(p.changed);
  EXPECT_EQ(node.builder.pending(), 0u);
}

TEST(SummaryBuilder, DeltaCarriesExactlyTheFlippedBits) {
  Node node(20, 1, Options());
  std::mt19937_64 rng(3);
  for (int i = 0; i < 1000; ++i) node.Add(RandomHash(rng));
  Publication p;
  ASSERT_TRUE(node.builder.Publish(&p).ok());
  const Summary before = node.builder.current();
  for (int i = 0; i < 10; ++i) node.RemoveAt(0);
  for (int i = 0; i < 10; ++i) node.Add(RandomHash(rng));
  ASSERT_TRUE(node.builder.Publish(&p).ok());
  ASSERT_TRUE(p.changed);
  ASSERT_FALSE(p.full);
  SummaryDelta expected;
  ASSERT_TRUE(ComputeDelta(before, node.builder.current(), &expected).ok());
  EXPECT_EQ(p.delta.flipped, expected.flipped);
  EXPECT_EQ(p.delta.base_version, 1u);
  EXPECT_EQ(p.delta.version, 2u);
  EXPECT_EQ(p.delta.result_digest, FilterDigest(node.builder.current().filter));
  EXPECT_DOUBLE_EQ(p.changed_fraction, static_cast<double>(expected.flipped.size()) /
                                           static_cast<double>(before.filter.bits()));
}

// k = 1 at 1 % (sized for 0.98 %, DesignFpr): 2^14 bits hold up to 161 keys, 2^15 up to 322.
TEST(SummaryBuilder, GrowsAtOnceAndShrinksOnlyWithHeadroom) {
  Node node(20, 1, Options());
  std::mt19937_64 rng(4);
  Publication p;
  const auto publish_with = [&](size_t n) {
    while (node.held.size() > n) node.RemoveAt(0);
    while (node.held.size() < n) node.Add(RandomHash(rng));
    EXPECT_TRUE(node.builder.Publish(&p).ok());
    return node.builder.current().filter.log2_bits();
  };
  EXPECT_EQ(publish_with(100), 14u);
  EXPECT_EQ(publish_with(170), 15u);  // grow at once
  EXPECT_TRUE(p.full);
  EXPECT_EQ(publish_with(150), 15u);  // 1.25 x 150 would not fit 2^14: stay
  EXPECT_FALSE(p.full);
  EXPECT_EQ(publish_with(120), 14u);  // 1.25 x 120 fits: shrink
  EXPECT_TRUE(p.full);
  EXPECT_EQ(node.builder.current().version, 4u);
}

// 162 keys: 2^14 bits would give 0.984 %, within the 1 % target but not the design rate
// DesignFpr(1 %) = 0.98 % that sizes summaries like counting filters, so the summary is 2^15.
TEST(SummaryBuilder, FoldsOnlyWithinTheDesignMargin) {
  Node node(20, 1, Options());
  std::mt19937_64 rng(7);
  for (int i = 0; i < 162; ++i) node.Add(RandomHash(rng));
  const double f = FalsePositiveRate(Pow2Bits(14), 162, 1);
  ASSERT_LE(f, 0.01);
  ASSERT_GT(f, DesignFpr(0.01));
  Publication p;
  ASSERT_TRUE(node.builder.Publish(&p).ok());
  EXPECT_EQ(node.builder.current().filter.log2_bits(), 15u);
}

TEST(SummaryBuilder, SizeStaysWithinTheConfiguredRange) {
  Node node(12, 1, Options(10));
  std::mt19937_64 rng(5);
  Publication p;
  ASSERT_TRUE(node.builder.Publish(&p).ok());
  EXPECT_EQ(node.builder.current().filter.log2_bits(), 10u);  // empty: the minimum
  for (int i = 0; i < 5000; ++i) node.Add(RandomHash(rng));
  ASSERT_TRUE(node.builder.Publish(&p).ok());
  EXPECT_EQ(node.builder.current().filter.log2_bits(), 12u);  // overfull: the counters' size
}

// More touches than the dirty list holds: the builder re-projects and diffs, still exactly.
TEST(SummaryBuilder, DirtyOverflowFallsBackToFullReprojection) {
  Node node(22, 1, Options());
  std::mt19937_64 rng(6);
  for (int i = 0; i < 600; ++i) node.Add(RandomHash(rng));
  Publication p;
  ASSERT_TRUE(node.builder.Publish(&p).ok());
  ASSERT_EQ(node.builder.current().filter.log2_bits(), 16u);  // dirty list: 1024 entries
  const Summary before = node.builder.current();
  for (int i = 0; i < 600; ++i) node.RemoveAt(0);
  for (int i = 0; i < 600; ++i) node.Add(RandomHash(rng));
  EXPECT_EQ(node.builder.pending(), 1200u);
  ASSERT_TRUE(node.builder.Publish(&p).ok());
  ASSERT_FALSE(p.full);
  SummaryDelta expected;
  ASSERT_TRUE(ComputeDelta(before, node.builder.current(), &expected).ok());
  EXPECT_EQ(p.delta.flipped, expected.flipped);
  BloomFilter projected;
  ASSERT_TRUE(node.filter.Project(16, &projected).ok());
  EXPECT_TRUE(node.builder.current().filter == projected);
}

TEST(SummaryBuilder, InvalidOptionsFailPublish) {
  CountingBloomFilter filter(10, 1);
  SummaryBuilderOptions bad = Options();
  bad.origin = "not valid";
  SummaryBuilder builder(&filter, bad);
  Publication p;
  const Status st = builder.Publish(&p);
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_EQ(st.message(), "origin 'not valid' is not a node id");
  bad = Options();
  bad.target_fpr = 0;
  EXPECT_TRUE(ValidateSummaryBuilderOptions(bad).IsInvalidArgument());
  bad = Options();
  bad.shrink_headroom = -1;
  EXPECT_TRUE(ValidateSummaryBuilderOptions(bad).IsInvalidArgument());
  bad = Options(3);
  EXPECT_TRUE(ValidateSummaryBuilderOptions(bad).IsInvalidArgument());
}

}  // namespace
}  // namespace peerbloom
