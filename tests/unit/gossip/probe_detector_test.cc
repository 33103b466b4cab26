// The probe failure detector (docs/gossip.md, "Probe failure detection") on the simulated
// network (sim_cluster.h), fake clock throughout: a run is a function of its seeds, so these
// checks cannot fail by chance. At rest a cluster sends probes and nothing that grows with its
// size; a killed node is declared dead everywhere; a node stopped for a second, or suspected
// by a liar, refutes and is never declared dead; nodes of both detectors keep each other alive.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "peerbloom/gossip.h"
#include "peerbloom/wire.h"
#include "tests/support/sim_cluster.h"

namespace peerbloom {
namespace {

using sim::NetOptions;
using sim::SimCluster;

constexpr int64_t kTimeout = 10000;  // DefaultOptions: failure timeout

GossipOptions ProbeOptions() {
  GossipOptions o = SimCluster::DefaultOptions();
  o.failure_detector = FailureDetector::kProbe;
  return o;
}

// n nodes, each seeded with the one before (a ring of single seeds), with 20 keys each.
void AddRing(SimCluster* c, int n) {
  c->AddRing(n);
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < 20; ++k)
      c->AddKey(i, "http://n" + std::to_string(i) + "/" + std::to_string(k));
    c->Publish(i);
  }
}

bool AllSeeAllAlive(SimCluster& c) {
  for (size_t a = 0; a < c.size(); ++a) {
    if (!c.node(static_cast<int>(a)).up) continue;
    for (size_t b = 0; b < c.size(); ++b) {
      if (a != b && c.node(static_cast<int>(b)).up &&
          !c.SeesAlive(static_cast<int>(a), static_cast<int>(b))) {
        return false;
      }
    }
  }
  return true;
}

// Runs until `until_ms`, counting (observer, live node) pairs where the observer held a node
// that was up dead at some event (each pair once per call).
size_t RunCountingFalseDeaths(SimCluster* c, int64_t until_ms, const std::vector<bool>& live) {
  size_t false_deaths = 0;
  std::vector<std::vector<bool>> seen_dead(c->size(), std::vector<bool>(c->size(), false));
  c->RunUntilTrue(
      [&] {
        for (size_t a = 0; a < c->size(); ++a) {
          if (!c->node(static_cast<int>(a)).up) continue;
          for (size_t b = 0; b < c->size(); ++b) {
            if (a == b || !live[b] || seen_dead[a][b]) continue;
            if (!c->SeesAlive(static_cast<int>(a), static_cast<int>(b))) {
              seen_dead[a][b] = true;
              ++false_deaths;
            }
          }
        }
        return false;
      },
      until_ms, 100);
  return false_deaths;
}

uint64_t FramesSent(SimCluster& c) {
  uint64_t n = 0;
  for (size_t i = 0; i < c.size(); ++i) n += c.node(static_cast<int>(i)).frames_sent;
  return n;
}

uint64_t BytesSent(SimCluster& c) {
  uint64_t n = 0;
  for (size_t i = 0; i < c.size(); ++i) n += c.node(static_cast<int>(i)).bytes_sent;
  return n;
}

