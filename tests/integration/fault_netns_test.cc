// A partition below the daemon: two network namespaces joined by a veth pair, three real
// daemons in each, and the link cut by blackhole routes on both sides (every packet to the
// other half is dropped in the kernel, as a failed switch would; no daemon is told). Needs root
// and iproute2; where namespaces cannot be made the test is skipped and
// NetworkFaults.PartitionIsDetectedAndHeals covers the same partition with the transport's
// injection. Times are printed and recorded, never asserted.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "tests/support/cluster_harness.h"
#include "tests/support/fault_util.h"
#include "tests/support/process.h"

namespace peerbloom::testing {
namespace {

using Clock = std::chrono::steady_clock;

// Runs a shell command; returns its exit code and fills *output with stdout and stderr.
int Run(const std::string& command, std::string* output = nullptr) {
  const ProcessResult r = RunShell(command, Merged());
  if (output != nullptr) *output = r.out;
  return r.exit_code;
}

// Two namespaces, <prefix>l holding 10.250.0.1 and <prefix>r holding 10.250.0.2 on the two ends
// of a veth pair, loopback up in both. Deleted (with the pair) on destruction.
class NamespacePair {
 public:
  static constexpr const char* kLeftAddress = "10.250.0.1";
  static constexpr const char* kRightAddress = "10.250.0.2";

  NamespacePair()
      : left_("pbtest" + std::to_string(::getpid()) + "l"),
        right_("pbtest" + std::to_string(::getpid()) + "r") {
    if (::geteuid() != 0) {
      error_ = "not root";
      return;
    }
    const std::string l = "ip -n " + left_ + " ", r = "ip -n " + right_ + " ";
    for (const std::string& command : {
             "ip netns add " + left_,
             "ip netns add " + right_,
             l + "link add veth0 type veth peer name veth1 netns " + right_,
             l + "addr add " + kLeftAddress + "/24 dev veth0",
             r + "addr add " + kRightAddress + "/24 dev veth1",
             l + "link set lo up",
             r + "link set lo up",
             l + "link set veth0 up",
             r + "link set veth1 up",
         }) {
      std::string out;
      if (Run(command, &out) != 0) {
        error_ = "'" + command + "' failed: " + out;
        return;
      }
    }
    ok_ = true;
  }
  ~NamespacePair() {
    Run("ip netns del " + left_);
    Run("ip netns del " + right_);
  }

  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }
  std::string left_file() const { return "/run/netns/" + left_; }
  std::string right_file() const { return "/run/netns/" + right_; }

  // Drops every packet between the halves (cut) or lets them through again (heal).
  bool Cut() { return Routes("add"); }
  bool Heal() { return Routes("del"); }

 private:
  bool Routes(const std::string& verb) {
    return Run("ip -n " + left_ + " route " + verb + " blackhole " + kRightAddress + "/32") == 0 &&
           Run("ip -n " + right_ + " route " + verb + " blackhole " + kLeftAddress + "/32") == 0;
  }

