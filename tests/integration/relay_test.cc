// The broadcast relay between real daemons on loopback: 8 nodes whose relay links form a ring
// with chords (each node linked to its two ring neighbours and the node opposite), gossip
// membership through one seed. Deliveries are read with the `listen` operation from cursor 0,
// so "exactly once" is checked on every delivery each node made, not on a counter. Waits poll
// with kWaitDeadline; nothing is timed.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tests/support/cluster_harness.h"
#include "tests/support/process.h"
#include "tests/support/relay_listen.h"

namespace peerbloom::testing {
namespace {

constexpr int kNodes = 8;

struct Delivery {
  std::string origin;
  uint64_t id = 0;
  uint32_t hops = 0;
  std::string payload;
};

// Every delivery the node made since it started, oldest first.
std::vector<Delivery> Deliveries(Node* node) {
  std::vector<Delivery> out;
  for (const Listened& d : ListenAll(node)) {
    out.push_back({d.entry["origin"], d.entry["id"], d.entry["hops"], d.payload});
  }
  return out;
}

uint64_t Delivered(Node* node) { return node->Stats()["relay"]["delivered"].get<uint64_t>(); }

// Relay links of node i: the ring neighbours, and with `chords` the node opposite.
std::string Links(int i, bool chords) {
  std::set<int> peers = {(i + 1) % kNodes, (i + kNodes - 1) % kNodes};
  if (chords) peers.insert((i + kNodes / 2) % kNodes);
  std::string out = "relay_links = [";
  for (int p : peers)
    out += std::string(out.back() == '[' ? "" : ", ") + "\"n" + std::to_string(p) + "\"";
  return out + "]\n";
}

class RelayMesh : public ::testing::Test {
 protected:
  // Starts the 8 nodes, node i with `extra(i)` TOML lines, and waits until every node's relay
  // links are up.
  void StartMesh(bool chords, const std::function<std::string(int)>& extra) {
    for (int i = 0; i < kNodes; ++i) nodes_.push_back(cluster_.AddNode("n" + std::to_string(i)));
    for (int i = 0; i < kNodes; ++i) {
      NodeOptions o;
      o.extra = Links(i, chords) + extra(i);
      std::vector<Node*> seeds;
      if (i > 0) seeds.push_back(nodes_[0]);
      ASSERT_TRUE(nodes_[i]->Start(o, seeds)) << nodes_[i]->log_tail();
    }
    const int links = chords ? 3 : 2;
    ASSERT_TRUE(WaitFor(
        [&] {
          for (Node* n : nodes_) {
            if (n->Stats()["relay"]["links_up"] != links) return false;
          }
          return true;
        },
        kWaitDeadline))
        << "relay links did not come up\n"
        << nodes_[0]->log_tail();
  }

  bool Broadcast(Node* node, const std::string& payload, std::string* error = nullptr) {
    json reply;
    std::string body;
    return node->Call({{"op", "broadcast"}}, payload, &reply, &body, error);
  }