// At rest a node sends about one ping and one ack per interval, plus a checksum digest at an
// interval that grows with log N: no heartbeat digests, no beats, no entry per member.
TEST(ProbeDetector, AtRestTheCostPerNodeDoesNotGrowWithTheCluster) {
  for (int n : {8, 32}) {
    SCOPED_TRACE(n);
    SimCluster c(NetOptions(), ProbeOptions());
    AddRing(&c, n);
    ASSERT_TRUE(c.RunUntilTrue([&] { return AllSeeAllAlive(c) && c.AllHoldAll(); }, 60000, 100));
    c.RunFor(30000);  // settles: neighbour sets, first exchanges
    auto heartbeats = [&] {
      std::vector<uint64_t> out;
      for (int i = 0; i < n; ++i) {
        for (const PeerInfo& p : c.engine(i).Peers(c.now())) out.push_back(p.heartbeat);
      }
      return out;
    };
    const std::vector<uint64_t> beats = heartbeats();
    const uint64_t frames = FramesSent(c);
    const uint64_t bytes = BytesSent(c);
    uint64_t digests = 0;
    for (int i = 0; i < n; ++i) digests += c.engine(i).stats().digests_out;
    // About a minute, ending 2.5 s before a neighbour shuffle (every 30 s from the start): the
    // neighbours chosen then were picked at the shuffle before, more than a turn ago.
    const int64_t window = (c.now() + 60000) / 30000 * 30000 - 2500 - c.now();
    std::vector<bool> live(n, true);
    EXPECT_EQ(RunCountingFalseDeaths(&c, c.now() + window, live), 0u);
    const double per_node_s = static_cast<double>(FramesSent(c) - frames) / n / (window / 1000.0);
    uint64_t digests_after = 0;
    for (int i = 0; i < n; ++i) digests_after += c.engine(i).stats().digests_out;
    const double digests_per_node_s =
        static_cast<double>(digests_after - digests) / n / (window / 1000.0);
    const double bytes_per_node_s =
        static_cast<double>(BytesSent(c) - bytes) / n / (window / 1000.0);
    std::printf("N=%d: %.2f frames/s per node, %.2f digests/s, %.0f bytes/s\n", n, per_node_s,
                digests_per_node_s, bytes_per_node_s);
    // Pings and acks: one of each per 2 s probe interval; complete digest exchanges (and their
    // imports frames) every 5 to 15 s at these sizes.
    EXPECT_LE(per_node_s, 1.6);
    EXPECT_LE(digests_per_node_s, 0.5);
    EXPECT_LE(bytes_per_node_s, 400);  // no entry per member: frames of 40-200 bytes
    EXPECT_EQ(heartbeats(), beats);    // no node beat in the window
    // Yet a neighbour is heard of: its pings and acks (here unauthenticated, as without CURVE)
    // say so, which is what the route outcomes read (a peer heard after a request was alive).
    // A neighbour is pinged once per turn over the links (8 of them on average, 16 s): 90 % of
    // them were heard within 15 s at least.
    size_t chosen = 0, heard = 0;
    for (int i = 0; i < n; ++i) {
      for (const PeerInfo& p : c.engine(i).Peers(c.now())) {
        if (!p.chosen) continue;
        ++chosen;
        heard += c.now() - p.last_heard_ms < 15000 ? 1 : 0;
      }
    }
    EXPECT_GE(heard * 10, chosen * 9) << heard << " of " << chosen;
  }
}

// Versions ride on probes as a backstop to the relay trees, on at most two probe frames of each
// node that takes them, and only where they may tell something: never to their origin (it was
// sent there 138 times in this run when every probe took the next versions queued). Every
// node's versions still reach every other node.
TEST(ProbeDetector, EachNodeAnnouncesAVersionAtMostTwiceAndNeverToItsOrigin) {
  SimCluster c(NetOptions(), ProbeOptions());
  const int n = 8;
  AddRing(&c, n);
  ASSERT_TRUE(c.RunUntilTrue([&] { return AllSeeAllAlive(c) && c.AllHoldAll(); }, 60000, 100));
  std::map<std::tuple<int, std::string, uint64_t>, int> sent;  // (sender, origin, version)
  size_t announced = 0, to_origin = 0, undecoded = 0;
  c.SetFilter([&](const sim::Frame& f) {
    if (static_cast<WireType>(static_cast<uint8_t>(f.payload[6])) != WireType::kProbe) {
      return false;
    }
    WireFrame frame;
    if (!DecodeFrame(f.payload, WireLimits(), &frame).ok()) {
      ++undecoded;
      return false;
    }
    for (const auto* list : {&frame.probe.versions, &frame.probe.relayed_versions}) {
      for (const VersionAnnouncement& v : *list) {
        ++announced;
        if (v.origin == "node" + std::to_string(f.to)) ++to_origin;
        ++sent[{f.from, v.origin, v.version}];
      }
    }
    return false;
  });
  for (int r = 0; r < 20; ++r) {
    for (int i = 0; i < n; ++i) {
      c.AddKey(i, "round" + std::to_string(r) + "-" + std::to_string(i));
      c.Publish(i);
    }
    c.RunFor(1000);
  }
  ASSERT_TRUE(c.RunUntilTrue([&] { return c.AllHoldAll(); }, c.now() + 10000));
  EXPECT_EQ(undecoded, 0u);
  EXPECT_GT(announced, 0u);
  EXPECT_EQ(to_origin, 0u);
  for (const auto& [key, count] : sent) {
    EXPECT_LE(count, 2) << "node" << std::get<0>(key) << " announced " << std::get<1>(key)
                        << " version " << std::get<2>(key) << " " << count << " times";
  }
  EXPECT_EQ(c.FalseNegatives(), 0u);
}

