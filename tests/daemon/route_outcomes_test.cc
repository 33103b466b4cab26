#include "daemon/observe/route_outcomes.h"

#include <gtest/gtest.h>

#include <map>

namespace peerbloom::daemon {
namespace {

TEST(RouteOutcomes, CountsPerNodeAndInTotal) {
  RouteOutcomes r;
  r.Report("a", RouteOutcome::kHit, 3);
  r.Report("a", RouteOutcome::kFalseHit, 1);
  r.Report("a", RouteOutcome::kUnreachable, 4);
  r.Report("c", RouteOutcome::kHit, 1);
  EXPECT_EQ(r.For("a").routed, 8u);
  EXPECT_EQ(r.For("a").hits, 3u);
  EXPECT_EQ(r.For("a").false_hits, 1u);
  EXPECT_EQ(r.For("a").unreachable, 4u);
  // Outages do not count in the false-hit rate.
  EXPECT_DOUBLE_EQ(r.For("a").FalseHitRate(), 0.25);
  EXPECT_EQ(r.For("x").routed, 0u);
  EXPECT_DOUBLE_EQ(r.For("x").FalseHitRate(), 0.0);
  EXPECT_EQ(r.total().routed, 9u);
  EXPECT_EQ(r.reports(), 4u);
}

TEST(RouteOutcomes, CountsSaturateAndTheRateStaysARate) {
  RouteOutcomes r;
  r.Report("a", RouteOutcome::kFalseHit, UINT64_MAX);
  r.Report("a", RouteOutcome::kFalseHit, UINT64_MAX);
  r.Report("a", RouteOutcome::kHit, 1);
  EXPECT_EQ(r.For("a").false_hits, UINT64_MAX);
  EXPECT_EQ(r.For("a").routed, UINT64_MAX);
  EXPECT_LE(r.For("a").FalseHitRate(), 1.0);
}

TEST(RouteOutcomes, TracksABoundedNumberOfNodes) {
  RouteOutcomes r;
  for (size_t i = 0; i < RouteOutcomes::kMaxNodes + 10; ++i) {
    r.Report(std::to_string(i), RouteOutcome::kHit, 1);
  }
  EXPECT_EQ(r.nodes().size(), RouteOutcomes::kMaxNodes);
  EXPECT_EQ(r.untracked(), 10u);
  EXPECT_EQ(r.total().routed, RouteOutcomes::kMaxNodes + 10);
}

// Names that are not members (invented by a client of the report op) grow nothing per node:
// 4,096 of them once grew /metrics to 540 KB.
TEST(RouteOutcomes, NodesThatAreNotMembersCountInTheTotalsOnly) {
  RouteOutcomes r;
  r.Report("b", RouteOutcome::kHit, 2, /*known=*/true);
  for (int i = 0; i < 5000; ++i)
    r.Report("invented-" + std::to_string(i), RouteOutcome::kHit, 1, false);
  ASSERT_EQ(r.nodes().size(), 1u);
  EXPECT_EQ(r.nodes().begin()->first, "b");
  EXPECT_EQ(r.untracked(), 5000u);
  EXPECT_EQ(r.total().routed, 5002u);
}

// A request that went direct is a false hit when the peer is heard from after it, and an
// unreachable peer when a failure timeout passes without a word from it.
TEST(RouteOutcomes, DirectRequestsAreSettledByThePeersLiveness) {
  RouteOutcomes r;
  std::map<std::string, int64_t, std::less<>> heard = {{"up", 900}, {"down", 500}};
  auto last_heard = [&](std::string_view node) -> std::optional<int64_t> {
    const auto it = heard.find(node);
    if (it == heard.end()) return std::nullopt;
    return it->second;
  };
  r.Direct("up", 1000);
  r.Direct("down", 1000);
  r.Direct("ghost", 1000);  // a name that is no member
  r.Settle(1500, 10000, last_heard);
  EXPECT_EQ(r.pending(), 3u);  // nobody heard from since the requests yet
  heard["up"] = 1200;
  r.Settle(1500, 10000, last_heard);
  EXPECT_EQ(r.For("up").false_hits, 1u);
  EXPECT_EQ(r.pending(), 2u);
  r.Settle(10999, 10000, last_heard);
  EXPECT_EQ(r.pending(), 2u);
  r.Settle(11000, 10000, last_heard);
  EXPECT_EQ(r.pending(), 0u);
  EXPECT_EQ(r.For("down").unreachable, 1u);
  EXPECT_EQ(r.For("ghost").unreachable, 1u);
  EXPECT_EQ(r.total().false_hits, 1u);
  EXPECT_EQ(r.total().unreachable, 2u);
}

TEST(RouteOutcomes, HeldRequestsAreBounded) {
  RouteOutcomes r;
  for (size_t i = 0; i < RouteOutcomes::kMaxPending + 5; ++i) r.Direct("a", 0);
  EXPECT_EQ(r.pending(), RouteOutcomes::kMaxPending);
  EXPECT_EQ(r.For("a").false_hits, 5u);  // settled as reported, the oldest first
}

}  // namespace
}  // namespace peerbloom::daemon