  Cluster cluster_;
  std::vector<Node*> nodes_;
};

TEST_F(RelayMesh, ThousandBroadcastsAreDeliveredExactlyOnceEverywhere) {
  StartMesh(true, [](int) { return std::string("relay_hop_limit = 8\n"); });
  constexpr int kBroadcasts = 1000;
  std::map<std::string, int> sent;  // payload -> origin index
  const auto start = std::chrono::steady_clock::now();
  for (int m = 0; m < kBroadcasts; ++m) {
    const int origin = m % kNodes;
    const std::string payload = "message " + std::to_string(m);
    ASSERT_TRUE(Broadcast(nodes_[origin], payload));
    sent[payload] = origin;
  }
  ASSERT_TRUE(WaitFor(
      [&] {
        for (Node* n : nodes_) {
          if (Delivered(n) < kBroadcasts) return false;
        }
        return true;
      },
      kWaitDeadline))
      << "not every node delivered every broadcast";
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  uint64_t copies = 0, control = 0, duplicates = 0;
  for (Node* n : nodes_) {
    const std::vector<Delivery> got = Deliveries(n);
    EXPECT_EQ(got.size(), size_t{kBroadcasts}) << n->name();
    std::set<std::pair<std::string, uint64_t>> ids;
    std::set<std::string> payloads;
    for (const Delivery& d : got) {
      EXPECT_TRUE(ids.emplace(d.origin, d.id).second) << "delivered twice at " << n->name();
      payloads.insert(d.payload);
      ASSERT_TRUE(sent.count(d.payload)) << d.payload;
      EXPECT_EQ(d.origin, "n" + std::to_string(sent[d.payload]));
      EXPECT_LE(d.hops, 8u);
    }
    EXPECT_EQ(payloads.size(), size_t{kBroadcasts}) << n->name();
    const json relay = n->Stats()["relay"];
    EXPECT_EQ(relay["delivered"], kBroadcasts) << n->name();
    EXPECT_EQ(relay["gave_up"], 0) << n->name();
    ::testing::Test::RecordProperty(n->name() + "_payloads_sent", relay["payloads_sent"].dump());
    copies += relay["payloads_sent"].get<uint64_t>();
    control += relay["control_packets_sent"].get<uint64_t>();
    duplicates += relay["duplicates"].get<uint64_t>();
  }
  // The figures docs/relay.md quotes ("On loopback").
  std::printf(
      "relay loopback: %d broadcasts, %d nodes, 12 links: %.1f payload copies per broadcast "
      "(N - 1 = %d), %.1f control packets per broadcast, %.2f duplicate copies per broadcast, "
      "all delivered %.2f s after the first\n",
      kBroadcasts, kNodes, static_cast<double>(copies) / kBroadcasts, kNodes - 1,
      static_cast<double>(control) / kBroadcasts, static_cast<double>(duplicates) / kBroadcasts,
      seconds);
}

// On a plain ring with hop limit 2 a message reaches the 4 nodes within 2 links of its origin
// and no other: the counts are exact (the relay's seen set, no filter, decides delivery).
TEST_F(RelayMesh, NothingTravelsPastTheHopLimit) {
  StartMesh(false, [](int) { return std::string("relay_hop_limit = 2\n"); });
  constexpr int kBroadcasts = 20;
  for (int m = 0; m < kBroadcasts; ++m) ASSERT_TRUE(Broadcast(nodes_[0], std::to_string(m)));
  const std::set<int> reached = {0, 1, 2, 6, 7};
  ASSERT_TRUE(WaitFor(
      [&] {
        for (int i : reached) {
          if (Delivered(nodes_[i]) < kBroadcasts) return false;
        }
        return true;
      },
      kWaitDeadline));
  // Once no node has announcement rounds or GRAFTs pending, nothing more will be sent: the
  // far side's deliveries are final.
  ASSERT_TRUE(WaitFor(
      [&] {
        for (Node* n : nodes_) {
          if (n->Stats()["relay"]["repairs_pending"] != false) return false;
        }
        return true;
      },
      kWaitDeadline));
  for (int i = 0; i < kNodes; ++i) {
    const std::vector<Delivery> got = Deliveries(nodes_[i]);
    if (reached.count(i)) {
      EXPECT_EQ(got.size(), size_t{kBroadcasts}) << i;
      for (const Delivery& d : got) EXPECT_LE(d.hops, 2u);
    } else {
      EXPECT_EQ(got.size(), 0u) << "node n" << i << " is 3 or 4 links from the origin";
    }
  }
  EXPECT_EQ(nodes_[2]->Stats()["relay"]["hop_limited"], kBroadcasts);
  EXPECT_EQ(nodes_[6]->Stats()["relay"]["hop_limited"], kBroadcasts);
}

// n0 relays anything it originates (no limit of its own); the others relay at most 40
// messages per origin per second. A flood from n0 is cut to about that rate at its
// neighbours, while every message of a quiet origin gets through everywhere.
TEST_F(RelayMesh, FloodingOriginIsThrottledWhileOthersGetThrough) {
  constexpr int kRate = 40;
  StartMesh(true, [](int i) {
    return std::string("relay_hop_limit = 8\nrelay_rate_limit = ") + (i == 0 ? "0" : "40") + "\n";
  });
  constexpr int kFlood = 400;
  constexpr int kQuiet = 20;
  const auto start = std::chrono::steady_clock::now();
  for (int m = 0; m < kFlood; ++m) {
    ASSERT_TRUE(Broadcast(nodes_[0], "flood " + std::to_string(m)));
    if (m % (kFlood / kQuiet) == 0) {
      ASSERT_TRUE(Broadcast(nodes_[3], "quiet " + std::to_string(m)));
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(WaitFor(
      [&] {
        for (Node* n : nodes_) {
          int quiet = 0;
          for (const Delivery& d : Deliveries(n)) quiet += d.origin == "n3";
          if (quiet < kQuiet) return false;
        }
        return true;
      },
      kWaitDeadline))
      << "a quiet origin's messages did not reach every node";
  // A window of 1 s slides in tenths: over the flood's duration a relay admits at most
  // kRate per window, so at most kRate * (seconds + 1) in all (plus one window of slack).
  const double bound = kRate * (seconds + 2);
  for (int i = 1; i < kNodes; ++i) {
    int flood = 0;
    for (const Delivery& d : Deliveries(nodes_[i])) flood += d.origin == "n0";
    EXPECT_LE(flood, bound) << "n" << i << " flood took " << seconds << " s";
    EXPECT_LT(flood, kFlood) << "n" << i;
  }
  uint64_t throttled = 0;
  for (int i = 1; i < kNodes; ++i)
    throttled += nodes_[i]->Stats()["relay"]["throttled"].get<uint64_t>();
  EXPECT_GT(throttled, 0u);
}

TEST_F(RelayMesh, KilledNodeDoesNotStopDeliveryToTheRest) {
  StartMesh(true, [](int) { return std::string("relay_hop_limit = 8\n"); });
  constexpr int kBroadcasts = 300;
  constexpr int kKilled = 4;
  std::set<std::string> sent;
  for (int m = 0; m < kBroadcasts; ++m) {
    if (m == kBroadcasts / 2) nodes_[kKilled]->Kill9();
    int origin = m % kNodes;
    if (origin == kKilled) origin = (origin + 1) % kNodes;
    const std::string payload = "message " + std::to_string(m);
    ASSERT_TRUE(Broadcast(nodes_[origin], payload));
    sent.insert(payload);
  }
  ASSERT_TRUE(WaitFor(
      [&] {
        for (int i = 0; i < kNodes; ++i) {
          if (i != kKilled && Delivered(nodes_[i]) < kBroadcasts) return false;
        }
        return true;
      },
      kWaitDeadline))
      << "the nodes left did not deliver every broadcast";
  for (int i = 0; i < kNodes; ++i) {
    if (i == kKilled) continue;
    std::set<std::string> payloads;
    for (const Delivery& d : Deliveries(nodes_[i])) {
      EXPECT_TRUE(payloads.insert(d.payload).second) << "delivered twice at n" << i;
    }
    EXPECT_EQ(payloads, sent) << "n" << i;
  }
}

// The commands: broadcast from an argument, a file and stdin at one node; listen at the other
// prints the three, in --json and as text.
TEST(RelayCli, BroadcastAndListen) {
  Cluster cluster;
  Node* a = cluster.AddNode("a");
  Node* b = cluster.AddNode("b");
  NodeOptions oa, ob;
  oa.extra = "relay_links = [\"b\"]\n";
  ob.extra = "relay_links = [\"a\"]\n";
  ASSERT_TRUE(a->Start(oa, {})) << a->log_tail();
  ASSERT_TRUE(b->Start(ob, {a})) << b->log_tail();
  ASSERT_TRUE(WaitFor(
      [&] { return a->Stats()["relay"]["links_up"] == 1 && b->Stats()["relay"]["links_up"] == 1; },
      kWaitDeadline));
  const std::string at_a = "--timeout 60000 --control ipc://" + cluster.dir() + "/a/control.sock ";
  const std::string at_b = "--timeout 60000 --control ipc://" + cluster.dir() + "/b/control.sock ";
  const std::string file = cluster.dir() + "/payload.txt";
  std::ofstream(file) << "from a file";
  const std::string input = cluster.dir() + "/stdin.txt";
  std::ofstream(input) << "from stdin";
  ProcessResult r = RunCli(at_a + "broadcast 'from an argument'", Merged());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("broadcast a #", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(" (16 bytes)\n"), std::string::npos) << r.out;
  ASSERT_EQ(RunCli(at_a + "broadcast --file " + file, Merged()).exit_code, 0);
  ASSERT_EQ(RunCli(at_a + "broadcast < " + input, Merged()).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return b->Stats()["relay"]["delivered"] == 3; }, kWaitDeadline));
  r = RunCli(at_b + "--json listen --from-start --count 3", Merged());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::vector<std::string> payloads;
  size_t start = 0;
  while (start < r.out.size()) {
    const size_t end = r.out.find('\n', start);
    const json j = json::parse(r.out.substr(start, end - start));
    EXPECT_EQ(j["origin"], "a");
    EXPECT_EQ(j["hops"], 1);
    EXPECT_EQ(j["kind"], "message");
    payloads.push_back(j["payload"]);
    start = end + 1;
  }
  EXPECT_EQ(payloads, (std::vector<std::string>{"from an argument", "from a file", "from stdin"}));
  r = RunCli(at_b + "listen --from-start --count 1", Merged());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("a #", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(" (1 hop) message: from an argument\n"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace peerbloom::testing
