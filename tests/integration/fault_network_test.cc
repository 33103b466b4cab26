// Network faults with real daemons: lossy, duplicating and reordering links, a partition of a
// 6-node cluster, and wall-clock steps. Faults are injected in the transport by the test-only
// config keys (docs/config.md, "Test-only settings"); a partition is two halves blocking each
// other's endpoints, set and lifted by SIGHUP. The figures (time to converge, to detect, to
// reconverge) are printed and recorded as test properties; docs/reliability.md quotes them.
// Assertions are on outcomes (0 false negatives, deaths noticed, no spurious death), with the
// harness's generous deadlines; times are measured, not asserted.
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/support/cluster_harness.h"
#include "tests/support/fault_util.h"

namespace peerbloom::testing {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::vector<Node*> StartCluster(Cluster* cluster, int n, const NodeOptions& options) {
  std::vector<Node*> nodes;
  for (int i = 0; i < n; ++i) nodes.push_back(cluster->AddNode(std::string(1, 'a' + i)));
  for (Node* node : nodes) {
    if (!node->Start(options, node == nodes[0] ? std::vector<Node*>{} : std::vector{nodes[0]})) {
      ADD_FAILURE() << node->name() << " did not start: " << node->log_tail();
      return {};
    }
  }
  return nodes;
}

bool AllSeeAll(const std::vector<Node*>& nodes) {
  for (Node* o : nodes) {
    for (Node* n : nodes) {
      if (o != n && !SeesAlive(o, n->name())) return false;
    }
  }
  return true;
}

TEST(NetworkFaults, LossyDuplicatingReorderingLinksConverge) {
  Cluster cluster;
  NodeOptions options;
  options.extra = "test_fault_drop = 0.2\ntest_fault_duplicate = 0.2\ntest_fault_reorder = 0.2\n";
  std::vector<Node*> nodes = StartCluster(&cluster, 4, options);
  ASSERT_EQ(nodes.size(), 4u);
  Holdings held;
  // Two rounds: the first reaches peers as full summaries, the second mostly as deltas.
  for (int round = 0; round < 2; ++round) {
    for (Node* n : nodes) {
      const auto keys =
          Keys("http://lossy.example/" + n->name() + "/" + std::to_string(round) + "/", 300);
      ASSERT_TRUE(n->Add(keys));
      auto& h = held[n->name()];
      h.insert(h.end(), keys.begin(), keys.end());
    }
    const auto start = Clock::now();
    ASSERT_TRUE(WaitFor([&] { return CountFalseNegatives(nodes, held) == 0; }, 2 * kWaitDeadline))
        << CountFalseNegatives(nodes, held) << " false negatives left\n"
        << nodes[0]->Peers().dump(1);
    const double seconds = SecondsSince(start);
    std::printf(
        "lossy links (20%% drop, 20%% duplicate, 20%% reorder), round %d: converged in "
        "%.2f s\n",
        round, seconds);
    RecordProperty("converge_ms_round" + std::to_string(round), static_cast<int>(seconds * 1000));
  }
  size_t checked = 0;
  EXPECT_EQ(CountFalseNegatives(nodes, held, &checked), 0u);
  EXPECT_EQ(checked, 4u * 4u * 600u);
  // The injected faults are counted where an operator would look.
  uint64_t dropped = 0, duplicated = 0, reordered = 0;
  for (Node* n : nodes) {
    const json faults = n->Stats()["faults"];
    dropped += faults["injected_dropped"].get<uint64_t>();
    duplicated += faults["injected_duplicated"].get<uint64_t>();
    reordered += faults["injected_reordered"].get<uint64_t>();
  }
  EXPECT_GT(dropped, 0u);
  EXPECT_GT(duplicated, 0u);
  EXPECT_GT(reordered, 0u);
  std::printf("injected: %llu dropped, %llu duplicated, %llu reordered\n",
              static_cast<unsigned long long>(dropped), static_cast<unsigned long long>(duplicated),
              static_cast<unsigned long long>(reordered));
}

TEST(NetworkFaults, PartitionIsDetectedAndHeals) {
  Cluster cluster;
  NodeOptions options;  // failure timeout 1.5 s, anti-entropy 0.5 s, gossip 0.2 s
  std::vector<Node*> nodes = StartCluster(&cluster, 6, options);
  ASSERT_EQ(nodes.size(), 6u);
  Holdings held;
  for (Node* n : nodes) {
    held[n->name()] = Keys("http://part.example/" + n->name() + "/before/", 100);
    ASSERT_TRUE(n->Add(held[n->name()]));
  }
  ASSERT_TRUE(WaitFor([&] { return AllSeeAll(nodes); }, kWaitDeadline));
  ASSERT_TRUE(WaitFor([&] { return CountFalseNegatives(nodes, held) == 0; }, kWaitDeadline));

  const std::vector<Node*> left(nodes.begin(), nodes.begin() + 3);
  const std::vector<Node*> right(nodes.begin() + 3, nodes.end());
  auto block = [&](const std::vector<Node*>& side, const std::vector<Node*>& other) {
    NodeOptions o = options;
    o.extra = "test_fault_blocked = [";
    for (Node* n : other) o.extra += "\"" + n->endpoint() + "\", ";
    o.extra += "]\n";
    for (Node* n : side) ASSERT_TRUE(n->Reload(o, {nodes[0]}));
  };
  const auto partitioned = Clock::now();
  block(left, right);
  block(right, left);
  auto split = [&] {
    for (Node* l : left) {
      for (Node* r : right) {
        if (SeesAlive(l, r->name()) || SeesAlive(r, l->name())) return false;
      }
    }
    return true;
  };
  ASSERT_TRUE(WaitFor(split, kWaitDeadline));
  const double detect = SecondsSince(partitioned);
  // Each half still sees itself whole.
  for (const auto* side : {&left, &right}) EXPECT_TRUE(AllSeeAll(*side));
  // Changes made during the partition.
  for (Node* n : nodes) {
    const auto keys = Keys("http://part.example/" + n->name() + "/during/", 100);
    ASSERT_TRUE(n->Add(keys));
    held[n->name()].insert(held[n->name()].end(), keys.begin(), keys.end());
  }
  const auto healed = Clock::now();
  for (Node* n : nodes) ASSERT_TRUE(n->Reload(options, {nodes[0]}));
  ASSERT_TRUE(WaitFor([&] { return AllSeeAll(nodes) && CountFalseNegatives(nodes, held) == 0; },
                      kWaitDeadline))
      << CountFalseNegatives(nodes, held) << " false negatives left";
  const double reconverge = SecondsSince(healed);
  std::printf(
      "partition 3|3: both sides marked the other dead %.2f s after the split "
      "(failure timeout %.1f s); after healing every node reconverged in %.2f s "
      "(%.1f anti-entropy intervals of %.1f s)\n",
      detect, options.failure_timeout_ms / 1000.0, reconverge,
      reconverge * 1000 / options.anti_entropy_interval_ms,
      options.anti_entropy_interval_ms / 1000.0);
  RecordProperty("detect_ms", static_cast<int>(detect * 1000));
  RecordProperty("reconverge_ms", static_cast<int>(reconverge * 1000));
  EXPECT_EQ(CountFalseNegatives(nodes, held), 0u);
}

// The daemon's timers run on the monotonic clock; the wall clock only names epochs. Stepping
// it (test_wall_clock_offset) back and forth by minutes must kill no one, stall nothing, and
// a restart with the clock stepped back must still start a newer epoch (peers ignore older
// ones), even before the node ever wrote a snapshot.
TEST(NetworkFaults, WallClockStepsKillNoOneAndEpochsStillIncrease) {
  Cluster cluster;
  NodeOptions options;
  std::vector<Node*> nodes = StartCluster(&cluster, 3, options);
  ASSERT_EQ(nodes.size(), 3u);
  Node* a = nodes[0];
  ASSERT_TRUE(WaitFor([&] { return AllSeeAll(nodes); }, kWaitDeadline));
  Holdings held;
  // Alive everywhere, all the time, for two failure timeouts after each step.
  auto no_death_for = [&](milliseconds span) {
    const auto until = Clock::now() + span;
    while (Clock::now() < until) {
      if (!AllSeeAll(nodes)) return false;
    }
    return true;
  };
  const milliseconds watch(2 * options.failure_timeout_ms);
  int step = 0;
  int64_t previous_ms = 0;
  for (int64_t offset_ms : {-10 * 60 * 1000, 10 * 60 * 1000, -20 * 60 * 1000}) {
    NodeOptions o = options;
    o.extra = "test_wall_clock_offset = " + std::to_string(offset_ms) + "\n";
    for (Node* n : nodes) ASSERT_TRUE(n->Reload(o, {a}));
    // Every node notices the step once and measures it (the loop compares the wall clock with
    // the monotonic one every turn; 1 s of slack for the turn that straddles the reload).
    for (Node* n : nodes) {
      json faults;
      EXPECT_TRUE(WaitFor(
          [&] {
            faults = n->Stats()["faults"];
            return faults["clock_jumps"].get<uint64_t>() == static_cast<uint64_t>(step + 1);
          },
          kWaitDeadline))
          << n->name() << ": " << faults.dump();
      EXPECT_NEAR(faults["last_clock_jump_ms"].get<double>(),
                  static_cast<double>(offset_ms - previous_ms), 1000.0)
          << n->name();
    }
    previous_ms = offset_ms;
    EXPECT_TRUE(no_death_for(watch))
        << "a member was marked dead after a step of " << offset_ms << " ms";
    // Timers still run: a change made after the step reaches everyone.
    const auto keys = Keys("http://clock.example/" + std::to_string(step++) + "/", 50);
    ASSERT_TRUE(a->Add(keys));
    held["a"].insert(held["a"].end(), keys.begin(), keys.end());
    EXPECT_TRUE(WaitFor([&] { return CountFalseNegatives(nodes, held) == 0; }, kWaitDeadline));
  }
  // Restart a (no snapshot written: the default interval is 60 s) with its clock stepped back
  // a further 20 minutes: its epoch must still go up, and peers must take its new summaries.
  const uint64_t old_epoch = a->Stats()["summary"]["epoch"];
  a->Kill9();
  NodeOptions back = options;
  back.extra = "test_wall_clock_offset = -2400000\n";
  ASSERT_TRUE(a->Start(back, {nodes[1]})) << a->log_tail();
  const uint64_t new_epoch = a->Stats()["summary"]["epoch"];
  EXPECT_GT(new_epoch, old_epoch);
  const auto keys = Keys("http://clock.example/after-restart/", 50);
  ASSERT_TRUE(a->Add(keys));
  held["a"] = keys;  // the restart without a snapshot forgot the others
  EXPECT_TRUE(WaitFor([&] { return CountFalseNegatives(nodes, held) == 0; }, kWaitDeadline))
      << nodes[1]->Peers().dump(1);
}

}  // namespace
}  // namespace peerbloom::testing