TEST(ProbeDetector, AKilledNodeIsDeclaredDeadEverywhereAndComesBackInANewEpoch) {
  SimCluster c(NetOptions(), ProbeOptions());
  const int n = 16;
  AddRing(&c, n);
  ASSERT_TRUE(c.RunUntilTrue([&] { return AllSeeAllAlive(c) && c.AllHoldAll(); }, 60000, 100));
  c.RunFor(20000);
  const int victim = 5;
  c.node(victim).up = false;
  const int64_t killed_at = c.now();
  auto all_see_dead = [&] {
    for (int i = 0; i < n; ++i) {
      if (i != victim && c.SeesAlive(i, victim)) return false;
    }
    return true;
  };
  // First probe within about a probe interval, the period that raises the suspicion, its
  // spread, and the suspicion timeout (failure timeout less 2.5 probe intervals) at each node.
  ASSERT_TRUE(c.RunUntilTrue(all_see_dead, killed_at + 2 * kTimeout));
  std::printf("every node declared it dead after %lld ms\n",
              static_cast<long long>(c.now() - killed_at));
  // Never before a suspicion ran out: one raised by a ping sent after the kill (the one
  // latency before it at the earliest) at the end of that ping's period.
  EXPECT_GE(c.now() - killed_at,
            SuspicionTimeoutMs(ProbeOptions()) + ProbeIntervalMs(ProbeOptions()) - 10);
  uint64_t declared = 0;
  for (int i = 0; i < n; ++i) declared += i == victim ? 0 : c.engine(i).stats().declared_dead;
  EXPECT_EQ(declared, static_cast<uint64_t>(n - 1));
  c.Restart(victim, 2);
  ASSERT_TRUE(
      c.RunUntilTrue([&] { return AllSeeAllAlive(c) && c.AllHoldAll(); }, c.now() + 3 * kTimeout));
}

// A stop of one second (frames to and from it lost meanwhile) raises suspicions of it; it
// hears them when it resumes and refutes them before any runs out.
TEST(ProbeDetector, ANodeStoppedForASecondIsNeverDeclaredDead) {
  NetOptions net;
  net.drop = 0.05;
  net.jitter_ms = 2;
  SimCluster c(net, ProbeOptions());
  const int n = 16;
  AddRing(&c, n);
  ASSERT_TRUE(c.RunUntilTrue([&] { return AllSeeAllAlive(c) && c.AllHoldAll(); }, 60000, 100));
  c.RunFor(20000);
  std::vector<bool> live(n, true);
  uint64_t refutations = 0;
  size_t false_deaths = 0;
  for (int round = 0; round < 20; ++round) {
    const int stalled = (round * 7) % n;

    c.node(stalled).up = false;
    false_deaths += RunCountingFalseDeaths(&c, c.now() + 1000, live);
    c.node(stalled).up = true;
    false_deaths += RunCountingFalseDeaths(&c, c.now() + 3000, live);
  }
  false_deaths += RunCountingFalseDeaths(&c, c.now() + 2 * kTimeout, live);
  for (int i = 0; i < n; ++i) refutations += c.engine(i).stats().refutations;
  std::printf("refutations %llu\n", static_cast<unsigned long long>(refutations));
  EXPECT_EQ(false_deaths, 0u);
  EXPECT_GT(refutations, 0u);  // the stops were noticed, and answered
}

