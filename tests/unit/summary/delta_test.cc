#include <gtest/gtest.h>

#include <bit>
#include <random>
#include <string>

#include "peerbloom/summary.h"
#include "tests/unit/summary/summary_test_util.h"

namespace peerbloom {
namespace {

using testing_util::FilterWithFill;
using testing_util::MakeSummary;

// `base` with about `flips` random bits toggled, one version later.
Summary Next(const Summary& base, int flips, std::mt19937_64& rng) {
  Summary next = base;
  ++next.version;
  for (int i = 0; i < flips; ++i) next.filter.FlipBit(rng() % next.filter.bits());
  return next;
}

uint64_t DifferingBits(const BloomFilter& a, const BloomFilter& b) {
  uint64_t n = 0;
  for (size_t w = 0; w < a.words().size(); ++w) n += std::popcount(a.words()[w] ^ b.words()[w]);
  return n;
}

SummaryDelta WireRoundTrip(const SummaryDelta& d) {
  std::string bytes;
  EXPECT_TRUE(EncodeDelta(d, &bytes).ok());
  SummaryDelta back;
  const Status st = DecodeDelta(bytes, DecodeLimits{}, &back);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return back;
}

TEST(SummaryDelta, ComputeEncodeDecodeApplyReproducesTheTarget) {
  std::mt19937_64 rng(11);
  for (unsigned log2_bits : {6u, 12u, 18u}) {
    for (double fill : {0.0, 0.01, 0.5}) {
      for (int flips : {0, 1, 5, 300}) {
        const Summary from = MakeSummary(FilterWithFill(log2_bits, 2, fill, rng()), 5);
        const Summary to = Next(from, flips, rng);
        SummaryDelta d;
        ASSERT_TRUE(ComputeDelta(from, to, &d).ok());
        EXPECT_EQ(d.flipped.size(), DifferingBits(from.filter, to.filter));
        const SummaryDelta back = WireRoundTrip(d);
        EXPECT_EQ(back.flipped, d.flipped);
        EXPECT_EQ(back.result_digest, FilterDigest(to.filter));
        Summary held = from;
        const Status st = ApplyDelta(back, &held);
        ASSERT_TRUE(st.ok()) << st.ToString();
        testing_util::ExpectSameSummary(held, to);
      }
    }
  }
}

TEST(SummaryDelta, ComputeRefusesUnrelatedSummaries) {
  const Summary a = MakeSummary(FilterWithFill(10, 1, 0.1, 1), 3);
  Summary b = MakeSummary(FilterWithFill(10, 1, 0.1, 2), 4);
  SummaryDelta d;
  EXPECT_TRUE(ComputeDelta(a, b, &d).ok());
  EXPECT_TRUE(ComputeDelta(b, a, &d).IsInvalidArgument());  // backwards
  EXPECT_TRUE(ComputeDelta(a, a, &d).IsInvalidArgument());  // same version
  Summary other = b;
  other.origin = "node-b";
  EXPECT_TRUE(ComputeDelta(a, other, &d).IsInvalidArgument());
  other = b;
  other.epoch = 8;
  EXPECT_TRUE(ComputeDelta(a, other, &d).IsInvalidArgument());
  other = b;
  other.filter = FilterWithFill(11, 1, 0.1, 2);
  EXPECT_TRUE(ComputeDelta(a, other, &d).IsInvalidArgument());
  other = b;
  other.key_scheme = KeyScheme::kRaw;
  EXPECT_TRUE(ComputeDelta(a, other, &d).IsInvalidArgument());
}

TEST(SummaryDelta, MismatchedBaseIsOutOfRangeAndLeavesTheBaseAlone) {
  std::mt19937_64 rng(3);
  const Summary from = MakeSummary(FilterWithFill(12, 1, 0.02, 4), 10);
  SummaryDelta d;
  ASSERT_TRUE(ComputeDelta(from, Next(from, 20, rng), &d).ok());
  const auto expect_out_of_range = [&](Summary base, const char* what) {
    const Summary before = base;
    const Status st = ApplyDelta(d, &base);
    EXPECT_TRUE(st.IsOutOfRange()) << what << ": " << st.ToString();
    testing_util::ExpectSameSummary(base, before);
  };
  Summary base = from;
  base.version = 9;
  expect_out_of_range(base, "older base");
  base = from;
  base.version = 11;
  expect_out_of_range(base, "newer base");
  base = from;
  base.epoch = 8;
  expect_out_of_range(base, "epoch");
  base = from;
  base.origin = "elsewhere";
  expect_out_of_range(base, "origin");
  base = from;
  base.filter = FilterWithFill(13, 1, 0.02, 4);
  expect_out_of_range(base, "size");
  base = from;
  base.filter = FilterWithFill(12, 2, 0.02, 4);
  expect_out_of_range(base, "k");
  base = from;
  base.hash_scheme = HashScheme::kSquidDigest;
  expect_out_of_range(base, "hash scheme");
  base = from;
  base.key_scheme = KeyScheme::kRaw;
  expect_out_of_range(base, "key scheme");

  base = from;
  base.version = 9;
  const Status st = ApplyDelta(d, &base);
  EXPECT_EQ(st.message(),
            "delta from 'node-a.example:7000' epoch '7' version '10' does not apply to "
            "'node-a.example:7000' epoch '7' version '9'");
}

TEST(SummaryDelta, DigestMismatchIsCorruptionAndLeavesTheBaseAlone) {
  std::mt19937_64 rng(5);
  const Summary from = MakeSummary(FilterWithFill(12, 1, 0.02, 4), 10);
  SummaryDelta d;
  ASSERT_TRUE(ComputeDelta(from, Next(from, 20, rng), &d).ok());
  // A base whose bits differ from the sender's (same identity): the result cannot match.
  Summary drifted = from;
  drifted.filter.FlipBit(7);
  const Summary before = drifted;
  Status st = ApplyDelta(d, &drifted);
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  testing_util::ExpectSameSummary(drifted, before);
  // A delta missing one flip.
  SummaryDelta short_delta = d;
  short_delta.flipped.pop_back();
  Summary held = from;
  EXPECT_TRUE(ApplyDelta(short_delta, &held).IsCorruption());
  testing_util::ExpectSameSummary(held, from);
}

TEST(SummaryDelta, PositionsMustBeStrictlyAscendingBelowTheSize) {
  const Summary from = MakeSummary(FilterWithFill(8, 1, 0.02, 4), 1);
  std::mt19937_64 rng(1);
  SummaryDelta d;
  ASSERT_TRUE(ComputeDelta(from, Next(from, 0, rng), &d).ok());
  std::string bytes;
  for (std::vector<uint64_t> bad : std::vector<std::vector<uint64_t>>{{5, 5}, {9, 2}, {256}}) {
    d.flipped = bad;
    EXPECT_TRUE(EncodeDelta(d, &bytes).IsInvalidArgument());
    Summary held = from;
    EXPECT_TRUE(ApplyDelta(d, &held).IsInvalidArgument());
  }
  d.flipped = {1};
  d.version = d.base_version;
  EXPECT_TRUE(EncodeDelta(d, &bytes).IsInvalidArgument());
}

// The O(flips) form carries the digest along a chain of deltas and refuses a wrong one.
TEST(SummaryDelta, CarriedDigestFollowsAChain) {
  std::mt19937_64 rng(8);
  Summary sender = MakeSummary(FilterWithFill(14, 1, 0.01, 2), 1);
  Summary held = sender;
  uint64_t digest = FilterDigest(held.filter);
  for (int step = 0; step < 50; ++step) {
    const Summary next = Next(sender, 1 + static_cast<int>(rng() % 40), rng);
    SummaryDelta d;
    ASSERT_TRUE(ComputeDelta(sender, next, &d).ok());
    ASSERT_TRUE(ApplyDelta(WireRoundTrip(d), &held, &digest).ok());
    EXPECT_EQ(digest, FilterDigest(held.filter));
    sender = next;
  }
  EXPECT_TRUE(held.filter == sender.filter);
  const Summary next = Next(sender, 3, rng);
  SummaryDelta d;
  ASSERT_TRUE(ComputeDelta(sender, next, &d).ok());
  uint64_t wrong = digest ^ 1;
  EXPECT_TRUE(ApplyDelta(d, &held, &wrong).IsCorruption());
  EXPECT_EQ(wrong, digest ^ 1);
}

}  // namespace
}  // namespace peerbloom
