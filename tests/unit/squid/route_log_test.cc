#include "peerbloom/squid_route_log.h"

#include <gtest/gtest.h>

namespace peerbloom {
namespace {

TEST(RouteLog, ReadsWhereARoutedRequestWasServed) {
  RouteLogEntry e =
      ParseRouteLogLine("1795327317.643 cache-a TCP_MISS/200 FIRSTUP_PARENT/127.0.0.11 http://x/");
  EXPECT_EQ(e.outcome, RouteLogOutcome::kPeer);
  EXPECT_EQ(e.peer, "cache-a");
  EXPECT_EQ(e.unix_ms, 1795327317643);
  e = ParseRouteLogLine("1795327317.5 cache-c TCP_MISS/200 HIER_DIRECT/127.0.0.40 http://x/");
  EXPECT_EQ(e.outcome, RouteLogOutcome::kDirect);
  EXPECT_EQ(e.peer, "cache-c");
  EXPECT_EQ(e.unix_ms, 1795327317500);
  e = ParseRouteLogLine("1 cache-a,cache-c TCP_MISS/200 ANY_OLD_PARENT/h u");
  EXPECT_EQ(e.outcome, RouteLogOutcome::kPeer);
  EXPECT_EQ(e.peer, "cache-a");  // several values of the note: the first
  EXPECT_EQ(e.unix_ms, 1000);
}

TEST(RouteLog, LinesThatWereNotRoutedOrAreNotLogLines) {
  for (const char* line :
       {"1.000 cache-a TCP_MEM_HIT/200 HIER_NONE/- http://x/",
        "1.000 - TCP_MISS/200 HIER_DIRECT/127.0.0.1 http://x/", "", "garbage",
        "1.0 cache-a TCP_MISS/200"}) {
    const RouteLogEntry e = ParseRouteLogLine(line);
    EXPECT_EQ(e.outcome, RouteLogOutcome::kNotRouted) << line;
    EXPECT_EQ(e.peer, "") << line;
  }
  // A time that is not seconds.millis reads as 0; the outcome still counts.
  const RouteLogEntry e = ParseRouteLogLine("x.1 cache-a TCP_MISS/200 HIER_DIRECT/h u");
  EXPECT_EQ(e.unix_ms, 0);
  EXPECT_EQ(e.outcome, RouteLogOutcome::kDirect);
}

}  // namespace
}  // namespace peerbloom
