#include "bench/summary_cache/lru_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <list>
#include <random>

namespace peerbloom::sim {
namespace {

TEST(LruCache, EvictsLeastRecentlyUsed) {
  LruCache c(3);
  EXPECT_EQ(c.Insert(1), std::nullopt);
  EXPECT_EQ(c.Insert(2), std::nullopt);
  EXPECT_EQ(c.Insert(3), std::nullopt);
  EXPECT_TRUE(c.Touch(1));  // 2 is now the oldest
  EXPECT_EQ(c.Insert(4), std::optional<uint32_t>(2));
  EXPECT_EQ(c.Order(), (std::vector<uint32_t>{4, 1, 3}));
  EXPECT_FALSE(c.Touch(2));
  EXPECT_EQ(c.size(), 3u);
}

TEST(LruCache, CapacityOne) {
  LruCache c(1);
  EXPECT_EQ(c.Insert(7), std::nullopt);
  EXPECT_EQ(c.Insert(8), std::optional<uint32_t>(7));
  EXPECT_TRUE(c.Contains(8));
  EXPECT_FALSE(c.Contains(7));
}

// Against a plain list kept most recent first, over random requests: same hits, same
// evictions, same order after every step.
TEST(LruCache, MatchesReferenceExactly) {
  for (size_t capacity : {1, 2, 5, 64}) {
    LruCache c(capacity);
    std::list<uint32_t> ref;
    std::mt19937_64 rng(capacity);
    for (int i = 0; i < 20000; ++i) {
      const uint32_t o = static_cast<uint32_t>(rng() % (3 * capacity + 1));
      auto it = std::find(ref.begin(), ref.end(), o);
      const bool hit = it != ref.end();
      ASSERT_EQ(c.Touch(o), hit);
      if (hit) {
        ref.erase(it);
        ref.push_front(o);
      } else {
        std::optional<uint32_t> want;
        if (ref.size() == capacity) {
          want = ref.back();
          ref.pop_back();
        }
        ref.push_front(o);
        ASSERT_EQ(c.Insert(o), want);
      }
      ASSERT_EQ(c.Order(), std::vector<uint32_t>(ref.begin(), ref.end()));
    }
  }
}

}  // namespace
}  // namespace peerbloom::sim
