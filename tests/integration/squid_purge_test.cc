// Cluster-wide purge against real Squids (scripts/squid-testbed.sh): daemons A and B each
// follow their own Squid's store.log and send PURGEs to it; C has no Squid. Relay links form
// a triangle. `peerbloom purge URL --cluster` at C reaches all three: A, whose filter holds the
// URL, purges it from its Squid (HTTP 200, and Squid no longer holds it); C, whose filter is
// empty, skips it; B either skips it or, on a false positive of its filter, finds it is not
// in its Squid (404). Skipped where Squid is not installed or cannot be started (not root).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tests/support/cluster_harness.h"
#include "tests/support/process.h"
#include "tests/support/squid_testbed.h"

namespace peerbloom::testing {
namespace {

constexpr int kCached = 10;

TEST(SquidPurge, ClusterPurgeRunsWhereTheFilterMayHoldTheUrl) {
  if (const std::string why = SquidTestbed::SkipReason(); !why.empty()) GTEST_SKIP() << why;
  SquidTestbed bed_a, bed_b;
  SquidTestbedOptions options;
  options.name = "squidpurge";
  std::string failed = bed_a.Start(options);
  ASSERT_TRUE(failed.empty()) << failed;
  failed = bed_b.Start(options);
  ASSERT_TRUE(failed.empty()) << failed;
  ASSERT_EQ(bed_a.Run("fill " + bed_a.addr() + " " + std::to_string(kCached) + " a"), 0);
  ASSERT_EQ(bed_b.Run("fill " + bed_b.addr() + " " + std::to_string(kCached) + " b"), 0);
  const std::string url = bed_a.origin() + "/a3.html";

  Cluster cluster;
  Node* a = cluster.AddNode("A");
  Node* b = cluster.AddNode("B");
  Node* c = cluster.AddNode("C");
  auto options_for = [](const SquidTestbed* bed, const std::string& links) {
    NodeOptions o;
    o.key_scheme = "squid-md5";
    o.extra = "relay_links = [" + links + "]\n";
    if (bed != nullptr) {
      o.extra += "purge_squid = \"" + bed->addr() + ":3128\"\n[[feeds]]\npath = \"" + bed->root() +
                 "/" + bed->addr() + "/logs/store.log\"\nformat = \"squid-store-log\"\n";
    }
    return o;
  };
  ASSERT_TRUE(a->Start(options_for(&bed_a, "\"B\", \"C\""), {})) << a->log_tail();
  ASSERT_TRUE(b->Start(options_for(&bed_b, "\"A\", \"C\""), {a})) << b->log_tail();
  ASSERT_TRUE(c->Start(options_for(nullptr, "\"A\", \"B\""), {a})) << c->log_tail();
  ASSERT_TRUE(WaitFor(
      [&] {
        return a->Stats()["filter"]["items"] == kCached &&
               b->Stats()["filter"]["items"] == kCached && a->Stats()["relay"]["links_up"] == 2 &&
               b->Stats()["relay"]["links_up"] == 2 && c->Stats()["relay"]["links_up"] == 2 &&
               SeesAlive(c, "A") && SeesAlive(c, "B");
      },
      kWaitDeadline))
      << a->Stats().dump() << "\n"
      << a->log_tail();

  const ProcessResult r = RunCli("--json --timeout 60000 --control ipc://" + cluster.dir() +
                                     "/C/control.sock purge --cluster --wait 30000 " + url,
                                 Merged());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::map<std::string, json> results;
  size_t start = 0;
  while (start < r.out.size()) {
    const size_t end = r.out.find('\n', start);
    const json j = json::parse(r.out.substr(start, end - start));
    results[j["node"]] = j;
    start = end + 1;
  }
  ASSERT_EQ(results.size(), 3u) << r.out;
  EXPECT_EQ(results["A"]["may_hold"], true) << r.out;
  EXPECT_EQ(results["A"]["action"], "squid") << r.out;
  EXPECT_EQ(results["A"]["status"], 200) << r.out;
  EXPECT_EQ(results["A"]["purged"], true) << r.out;
  EXPECT_EQ(results["C"]["action"], "skipped") << "C's filter is empty: " << r.out;
  // B's Squid never held the URL: skipped, or a filter false positive answered 404.
  if (results["B"]["action"] == "skipped") {
    EXPECT_EQ(results["B"]["may_hold"], false) << r.out;
  } else {
    EXPECT_EQ(results["B"]["action"], "squid") << r.out;
    EXPECT_EQ(results["B"]["status"], 404) << r.out;
  }
  for (const auto& [node, result] : results) {
    EXPECT_EQ(result["purge_origin"], "C") << r.out;
    EXPECT_EQ(result["url"], url) << r.out;
  }
  // Squid A no longer holds the URL (a second PURGE answers 404), and its store.log RELEASE
  // takes it out of A's filter.
  EXPECT_NE(bed_a.Run("purge " + bed_a.addr() + " " + url), 0);
  EXPECT_TRUE(WaitFor([&] { return a->Stats()["filter"]["items"] == kCached - 1; }, kWaitDeadline))
      << a->Stats()["filter"].dump();
  EXPECT_EQ(b->Stats()["filter"]["items"], kCached);
  EXPECT_EQ(c->Stats()["relay"]["purges"], 1);
  bed_a.Stop(/*keep_files=*/HasFailure());
  bed_b.Stop(/*keep_files=*/HasFailure());
}

}  // namespace
}  // namespace peerbloom::testing
