#include "daemon/observe/log_limiter.h"

#include <gtest/gtest.h>

namespace peerbloom::daemon {
namespace {

TEST(LogLimiter, AdmitsABurstPerWindowAndReportsWhatItHeldBack) {
  LogLimiter limiter(/*burst=*/2, /*window_ms=*/1000);
  uint64_t suppressed = 99;
  EXPECT_TRUE(limiter.Allow(0, &suppressed));
  EXPECT_EQ(suppressed, 0u);
  EXPECT_TRUE(limiter.Allow(10, &suppressed));
  EXPECT_FALSE(limiter.Allow(20, &suppressed));
  EXPECT_FALSE(limiter.Allow(999, &suppressed));
  EXPECT_TRUE(limiter.Allow(1000, &suppressed)) << "a new window";
  EXPECT_EQ(suppressed, 2u);
  EXPECT_TRUE(limiter.Allow(1001, &suppressed));
  EXPECT_EQ(suppressed, 0u);
}

}  // namespace
}  // namespace peerbloom::daemon
