// The broadcast relay between real daemons on loopback: 8 nodes whose relay links form a ring
// with chords (each node linked to its two ring neighbours and the node opposite), gossip
// membership through one seed. Deliveries are read with the `listen` operation from cursor 0,
// so "exactly once" is checked on every delivery each node made, not on a counter. Waits poll
// with kWaitDeadline; nothing is timed.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tests/integration/cluster_harness.h"

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
  uint64_t cursor = 0;
  while (true) {
    json reply;
    std::string body;
    if (!node->Call({{"op", "listen"}, {"after", cursor}}, "", &reply, &body)) {
      ADD_FAILURE() << "listen failed at " << node->name();
      return out;
    }
    EXPECT_EQ(reply["missed"], 0);
    if (reply["deliveries"].empty()) return out;
    size_t at = 0;
    for (const json& d : reply["deliveries"]) {
      const size_t n = d["bytes"].get<size_t>();
      out.push_back({d["origin"], d["id"], d["hops"], body.substr(at, n)});
      at += n;
      cursor = d["seq"];
    }
  }
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
  }
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

}  // namespace
}  // namespace peerbloom::testing
