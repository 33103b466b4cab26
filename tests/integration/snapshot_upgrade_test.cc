// A node upgraded across the 2 % design margin, as real processes: its snapshot, in the
// geometry the earlier sizing rule chose for its settings, is restored, answers who-has and
// reaches a peer.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "peerbloom/params.h"
#include "tests/support/cluster_harness.h"

namespace peerbloom::testing {
namespace {

// Whether `observer` lists `id` for every one of `urls`.
bool ListsAll(Node* observer, const std::vector<std::string>& urls, const std::string& id) {
  for (const std::vector<std::string>& ids : observer->WhoHas(urls)) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) return false;
  }
  return true;
}

// A node sized for 10000 keys (exact sizes) has 47 x 2^12 counters under either rule; that is
// also what the earlier rule gave for 10100 keys, where the margin now takes 3 x 2^16. So the
// node restarted at 10100 keys holds the snapshot an upgraded node with unchanged settings
// would find.
TEST(SnapshotUpgrade, AnEarlierRulesGeometryIsRestoredServedAndGossiped) {
  Geometry written, legacy, current;
  ASSERT_TRUE(ChooseGeometry(Profile::kBalanced, 10000, 0.01, &written, SizeSteps::kExact).ok());
  ASSERT_TRUE(
      ChooseLegacyGeometry(Profile::kBalanced, 10100, 0.01, &legacy, SizeSteps::kExact).ok());
  ASSERT_TRUE(ChooseGeometry(Profile::kBalanced, 10100, 0.01, &current, SizeSteps::kExact).ok());
  ASSERT_EQ(written, legacy);
  ASSERT_NE(legacy, current);

  Cluster cluster;
  Node* a = cluster.AddNode("a");
  Node* b = cluster.AddNode("b");
  NodeOptions options_a;
  NodeOptions options_b;
  options_b.capacity = 10000;
  options_b.extra = "filter_sizes = \"exact\"";
  ASSERT_TRUE(a->Start(options_a, {}));
  ASSERT_TRUE(b->Start(options_b, {a}));
  std::vector<std::string> urls;
  for (int n = 0; n < 200; ++n) urls.push_back("http://upgrade.example/" + std::to_string(n));
  ASSERT_TRUE(b->Add(urls));
  ASSERT_TRUE(b->Stop());

  options_b.capacity = 10100;
  ASSERT_TRUE(b->Start(options_b, {a})) << b->log_tail();
  EXPECT_NE(b->log_tail().find("that versions before the 2 % design margin chose for these "
                               "settings; keeping it (this version sizes 196608 counters)"),
            std::string::npos)
      << b->log_tail();
  const json stats = b->Stats();
  EXPECT_EQ(stats["snapshot"]["restored"], true) << stats.dump();
  EXPECT_EQ(stats["snapshot"]["legacy_geometry"], true);
  EXPECT_EQ(stats["filter"]["counters"], legacy.counters());
  EXPECT_EQ(stats["filter"]["items"], urls.size());
  EXPECT_TRUE(ListsAll(b, urls, "b"));
  // The peer takes the new epoch's summary, folded from the restored filter, within its
  // bounds, and lists b for every key from it.
  EXPECT_TRUE(WaitFor(
      [&] {
        bool new_epoch = false;
        for (const json& p : a->Peers()) {
          new_epoch |= p["node_id"] == "b" && p["epoch"] == stats["summary"]["epoch"];
        }
        return new_epoch && ListsAll(a, urls, "b");
      },
      kWaitDeadline))
      << a->Peers().dump();
  EXPECT_EQ(a->Stats()["gossip"]["summaries_out_of_bounds"], 0);
}

}  // namespace
}  // namespace peerbloom::testing
