// LocalNode: publication checks, deltas collapsed between rounds, what the node announces.
#include "lib/gossip/local_node.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/gossip/part_options.h"

namespace peerbloom {
namespace {

GossipOptions Options() { return test::PartOptions("a"); }

// Epoch 4, version 1, an empty filter of 1024 bits and k = 2.
Summary Full() {
  Summary s;
  s.filter = BloomFilter(10, 2);
  s.origin = "a";
  s.epoch = 4;
  s.version = 1;
  return s;
}

SummaryDelta Flip(const Summary& s, uint64_t base, std::vector<uint64_t> positions,
                  uint64_t digest) {
  SummaryDelta d;
  d.origin = s.origin;
  d.epoch = s.epoch;
  d.base_version = base;
  d.version = base + 1;
  d.key_scheme = s.key_scheme;
  d.k = s.filter.k();
  d.log2_bits = s.filter.log2_bits();
  for (uint64_t p : positions) digest ^= PositionDigest(p);
  d.flipped = std::move(positions);
  d.result_digest = digest;
  return d;
}

TEST(LocalNode, RefusesSummariesOfOthersAndDeltasThatDoNotFit) {
  LocalNode n(Options());
  Summary other = Full();
  other.origin = "b";
  EXPECT_FALSE(n.PublishFull(other));
  EXPECT_FALSE(n.has_summary());
  const Summary s = Full();
  const uint64_t d0 = FilterDigest(s.filter);
  EXPECT_FALSE(n.PublishDelta(Flip(s, 1, {3}, d0)));  // nothing held yet
  ASSERT_TRUE(n.PublishFull(s));
  EXPECT_FALSE(n.PublishDelta(Flip(s, 2, {3}, d0)));      // wrong base
  EXPECT_FALSE(n.PublishDelta(Flip(s, 1, {1024}, d0)));   // out of range
  EXPECT_FALSE(n.PublishDelta(Flip(s, 1, {3}, d0 ^ 1)));  // wrong result digest
  EXPECT_TRUE(n.PublishDelta(Flip(s, 1, {3}, d0)));
  EXPECT_EQ(n.summary().version, 2u);
}

TEST(LocalNode, AnnouncesAFullSummaryThenOneDeltaOfTheNetFlips) {
  LocalNode n(Options());
  const Summary s = Full();
  ASSERT_TRUE(n.PublishFull(s));
  EXPECT_TRUE(n.TakeFresh());
  EXPECT_FALSE(n.Entry().has_summary);  // a pending full summary is not announced
  WireType type;
  std::string bytes;
  ASSERT_TRUE(n.PendingUpdate(&type, &bytes));
  EXPECT_EQ(type, WireType::kFullSummary);
  n.MarkAnnounced(type, bytes, 50);
  EXPECT_FALSE(n.PendingUpdate(&type, &bytes));
  EXPECT_EQ(n.Entry().version, 1u);

  uint64_t digest = FilterDigest(s.filter);
  ASSERT_TRUE(n.PublishDelta(Flip(s, 1, {3, 7}, digest)));
  digest ^= PositionDigest(3) ^ PositionDigest(7);
  ASSERT_TRUE(n.PublishDelta(Flip(s, 2, {7, 9}, digest)));
  EXPECT_EQ(n.Entry().version, 1u);  // only announced versions are named
  ASSERT_TRUE(n.PendingUpdate(&type, &bytes));
  ASSERT_EQ(type, WireType::kDelta);
  SummaryDelta sent;
  ASSERT_TRUE(DecodeDelta(bytes, DecodeLimits(), &sent).ok());
  EXPECT_EQ(sent.base_version, 1u);
  EXPECT_EQ(sent.version, 3u);
  EXPECT_EQ(sent.flipped, (std::vector<uint64_t>{3, 9}));  // 7 flipped twice: no change
  n.MarkAnnounced(type, bytes, 60);
  EXPECT_EQ(n.announced_version(), 3u);
  EXPECT_EQ(n.announced_ms(), 60);
  EXPECT_EQ(n.DeltasFrom(1).size(), 1u);
  EXPECT_TRUE(n.DeltasFrom(2).empty());
}

TEST(LocalNode, HeartbeatAdvancesOnlyByItsOwnBeats) {
  LocalNode n(Options());
  n.Start();
  EXPECT_EQ(n.heartbeat(), 1u);
  for (int i = 0; i < 5; ++i) n.Beat();
  EXPECT_EQ(n.heartbeat(), 6u);
  EXPECT_TRUE(n.TakeFresh());
  EXPECT_FALSE(n.TakeFresh());
  EXPECT_EQ(n.Entry().heartbeat, 6u);
  EXPECT_TRUE(n.Entry().beat_sig.empty());  // no signer: unsigned beats
}

}  // namespace
}  // namespace peerbloom
