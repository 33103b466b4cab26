#include "peerbloom/publish_policy.h"

#include <gtest/gtest.h>

namespace peerbloom {
namespace {

TEST(PublishPolicy, NothingPendingWaits) {
  PublishPolicy p({0.05, 1000});
  EXPECT_EQ(p.Decide(0, 1024, 0), PublishAction::kWait);
  EXPECT_EQ(p.Decide(0, 1024, 1000000), PublishAction::kWait);
}

TEST(PublishPolicy, PublishesHalfAnIntervalApart) {
  PublishPolicy p({0.05, 1000});
  EXPECT_EQ(p.Decide(1, 1024, 0), PublishAction::kPublish);  // never published yet
  p.Published(100);
  EXPECT_EQ(p.next_publish_ms(), 600);
  EXPECT_EQ(p.Decide(1, 1024, 599), PublishAction::kWait);
  EXPECT_EQ(p.Decide(1, 1024, 600), PublishAction::kPublish);
}

TEST(PublishPolicy, ManyPendingPositionsFlushAtOnce) {
  PublishPolicy p({0.05, 1000});
  p.Published(0);
  // 5 % of 1024 bits is 51.2: 51 waits for the timer, 52 goes now.
  EXPECT_EQ(p.Decide(51, 1024, 1), PublishAction::kWait);
  EXPECT_EQ(p.Decide(52, 1024, 1), PublishAction::kPublishAndFlush);
}

TEST(PublishPolicy, TinyIntervalStillAdvancesTime) {
  PublishPolicy p({0.05, 1});
  p.Published(10);
  EXPECT_EQ(p.next_publish_ms(), 11);
}

}  // namespace
}  // namespace peerbloom