// A member that claims another is suspect (a liar, or a node whose probes are lost) makes it
// refute: the signed-or-not newer heartbeat clears the suspicion everywhere.
TEST(ProbeDetector, ASuspicionIsRefutedAndRunsOutNowhere) {
  SimCluster c(NetOptions(), ProbeOptions());
  const int n = 8;
  AddRing(&c, n);
  ASSERT_TRUE(c.RunUntilTrue([&] { return AllSeeAllAlive(c) && c.AllHoldAll(); }, 60000, 100));
  c.RunFor(10000);
  const int victim = 2;
  const int liar = 6;
  std::vector<bool> live(n, true);
  for (int i = 0; i < n; ++i) {
    if (i == victim || i == liar) continue;
    const PeerInfo* held = nullptr;
    const std::vector<PeerInfo> peers = c.engine(i).Peers(c.now());
    for (const PeerInfo& p : peers) held = p.node_id == c.node(victim).spec.id ? &p : held;
    ASSERT_NE(held, nullptr);
    WireHeader h;
    h.cluster_tag = SimCluster::DefaultOptions().cluster_tag;
    h.sender_id = c.node(liar).spec.id;
    h.flags = kWireFlagProbes;  // as every frame of a probing node
    h.sender_epoch = 1;
    h.sender_heartbeat = 1;
    DigestBody body;
    DigestEntry e;
    e.origin = held->node_id;
    e.epoch = held->epoch;
    e.heartbeat = held->heartbeat;
    e.alive = true;
    e.probes = true;
    e.suspect = true;
    body.entries.push_back(e);
    std::string frame;
    ASSERT_TRUE(EncodeDigestFrame(h, body, &frame).ok());
    ASSERT_TRUE(c.Inject(i, frame).ok());
  }
  EXPECT_EQ(RunCountingFalseDeaths(&c, c.now() + 3 * kTimeout, live), 0u);
  EXPECT_GE(c.engine(victim).stats().refutations, 1u);
  for (int i = 0; i < n; ++i) {
    if (i == victim) continue;
    for (const PeerInfo& p : c.engine(i).Peers(c.now())) {
      if (p.node_id == c.node(victim).spec.id) {
        EXPECT_GE(p.heartbeat, 2u) << i;
      }
    }
  }
}

// A rolling change: nodes of both detectors in one cluster. The probing nodes keep beating
// while a heartbeat node is alive, so it never loses them; a node of either kind that dies is
// declared dead by all.
TEST(ProbeDetector, NodesOfBothDetectorsKeepEachOtherAliveAndSeeEachOtherDie) {
  SimCluster c;
  c.SetBootHook([](GossipOptions* o) {
    const int index = o->node_id.back() - '0';
    if (index % 2 == 0) o->failure_detector = FailureDetector::kProbe;
  });
  const int n = 8;
  AddRing(&c, n);
  ASSERT_TRUE(c.RunUntilTrue([&] { return AllSeeAllAlive(c) && c.AllHoldAll(); }, 60000, 100));
  std::vector<bool> live(n, true);
  EXPECT_EQ(RunCountingFalseDeaths(&c, c.now() + 60000, live), 0u);
  for (int victim : {3, 4}) {  // a heartbeat node, then a probing one
    SCOPED_TRACE(victim);
    c.node(victim).up = false;
    live[victim] = false;
    const int64_t killed_at = c.now();
    ASSERT_TRUE(c.RunUntilTrue(
        [&] {
          for (int i = 0; i < n; ++i) {
            if (c.node(i).up && c.SeesAlive(i, victim)) return false;
          }
          return true;
        },
        killed_at + 2 * kTimeout));
  }
  EXPECT_EQ(RunCountingFalseDeaths(&c, c.now() + 30000, live), 0u);
}

