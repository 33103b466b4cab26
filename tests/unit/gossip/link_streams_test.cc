// LinkStreams: gaps in a sender's numbered summary frames, when they are asked for again, and
// when they are given up.
#include "lib/gossip/link_streams.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "peerbloom/wire.h"

namespace peerbloom {
namespace {

constexpr int64_t kGrace = 100;
constexpr int64_t kRetry = 250;

using Due = std::vector<std::pair<std::string, std::vector<uint64_t>>>;

TEST(LinkStreams, InOrderFramesLeaveNothingToAsk) {
  GossipStats stats;
  LinkStreams s(kGrace, kRetry, &stats);
  for (uint64_t seq = 7; seq < 20; ++seq) EXPECT_FALSE(s.Note("b", 1, seq, 0));
  EXPECT_EQ(s.missing(), 0u);
  EXPECT_EQ(s.NextDueMs(), INT64_MAX);
  EXPECT_TRUE(s.TakeDue(1000).empty());
  EXPECT_EQ(stats.link_gaps, 0u);
}

TEST(LinkStreams, AGapIsAskedForAfterTheGraceAndAgainUntilGivenUp) {
  GossipStats stats;
  LinkStreams s(kGrace, kRetry, &stats);
  s.Note("b", 1, 1, 0);
  s.Note("b", 1, 4, 10);  // 2 and 3 lost
  EXPECT_EQ(stats.link_gaps, 2u);
  EXPECT_EQ(s.NextDueMs(), 10 + kGrace);
  EXPECT_TRUE(s.TakeDue(10 + kGrace - 1).empty());
  EXPECT_EQ(s.TakeDue(10 + kGrace), (Due{{"b", {2, 3}}}));
  EXPECT_EQ(s.NextDueMs(), 10 + kGrace + kRetry);
  EXPECT_TRUE(s.Note("b", 1, 2, 200));  // came again: no second path
  EXPECT_EQ(s.TakeDue(10 + kGrace + kRetry), (Due{{"b", {3}}}));
  for (int ask = 3; ask <= LinkStreams::kMaxAsks; ++ask) {
    EXPECT_EQ(s.missing(), 1u);
    EXPECT_EQ(s.TakeDue(10 + kGrace + (ask - 1) * kRetry), (Due{{"b", {3}}}));
  }
  EXPECT_EQ(s.missing(), 0u);  // asked kMaxAsks times: given up
  EXPECT_TRUE(s.TakeDue(100000).empty());
  EXPECT_EQ(s.NextDueMs(), INT64_MAX);
  EXPECT_TRUE(s.Note("b", 1, 3, 100000));  // a late copy is still no second path
}

TEST(LinkStreams, ANetworkDuplicateIsAgainAndChangesNothing) {
  GossipStats stats;
  LinkStreams s(kGrace, kRetry, &stats);
  s.Note("b", 1, 5, 0);
  EXPECT_TRUE(s.Note("b", 1, 5, 1));
  EXPECT_FALSE(s.Note("b", 1, 6, 2));
  EXPECT_EQ(s.missing(), 0u);
}

// The answer to a request, or the first frames on a new link, may be lost with nothing
// before them on the stream: a first number of at most kFirstFrames shows them.
TEST(LinkStreams, TheLostFirstFramesOfAStreamAreAskedFor) {
  GossipStats stats;
  LinkStreams s(kGrace, kRetry, &stats);
  EXPECT_FALSE(s.Note("b", 1, 3, 0));                              // 1 and 2 lost
  EXPECT_FALSE(s.Note("c", 1, LinkStreams::kFirstFrames + 1, 0));  // begun before: not asked
  EXPECT_FALSE(s.Note("d", 1, 1, 0));
  EXPECT_EQ(stats.link_gaps, 2u);
  EXPECT_EQ(s.TakeDue(kGrace), (Due{{"b", {1, 2}}}));
  EXPECT_TRUE(s.Note("b", 1, 1, 200));  // a resent frame: no second path
  EXPECT_FALSE(s.Note("b", 1, 4, 200));
  EXPECT_EQ(s.TakeDue(kGrace + kRetry), (Due{{"b", {2}}}));
  EXPECT_FALSE(s.Note("b", 2, 2, 600));  // restarted, and its first frame lost: asked for
  EXPECT_EQ(s.missing(), 1u);
}

TEST(LinkStreams, ANewEpochRestartsTheStreamWithoutAsking) {
  GossipStats stats;
  LinkStreams s(kGrace, kRetry, &stats);
  s.Note("b", 1, 10, 0);
  s.Note("b", 1, 12, 0);               // 11 missing
  EXPECT_FALSE(s.Note("b", 2, 1, 5));  // restarted: numbers begin again
  EXPECT_EQ(s.missing(), 0u);
  EXPECT_FALSE(s.Note("b", 2, 2, 6));
  EXPECT_TRUE(s.TakeDue(100000).empty());
}

TEST(LinkStreams, OnlyTheLatestNumbersOfAHugeGapAreAsked) {
  GossipStats stats;
  LinkStreams s(kGrace, kRetry, &stats);
  s.Note("b", 1, 1, 0);
  s.Note("b", 1, 1000000, 0);
  EXPECT_EQ(stats.link_gaps, 999998u);
  const Due due = s.TakeDue(kGrace);
  ASSERT_EQ(due.size(), 1u);
  ASSERT_EQ(due[0].second.size(), kMaxResendSeqs);
  EXPECT_EQ(due[0].second.front(), 1000000 - kMaxResendSeqs);
  EXPECT_EQ(due[0].second.back(), 999999u);
}

TEST(LinkStreams, StreamsAreApartAndForgotten) {
  GossipStats stats;
  LinkStreams s(kGrace, kRetry, &stats);
  s.Note("b", 1, 1, 0);
  s.Note("c", 1, 1, 0);
  s.Note("b", 1, 3, 0);
  s.Note("c", 1, 4, 50);
  EXPECT_EQ(s.missing(), 3u);
  EXPECT_EQ(s.NextDueMs(), kGrace);
  s.Forget("b");
  EXPECT_EQ(s.NextDueMs(), 50 + kGrace);
  EXPECT_EQ(s.TakeDue(50 + kGrace), (Due{{"c", {2, 3}}}));
}

}  // namespace
}  // namespace peerbloom
