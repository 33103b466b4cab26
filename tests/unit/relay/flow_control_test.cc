#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "peerbloom/relay.h"

namespace peerbloom {
namespace {

TEST(SeenSet, RemembersExactlyUntilTheWindowEnds) {
  SeenSet seen(1000, 100);
  EXPECT_TRUE(seen.Insert("a", 5, 0));
  EXPECT_FALSE(seen.Insert("a", 5, 10));
  EXPECT_TRUE(seen.Contains("a", 5));
  EXPECT_FALSE(seen.Contains("a", 4));
  EXPECT_FALSE(seen.Contains("b", 5));
  EXPECT_TRUE(seen.Insert("a", 7, 500));
  seen.Expire(1000);
  EXPECT_EQ(seen.size(), 1u);
  // Expired ids and everything of the origin below them read as seen (stale).
  EXPECT_TRUE(seen.Contains("a", 5));
  EXPECT_TRUE(seen.Contains("a", 3));
  EXPECT_FALSE(seen.Insert("a", 4, 1000));
  EXPECT_FALSE(seen.Contains("a", 6));
  EXPECT_TRUE(seen.Insert("a", 6, 1000));
}

TEST(SeenSet, CapacityExpiresTheOldestEarly) {
  SeenSet seen(1000000, 2);
  EXPECT_TRUE(seen.Insert("a", 1, 0));
  EXPECT_TRUE(seen.Insert("b", 1, 0));
  EXPECT_TRUE(seen.Insert("c", 1, 0));
  EXPECT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen.evicted_early(), 1u);
  EXPECT_TRUE(seen.Contains("a", 1));  // as the origin's floor
}

// What a restarted node reads back is exactly what it read as seen: every id of 0..40 of each
// origin answers the same before and after, and new ids are still taken.
TEST(SeenSet, SaveAndRestoreKeepExactlyWhatWasSeen) {
  SeenSet seen(1000, 100);
  for (uint64_t id : {3, 4, 5, 9, 10, 20}) ASSERT_TRUE(seen.Insert("a", id, 0));
  ASSERT_TRUE(seen.Insert("a", 30, 800));
  ASSERT_TRUE(seen.Insert(std::string("b\0\xff", 3), 7, 900));
  seen.Expire(1000);  // a's ids of time 0 expire: its floor is 20
  const std::vector<SeenSet::SavedOrigin> saved = seen.Save();
  ASSERT_EQ(saved.size(), 2u);
  EXPECT_EQ(saved[0].origin, "a");
  EXPECT_EQ(saved[0].floor, 20u);
  EXPECT_EQ(saved[0].ranges, (std::vector<std::pair<uint64_t, uint64_t>>{{30, 30}}));

  SeenSet restored(1000, 100);
  restored.Restore(saved);
  for (const std::string& origin : {std::string("a"), std::string("b\0\xff", 3)}) {
    for (uint64_t id = 0; id <= 40; ++id) {
      EXPECT_EQ(restored.Contains(origin, id), seen.Contains(origin, id)) << id;
    }
  }
  EXPECT_FALSE(restored.Insert("a", 30, 2000));  // restored: a duplicate
  EXPECT_TRUE(restored.Insert("a", 31, 2000));
  EXPECT_TRUE(restored.Insert("b", 7, 2000));  // another origin
  // Saved again, the restored ranges and the new ids merge.
  const std::vector<SeenSet::SavedOrigin> again = restored.Save();
  EXPECT_EQ(again[0].ranges, (std::vector<std::pair<uint64_t, uint64_t>>{{30, 31}}));
}

TEST(OriginMeter, ThrottlesAnOriginOverItsRate) {
  FlowOptions o;
  o.max_per_window = 50;
  o.window_ms = 1000;
  ASSERT_TRUE(ValidateFlowOptions(o).ok());
  OriginMeter meter(o, DeriveIndexKey(""));
  int admitted = 0;
  for (int i = 0; i < 200; ++i) admitted += meter.Admit("noisy", 10);
  EXPECT_EQ(admitted, 50);
  // Quiet origins are counted apart: with 4096 counters x 3 and one noisy origin, a quiet
  // origin is throttled only if all 3 of its counters collide with the noisy one's.
  int quiet = 0;
  for (int n = 0; n < 100; ++n) quiet += meter.Admit("quiet" + std::to_string(n), 10);
  EXPECT_EQ(quiet, 100);
}

TEST(OriginMeter, WindowSlides) {
  FlowOptions o;
  o.max_per_window = 10;
  o.window_ms = 1000;
  o.buckets = 10;
  OriginMeter meter(o, DeriveIndexKey(""));
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(meter.Admit("a", 0));
  EXPECT_FALSE(meter.Admit("a", 500));
  EXPECT_EQ(meter.Estimate("a", 900), 10u);
  // The generation of time 0 leaves the window after one window length.
  EXPECT_EQ(meter.Estimate("a", 1000), 0u);
  EXPECT_TRUE(meter.Admit("a", 1000));
}

TEST(OriginMeter, ValidatesOptions) {
  FlowOptions o;
  o.buckets = 0;
  EXPECT_EQ(ValidateFlowOptions(o).ToString(), "invalid argument: flow buckets '0' out of range");
  o = FlowOptions();
  o.window_ms = 0;
  EXPECT_EQ(ValidateFlowOptions(o).ToString(), "invalid argument: flow window must be positive");
}

}  // namespace
}  // namespace peerbloom