// A rolling upgrade from the previous release: nodes that act on the wire as version 3 does
// (heartbeats only, probe frames and checksum digests unknown), upgraded one by one to version
// 4 with probes by a restart in a new epoch. No node is ever held dead, no key held by a node
// goes missing from another's who-has once the cluster has converged, and when the last old
// node is gone the probing nodes stop beating.
TEST(ProbeDetector, ARollingUpgradeFromVersion3HoldsNoFalseDeathAndNoMiss) {
  std::vector<bool> upgraded(8, false);
  SimCluster c;
  c.SetBootHook([&](GossipOptions* o) {
    const int index = o->node_id.back() - '0';
    if (upgraded[index]) {
      o->failure_detector = FailureDetector::kProbe;
    } else {
      o->wire_version = 3;
    }
  });
  const int n = 8;
  AddRing(&c, n);
  ASSERT_TRUE(c.RunUntilTrue([&] { return AllSeeAllAlive(c) && c.AllHoldAll(); }, 60000, 100));
  std::vector<bool> live(n, true);
  size_t false_deaths = RunCountingFalseDeaths(&c, c.now() + 30000, live);
  uint64_t epoch = 2;
  for (int i = 0; i < n; ++i) {
    SCOPED_TRACE(i);
    upgraded[i] = true;
    c.RestartFrom(i, epoch++, c.Snapshot(i));
    // The restarted node's summary reaches every node, and nothing is missing anywhere.
    ASSERT_TRUE(
        c.RunUntilTrue([&] { return AllSeeAllAlive(c) && c.AllHoldAll(); }, c.now() + 30000));
    EXPECT_EQ(c.FalseNegatives(), 0u);
    false_deaths += RunCountingFalseDeaths(&c, c.now() + 20000, live);
  }
  EXPECT_EQ(false_deaths, 0u);
  // All probe now: heartbeats stop advancing (each node's heartbeat as others hold it).
  c.RunFor(10000);
  std::vector<uint64_t> beats;
  for (int i = 0; i < n; ++i) {
    for (const PeerInfo& p : c.engine(i).Peers(c.now())) beats.push_back(p.heartbeat);
  }
  c.RunFor(30000);
  std::vector<uint64_t> later;
  for (int i = 0; i < n; ++i) {
    for (const PeerInfo& p : c.engine(i).Peers(c.now())) later.push_back(p.heartbeat);
  }
  EXPECT_EQ(beats, later);
  uint64_t probes = 0;
  for (int i = 0; i < n; ++i) probes += c.engine(i).stats().probes;
  EXPECT_GT(probes, 0u);
}

// Upgrades the n nodes one by one (each restarts in a new epoch from its content, with
// upgraded[i] set for its boot hook), with a change at every node at each step; every step
// converges with no false negative. Returns the false deaths seen.
size_t UpgradeOneByOne(SimCluster* c, int n, std::vector<bool>* upgraded) {
  std::vector<bool> live(n, true);
  size_t false_deaths = 0;
  uint64_t epoch = 2;
  int key = 0;
  for (int i = 0; i <= n; ++i) {
    SCOPED_TRACE(i);
    if (i < n) {
      (*upgraded)[i] = true;
      c->RestartFrom(i, epoch++, c->Snapshot(i));
    }
    for (int j = 0; j < n; ++j) {
      c->AddKey(j, "http://change/" + std::to_string(key++));
      c->Publish(j);
    }
    const bool converged =
        c->RunUntilTrue([&] { return AllSeeAllAlive(*c) && c->AllHoldAll(); }, c->now() + 30000);
    EXPECT_TRUE(converged);
    if (!converged) return false_deaths;
    EXPECT_EQ(c->FalseNegatives(), 0u);
    false_deaths += RunCountingFalseDeaths(c, c->now() + 10000, live);
  }
  return false_deaths;
}

// Adds node0..node<n-1>, each seeded by node0 (node0 by node1) and joining after the one
// before: node0's inbound places fill, and a later node of a lower rank takes one from a
// linked member.
void JoinThroughNode0(SimCluster* c, int n) {
  for (int i = 0; i < n; ++i) {
    sim::NodeSpec s;
    s.id = "node" + std::to_string(i);
    s.seeds = {i == 0 ? "node1" : "node0"};
    c->AddNode(s);
    c->RunFor(200);
  }
}

