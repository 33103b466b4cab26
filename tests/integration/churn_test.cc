// Churn: 10,000 random adds and removes spread over 3 daemons. Once every node holds every
// other node's latest summary, no key still present anywhere may be missing from any node's
// who-has answer (no false negatives), checked with one batched who-has per node.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "tests/support/cluster_harness.h"

namespace peerbloom::testing {
namespace {

// True when every node holds, for every other node, the summary version that node last
// published.
bool SummariesConverged(const std::vector<Node*>& nodes) {
  std::map<std::string, std::pair<uint64_t, uint64_t>> own;  // id -> (epoch, version)
  for (Node* n : nodes) {
    const json s = n->Stats();
    if (!s.contains("summary")) return false;
    own[n->name()] = {s["summary"]["epoch"], s["summary"]["version"]};
    if (s["summary"]["pending"] != 0) return false;
  }
  for (Node* observer : nodes) {
    size_t matched = 0;
    for (const json& p : observer->Peers()) {
      auto it = own.find(p.value("node_id", ""));
      if (it == own.end()) continue;
      if (p.value("alive", false) && p["epoch"] == it->second.first &&
          p["version"] == it->second.second) {
        ++matched;
      }
    }
    if (matched != nodes.size() - 1) return false;
  }
  return true;
}

TEST(Churn, NoFalseNegativesAfterTenThousandRandomChanges) {
  Cluster cluster;
  NodeOptions options;
  std::vector<Node*> nodes = {cluster.AddNode("a"), cluster.AddNode("b"), cluster.AddNode("c")};
  ASSERT_TRUE(nodes[0]->Start(options, {}));
  ASSERT_TRUE(nodes[1]->Start(options, {nodes[0]}));
  ASSERT_TRUE(nodes[2]->Start(options, {nodes[0]}));

  constexpr int kOps = 10000;
  constexpr int kUrls = 4000;
  std::mt19937_64 rng(20240611);
  // Per node: the ops in order, and how many times each URL is held.
  std::vector<std::vector<std::pair<bool, std::string>>> ops(nodes.size());
  std::vector<std::map<std::string, int>> held(nodes.size());
  for (int i = 0; i < kOps; ++i) {
    const size_t n = rng() % nodes.size();
    auto& h = held[n];
    const bool remove = !h.empty() && rng() % 10 < 4;
    std::string url;
    if (remove) {
      auto it = h.begin();
      std::advance(it, static_cast<long>(rng() % h.size()));
      url = it->first;
      if (--it->second == 0) h.erase(it);
    } else {
      url = "http://churn.example/" + std::to_string(rng() % kUrls);
      ++h[url];
    }
    ops[n].emplace_back(!remove, url);
  }
  // Runs of the same operation go in one batched request; order within a node is kept.
  for (size_t n = 0; n < nodes.size(); ++n) {
    size_t i = 0;
    while (i < ops[n].size()) {
      std::vector<std::string> run;
      const bool add = ops[n][i].first;
      while (i < ops[n].size() && ops[n][i].first == add) run.push_back(ops[n][i++].second);
      ASSERT_TRUE(add ? nodes[n]->Add(run) : nodes[n]->Remove(run));
    }
  }
  ASSERT_TRUE(WaitFor([&] { return SummariesConverged(nodes); }, 2 * kWaitDeadline))
      << nodes[0]->Peers().dump(1);

  std::vector<std::string> present;
  for (const auto& h : held) {
    for (const auto& [url, count] : h) present.push_back(url);
  }
  size_t checked = 0, false_negatives = 0;
  for (Node* observer : nodes) {
    const auto answers = observer->WhoHas(present);
    ASSERT_EQ(answers.size(), present.size());
    for (size_t i = 0; i < present.size(); ++i) {
      for (size_t n = 0; n < nodes.size(); ++n) {
        if (!held[n].count(present[i])) continue;
        ++checked;
        const auto& ids = answers[i];
        if (std::find(ids.begin(), ids.end(), nodes[n]->name()) == ids.end()) {
          ++false_negatives;
          ADD_FAILURE() << observer->name() << " does not list " << nodes[n]->name() << " for "
                        << present[i];
        }
      }
    }
  }
  RecordProperty("checked_pairs", static_cast<int>(checked));
  EXPECT_GT(checked, 1000u);
  EXPECT_EQ(false_negatives, 0u);
}

}  // namespace
}  // namespace peerbloom::testing
