#include "daemon/route_outcomes.h"

#include <gtest/gtest.h>

namespace peerbloom::daemon {
namespace {

TEST(RouteOutcomes, CountsPerNodeAndInTotal) {
  RouteOutcomes r;
  r.Report("a", true, 3);
  r.Report("a", false, 1);
  r.Report("c", true, 1);
  EXPECT_EQ(r.For("a").routed, 4u);
  EXPECT_EQ(r.For("a").hits, 3u);
  EXPECT_EQ(r.For("a").false_hits, 1u);
  EXPECT_DOUBLE_EQ(r.For("a").FalseHitRate(), 0.25);
  EXPECT_EQ(r.For("x").routed, 0u);
  EXPECT_DOUBLE_EQ(r.For("x").FalseHitRate(), 0.0);
  EXPECT_EQ(r.total().routed, 5u);
  EXPECT_EQ(r.reports(), 3u);
}

TEST(RouteOutcomes, TracksABoundedNumberOfNodes) {
  RouteOutcomes r;
  for (size_t i = 0; i < RouteOutcomes::kMaxNodes + 10; ++i) r.Report(std::to_string(i), true, 1);
  EXPECT_EQ(r.nodes().size(), RouteOutcomes::kMaxNodes);
  EXPECT_EQ(r.untracked(), 10u);
  EXPECT_EQ(r.total().routed, RouteOutcomes::kMaxNodes + 10);
}

}  // namespace
}  // namespace peerbloom::daemon
