#include "peerbloom/publish_policy.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace peerbloom {
namespace {

constexpr uint64_t kBits = uint64_t{1} << 20;  // 5 % of it is far above any batch here

TEST(PublishPolicy, NothingPendingWaits) {
  PublishPolicy p({0.05, 1000, 2000, 256});
  EXPECT_EQ(p.Decide(0, kBits, 0), PublishAction::kWait);
  EXPECT_EQ(p.Decide(0, kBits, 1000000), PublishAction::kWait);
  EXPECT_EQ(p.NextPublishMs(0, 1000000), INT64_MAX);
}

TEST(PublishPolicy, TheOldestChangeWaitsAtMostTheMaxDelay) {
  PublishPolicy p({0.05, 1000, 2000, 256});
  p.Published(0);
  // A change after a quiet spell is not sent alone at once: it waits for company.
  EXPECT_EQ(p.Decide(1, kBits, 10000), PublishAction::kWait);
  EXPECT_EQ(p.NextPublishMs(1, 10000), 12000);
  // Later changes do not push the deadline back.
  EXPECT_EQ(p.Decide(5, kBits, 11000), PublishAction::kWait);
  EXPECT_EQ(p.NextPublishMs(5, 11000), 12000);
  EXPECT_EQ(p.Decide(5, kBits, 11999), PublishAction::kWait);
  EXPECT_EQ(p.Decide(5, kBits, 12000), PublishAction::kPublish);
  EXPECT_EQ(p.reason(), PublishReason::kMaxDelay);
  p.Published(12000);
  EXPECT_EQ(p.NextPublishMs(0, 12000), INT64_MAX);
  // A change made since the last Decide is decided on at once, so its time is noted.
  EXPECT_EQ(p.NextPublishMs(1, 12400), 12400);
  // The next change starts a new wait from its own time.
  EXPECT_EQ(p.Decide(1, kBits, 12500), PublishAction::kWait);
  EXPECT_EQ(p.NextPublishMs(1, 12500), 14500);
}

TEST(PublishPolicy, AFullBatchGoesAtOnceButAtMostTenPerInterval) {
  PublishPolicy p({0.05, 1000, 2000, 256});
  p.Published(0);
  EXPECT_EQ(p.Decide(255, kBits, 500), PublishAction::kWait);
  EXPECT_EQ(p.Decide(256, kBits, 500), PublishAction::kPublish);
  EXPECT_EQ(p.reason(), PublishReason::kBatch);
  p.Published(500);
  // Another full batch 50 ms later waits until a tenth of the interval has passed.
  EXPECT_EQ(p.Decide(300, kBits, 550), PublishAction::kWait);
  EXPECT_EQ(p.NextPublishMs(300, 550), 600);
  EXPECT_EQ(p.Decide(300, kBits, 600), PublishAction::kPublish);
  EXPECT_EQ(p.reason(), PublishReason::kBatch);
}

TEST(PublishPolicy, TheThresholdFillsABatchOfASmallSummary) {
  PublishPolicy p({0.05, 1000, 2000, 256});
  p.Published(0);
  // 5 % of 1024 bits is 51.2: 51 waits for the max delay, 52 is a full batch.
  EXPECT_EQ(p.Decide(51, 1024, 1000), PublishAction::kWait);
  EXPECT_EQ(p.Decide(52, 1024, 1000), PublishAction::kPublish);
  EXPECT_EQ(p.reason(), PublishReason::kBatch);
}

TEST(PublishPolicy, ZeroMeansTheDefaults) {
  PublishPolicy p({0.05, 1000});
  EXPECT_EQ(p.max_delay_ms(), 2000);  // two gossip intervals
  EXPECT_EQ(p.batch(), kDefaultPublishBatch);
  EXPECT_EQ(p.Decide(1, kBits, 0), PublishAction::kWait);
  EXPECT_EQ(p.NextPublishMs(1, 0), 2000);
  // A cluster that gossips faster publishes sooner.
  EXPECT_EQ(PublishPolicy({0.05, 200}).max_delay_ms(), 400);
  EXPECT_EQ(p.Decide(kDefaultPublishBatch, kBits, 1), PublishAction::kPublish);  // first ever
}

TEST(PublishPolicy, TinyIntervalStillSpacesBatches) {
  PublishPolicy p({0.05, 1, 1, 1});
  p.Published(10);
  EXPECT_EQ(p.Decide(1, kBits, 10), PublishAction::kWait);
  EXPECT_EQ(p.NextPublishMs(1, 10), 11);
}

}  // namespace
}  // namespace peerbloom