// Version 5 numbers the frames on each link and asks for lost ones again; a version 4 node
// skips the numbers and is never asked. Upgraded one by one on a network that loses 5 % of
// the frames, with a change at every node at each step: every change reaches every node,
// no frame is refused anywhere (a resend frame to a version 4 node would be), no false death,
// and once upgraded the nodes repair losses by resends.
TEST(ProbeDetector, ARollingUpgradeFromVersion4HoldsNoMissAndNoRefusedFrame) {
  std::vector<bool> upgraded(8, false);
  NetOptions net;
  net.drop = 0.05;
  SimCluster c(net, ProbeOptions());
  c.SetBootHook([&](GossipOptions* o) {
    if (!upgraded[o->node_id.back() - '0']) o->wire_version = 4;
  });
  const int n = 8;
  AddRing(&c, n);
  ASSERT_TRUE(c.RunUntilTrue([&] { return AllSeeAllAlive(c) && c.AllHoldAll(); }, 60000, 100));
  EXPECT_EQ(UpgradeOneByOne(&c, n, &upgraded), 0u);
  uint64_t refused = 0, resent = 0;
  for (int i = 0; i < n; ++i) {
    refused += c.engine(i).stats().malformed_in;
    resent += c.engine(i).stats().frames_resent;
  }
  EXPECT_EQ(refused, 0u);
  EXPECT_GT(resent, 0u);
}

// Version 6 says on every frame whether the sender pushes deltas to the receiver (NO_PUSH); a
// version 5 node skips the flag and counts on every link as before. With two neighbours each,
// so that the cap on inbound links that carry deltas (4) cuts some, 12 nodes are upgraded one
// by one under 5 % loss, with a change at every node at each step: every change reaches every
// node, no frame is refused anywhere and no node is declared dead.
TEST(ProbeDetector, ARollingUpgradeFromVersion5HoldsNoMissAndNoRefusedFrame) {
  const int n = 12;
  std::vector<bool> upgraded(n, false);
  NetOptions net;
  net.drop = 0.05;
  SimCluster c(net, ProbeOptions());
  c.SetBootHook([&](GossipOptions* o) {
    o->fanout = 2;
    if (!upgraded[std::stoi(o->node_id.substr(4))]) o->wire_version = 5;
  });
  JoinThroughNode0(&c, n);
  ASSERT_TRUE(c.RunUntilTrue([&] { return AllSeeAllAlive(c) && c.AllHoldAll(); }, 60000, 100));
  EXPECT_EQ(UpgradeOneByOne(&c, n, &upgraded), 0u);
  uint64_t refused = 0;
  for (int i = 0; i < n; ++i) refused += c.engine(i).stats().malformed_in;
  EXPECT_EQ(refused, 0u);
}

// Version 7 relays other origins' versions on probes without their digest, in a list a
// version 6 reader skips. Upgraded one by one (12 nodes, two neighbours each, 5 % loss), with
// every probe frame read on the way: none to a version 6 node carries relayed versions (it
// would lose them), the upgraded nodes relay to each other, every change reaches every node,
// no frame is refused and no node is declared dead.
TEST(ProbeDetector, ARollingUpgradeFromVersion6HoldsNoMissAndNoRefusedFrame) {
  const int n = 12;
  std::vector<bool> upgraded(n, false);
  NetOptions net;
  net.drop = 0.05;
  SimCluster c(net, ProbeOptions());
  c.SetBootHook([&](GossipOptions* o) {
    o->fanout = 2;
    if (!upgraded[std::stoi(o->node_id.substr(4))]) o->wire_version = 6;
  });
  size_t relayed_to_old = 0, relayed_to_new = 0, own_to_old = 0;
  c.SetFilter([&](const sim::Frame& f) {
    WireFrame w;
    if (!DecodeFrame(f.payload, WireLimits(), &w).ok() || w.header.type != WireType::kProbe) {
      return false;
    }
    (upgraded[f.to] ? relayed_to_new : relayed_to_old) += w.probe.relayed_versions.size();
    if (!upgraded[f.to]) own_to_old += w.probe.versions.size();
    return false;
  });
  JoinThroughNode0(&c, n);
  ASSERT_TRUE(c.RunUntilTrue([&] { return AllSeeAllAlive(c) && c.AllHoldAll(); }, 60000, 100));
  EXPECT_EQ(UpgradeOneByOne(&c, n, &upgraded), 0u);
  uint64_t refused = 0;
  for (int i = 0; i < n; ++i) refused += c.engine(i).stats().malformed_in;
  EXPECT_EQ(refused, 0u);
  EXPECT_EQ(relayed_to_old, 0u);
  EXPECT_GT(own_to_old, 0u);  // the version 6 nodes heard versions, in the list they read
  EXPECT_GT(relayed_to_new, 0u);
}

}  // namespace
}  // namespace peerbloom