  std::string left_, right_, error_;
  bool ok_ = false;
};

bool AllSeeAll(const std::vector<Node*>& nodes) {
  for (Node* o : nodes) {
    for (Node* n : nodes) {
      if (o != n && !SeesAlive(o, n->name())) return false;
    }
  }
  return true;
}

// "a: b c d" per node: whom each node lists as alive (for failure messages).
std::string AliveLists(const std::vector<Node*>& nodes) {
  std::string out;
  for (Node* o : nodes) {
    out += o->name() + ":";
    for (const json& p : o->Peers()) {
      if (p.value("alive", false)) out += " " + p.value("node_id", "");
    }
    out += "\n";
  }
  return out;
}

TEST(NetnsFaults, PartitionBetweenNamespacesIsDetectedAndHeals) {
  NamespacePair namespaces;  // outlives the cluster: its daemons are killed first
  if (!namespaces.ok()) {
    GTEST_SKIP() << "network namespaces unavailable (" << namespaces.error()
                 << "); NetworkFaults.PartitionIsDetectedAndHeals covers the partition with the "
                    "transport's injection";
  }
  Cluster cluster;
  NodeOptions left_options;  // failure timeout 1.5 s, anti-entropy 0.5 s, gossip 0.2 s
  left_options.netns = namespaces.left_file();
  left_options.listen_host = NamespacePair::kLeftAddress;
  NodeOptions right_options = left_options;
  right_options.netns = namespaces.right_file();
  right_options.listen_host = NamespacePair::kRightAddress;

  std::vector<Node*> nodes;
  for (int i = 0; i < 6; ++i) nodes.push_back(cluster.AddNode(std::string(1, 'a' + i)));
  const std::vector<Node*> left(nodes.begin(), nodes.begin() + 3);
  const std::vector<Node*> right(nodes.begin() + 3, nodes.end());
  for (Node* n : nodes) {
    const NodeOptions& o =
        n == left[0] || n == left[1] || n == left[2] ? left_options : right_options;
    ASSERT_TRUE(n->Start(o, n == nodes[0] ? std::vector<Node*>{} : std::vector{nodes[0]}))
        << n->name() << " did not start: " << n->log_tail();
  }
  Holdings held;
  for (Node* n : nodes) {
    held[n->name()] = Keys("http://netns.example/" + n->name() + "/before/", 100);
    ASSERT_TRUE(n->Add(held[n->name()]));
  }
  ASSERT_TRUE(WaitFor([&] { return AllSeeAll(nodes); }, kWaitDeadline));
  ASSERT_TRUE(WaitFor([&] { return CountFalseNegatives(nodes, held) == 0; }, kWaitDeadline));

  const auto partitioned = Clock::now();
  ASSERT_TRUE(namespaces.Cut());
  auto split = [&] {
    for (Node* l : left) {
      for (Node* r : right) {
        if (SeesAlive(l, r->name()) || SeesAlive(r, l->name())) return false;
      }
    }
    return true;
  };
  ASSERT_TRUE(WaitFor(split, kWaitDeadline)) << AliveLists(nodes);
  const double detect = SecondsSince(partitioned);
  for (const auto* side : {&left, &right}) EXPECT_TRUE(AllSeeAll(*side));
  // Changes made during the partition must reach the other half after it heals.
  for (Node* n : nodes) {
    const auto keys = Keys("http://netns.example/" + n->name() + "/during/", 100);
    ASSERT_TRUE(n->Add(keys));
    held[n->name()].insert(held[n->name()].end(), keys.begin(), keys.end());
  }
  // Each half is whole and up to date before the cut is healed.
  EXPECT_TRUE(WaitFor(
      [&] {
        Holdings half;
        for (Node* n : left) half[n->name()] = held[n->name()];
        return CountFalseNegatives(left, half) == 0;
      },
      kWaitDeadline));
  const auto healed = Clock::now();
  ASSERT_TRUE(namespaces.Heal());
  ASSERT_TRUE(WaitFor([&] { return AllSeeAll(nodes) && CountFalseNegatives(nodes, held) == 0; },
                      kWaitDeadline))
      << CountFalseNegatives(nodes, held) << " false negatives left";
  const double reconverge = SecondsSince(healed);
  std::printf(
      "partition 3|3 between network namespaces: both sides marked the other dead %.2f s after "
      "the cut (failure timeout %.1f s); after healing every node reconverged in %.2f s (%.1f "
      "anti-entropy intervals of %.1f s)\n",
      detect, left_options.failure_timeout_ms / 1000.0, reconverge,
      reconverge * 1000 / left_options.anti_entropy_interval_ms,
      left_options.anti_entropy_interval_ms / 1000.0);
  RecordProperty("detect_ms", static_cast<int>(detect * 1000));
  RecordProperty("reconverge_ms", static_cast<int>(reconverge * 1000));
  size_t checked = 0;
  EXPECT_EQ(CountFalseNegatives(nodes, held, &checked), 0u);
  EXPECT_EQ(checked, 6u * 6u * 200u);
}

}  // namespace
}  // namespace peerbloom::testing
