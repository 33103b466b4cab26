// The daemon reads Squid's route log itself (`squid_route_log`) and tells a false hit (the
// request went direct while the peer was up) from an unreachable peer (it went direct while
// the peer was down): a stopped peer's requests do not count in its false-hit rate. Lines are
// written as Squid writes them, in the `peerbloom` logformat.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>

#include "tests/support/cluster_harness.h"

namespace peerbloom::testing {
namespace {

std::string Now() {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  return std::to_string(ms / 1000) + "." + std::to_string(1000 + ms % 1000).substr(1);
}

json PeerRouting(Node* observer, const std::string& id) {
  for (const json& p : observer->Peers()) {
    if (p.value("node_id", "") == id) return p["routing"];
  }
  return json();
}

TEST(RouteLog, FalseHitsAreSeparatedFromAnUnreachablePeer) {
  Cluster cluster;
  Node* a = cluster.AddNode("A");
  Node* b = cluster.AddNode("B");
  Node* c = cluster.AddNode("C");
  const std::string log = cluster.dir() + "/routes.log";
  std::ofstream(log) << Now() << " cache-a TCP_MISS/200 HIER_DIRECT/10.0.0.1 http://before/\n";
  NodeOptions options;
  options.failure_timeout_ms = 1500;
  NodeOptions ob = options;
  ob.extra = "squid_route_log = \"" + log + "\"\nsquid_peer_names = { A = \"cache-a\" }\n";
  ASSERT_TRUE(a->Start(options, {})) << a->log_tail();
  ASSERT_TRUE(b->Start(ob, {a})) << b->log_tail();
  ASSERT_TRUE(c->Start(options, {a})) << c->log_tail();
  ASSERT_TRUE(WaitFor([&] { return SeesAlive(b, "A") && SeesAlive(b, "C"); }, kWaitDeadline));

  // A is up: two hits and one false hit (a request that went direct).
  {
    std::ofstream out(log, std::ios::app);
    out << Now() << " cache-a TCP_MISS/200 FIRSTUP_PARENT/127.0.0.11 http://x/1\n"
        << Now() << " cache-a TCP_MISS/200 FIRSTUP_PARENT/127.0.0.11 http://x/2\n"
        << Now() << " cache-a TCP_MISS/200 HIER_DIRECT/10.0.0.1 http://x/3\n"
        << Now() << " - TCP_MISS/200 HIER_DIRECT/10.0.0.1 http://x/4\n"
        << Now()
        << " C TCP_MISS/200 HIER_DIRECT/10.0.0.1 http://x/5\n"
        // Names that are no member, one of them not UTF-8: counted, never a row of their own.
        << Now() << " stranger TCP_MISS/200 FIRSTUP_PARENT/127.0.0.99 http://x/8\n"
        << Now() << " caf\xff\xfe TCP_MISS/200 HIER_DIRECT/10.0.0.1 http://x/9\n";
  }
  json routing;
  ASSERT_TRUE(WaitFor(
      [&] {
        routing = PeerRouting(b, "A");
        return routing.value("hits", 0) == 2 && routing.value("false_hits", 0) == 1;
      },
      kWaitDeadline))
      << routing.dump() << b->Stats()["routing"].dump();
  // C is named by its node id (no squid_peer_names entry) and was up too.
  ASSERT_TRUE(
      WaitFor([&] { return PeerRouting(b, "C").value("false_hits", 0) == 1; }, kWaitDeadline));

  // A stops; requests routed to it before B notices go direct: unreachable, not false hits.
  ASSERT_TRUE(a->Stop());
  std::ofstream(log, std::ios::app)
      << Now() << " cache-a TCP_MISS/200 HIER_DIRECT/10.0.0.1 http://x/6\n"
      << Now() << " cache-a TCP_MISS/200 HIER_DIRECT/10.0.0.1 http://x/7\n";
  ASSERT_TRUE(
      WaitFor([&] { return PeerRouting(b, "A").value("unreachable", 0) == 2; }, kWaitDeadline))
      << PeerRouting(b, "A").dump();
  routing = PeerRouting(b, "A");
  EXPECT_EQ(routing["hits"], 2);
  EXPECT_EQ(routing["false_hits"], 1);
  EXPECT_EQ(routing["routed"], 5);
  EXPECT_DOUBLE_EQ(routing["false_hit_rate"].get<double>(), 1.0 / 3.0);
  const json stats = b->Stats()["routing"];
  EXPECT_EQ(stats["pending"], 0);
  EXPECT_EQ(stats["log"]["routed"], 8);  // the line before the start is not read
  EXPECT_EQ(stats["log"]["unnamed"], 3);
  EXPECT_EQ(stats["unreachable"], 3);  // A's two, and the stranger's direct request
  EXPECT_EQ(stats["untracked"], 2);
  ASSERT_EQ(stats["peers"].size(), 2u) << stats.dump();
  EXPECT_EQ(stats["peers"][0]["node_id"], "A");
  EXPECT_EQ(stats["peers"][1]["node_id"], "C");
}

}  // namespace
}  // namespace peerbloom::testing
