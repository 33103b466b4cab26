// A peer that restarts in a new epoch: its old summary keeps answering who-has as a stand-in
// until the new epoch's full summary replaces it (docs/gossip.md, "Members, epochs and
// heartbeats"). Fake clock throughout; no assertion rests on a Bloom filter saying "absent":
// listings are checked for keys the node holds, removals through the exact index entry.
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "peerbloom/gossip.h"
#include "peerbloom/summary.h"
#include "peerbloom/wire.h"
#include "tests/support/sim_cluster.h"

namespace peerbloom {
namespace {

using sim::Frame;
using sim::NodeSnapshot;
using sim::NodeSpec;
using sim::SimCluster;

constexpr int64_t kInterval = 1000;     // DefaultOptions: gossip interval
constexpr int64_t kTimeout = 10000;     // DefaultOptions: failure timeout
constexpr int64_t kAntiEntropy = 5000;  // DefaultOptions: anti-entropy interval
constexpr int kA = 0;                   // the node that restarts
constexpr int kB = 1;
constexpr int kC = 2;
const char kAId[] = "node0";

std::string Key(int node, int i) {
  return "http://n" + std::to_string(node) + "/" + std::to_string(i);
}

void AddKeys(SimCluster* c, int node, int count, int first = 0) {
  for (int i = first; i < first + count; ++i) c->AddKey(node, Key(node, i));
  c->Publish(node);
}

// Three nodes, each seeding the previous one; A holds 150 keys, B and C a few; converged.
// (150 to 215 keys fit A's 2^12-bit summary at k = 2 and 1 %: changes in that range go out as
// deltas, not as full summaries of a new size.)
void ConvergedThree(SimCluster* c) {
  for (int i = 0; i < 3; ++i) {
    NodeSpec s;
    s.id = "node" + std::to_string(i);
    s.seeds = {"node" + std::to_string((i + 2) % 3)};
    c->AddNode(s);
  }
  AddKeys(c, kA, 150);
  AddKeys(c, kB, 20);
  AddKeys(c, kC, 20);
  ASSERT_TRUE(c->RunUntilTrue([&] { return c->AllHoldAll(); }, 30000)) << "at " << c->now();
}

// Full summaries of origin A, sent by anyone: held back to keep the restart window open.
bool IsFullSummaryOfA(const Frame& f) {
  WireFrame frame;
  Summary s;
  return DecodeFrame(f.payload, WireLimits(), &frame).ok() &&
         frame.header.type == WireType::kFullSummary &&
         DecodeSummary(frame.summary_bytes, DecodeLimits(), &s).ok() && s.origin == kAId;
}

const PeerInfo* FindPeer(const std::vector<PeerInfo>& peers, const std::string& id) {
  for (const PeerInfo& p : peers) {
    if (p.node_id == id) return &p;
  }
  return nullptr;
}

// Watches who-has at the observers (B and C unless told), after every simulated event, for
// the keys A held when it restarted and holds still (what it adds in the new epoch is only
// known once the new summary arrives).
class Watch {
 public:
  Watch(SimCluster* c, std::multiset<std::string> keys, std::vector<int> observers = {kB, kC})
      : c_(c), keys_(std::move(keys)), observers_(std::move(observers)) {}

  // Runs until `done` holds or the deadline, checking after every event; returns done().
  bool RunUntil(const std::function<bool()>& done, int64_t deadline_ms) {
    return c_->RunUntilTrue(
        [&] {
          Check();
          return done();
        },
        deadline_ms);
  }
  void RunFor(int64_t ms) {
    RunUntil([] { return false; }, c_->now() + ms);
  }

  // Keys of A that B or C did not list for A, summed over every check.
  size_t misses() const { return misses_; }
  size_t checks() const { return checks_; }
  // Checks at which B (or C) held a stand-in: A's epoch is newer than its summary's.
  size_t stand_in_checks() const { return stand_in_checks_; }
  const std::string& first_miss() const { return first_miss_; }

 private:
  void Check() {
    ++checks_;
    for (int at : observers_) {
      const PeerInfo* a = FindPeer(c_->engine(at).Peers(c_->now()), kAId);
      if (a != nullptr && a->summary_epoch != 0 && a->summary_epoch < a->epoch) {
        ++stand_in_checks_;
      }
      for (const std::string& key : keys_) {
        if (c_->node(kA).keys.count(key) == 0 || c_->WhoHasLists(at, key, kA)) continue;
        if (misses_++ == 0) {
          first_miss_ =
              "node" + std::to_string(at) + " misses '" + key + "' at " + std::to_string(c_->now());
        }
      }
    }
  }

  SimCluster* c_;
  std::multiset<std::string> keys_;
  std::vector<int> observers_;
  size_t misses_ = 0;
  size_t checks_ = 0;
  size_t stand_in_checks_ = 0;
  std::string first_miss_;
};

// B's entry for A is exactly `s`: epoch, version and every bit.
void ExpectEntryIs(SimCluster* c, int at, const Summary& s) {
  Summary held;
  ASSERT_TRUE(c->engine(at).GetSummary(kAId, &held).ok());
  EXPECT_EQ(held.epoch, s.epoch);
  EXPECT_EQ(held.version, s.version);
  EXPECT_TRUE(held.filter == s.filter) << "node" << at << "'s entry for A differs";
  const PeerInfo* p = FindPeer(c->engine(at).Peers(c->now()), kAId);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->summary_epoch, s.epoch);
  EXPECT_EQ(p->version, s.version);
}

TEST(GossipRestart, CleanRestartKeepsTheOldSummaryListedUntilTheNewOneIsInstalled) {
  SimCluster c;
  ConvergedThree(&c);
  const Summary old = c.node(kA).builder->current();
  const uint64_t resyncs_before =
      c.engine(kB).stats().resyncs_requested + c.engine(kC).stats().resyncs_requested;
  const uint64_t deltas_before = c.engine(kB).stats().deltas_in + c.engine(kC).stats().deltas_in;
  // A stops cleanly (its snapshot holds everything) and starts again in epoch 2. Its full
  // summaries are held back for a while, so the window lasts several anti-entropy rounds.
  c.SetFilter(IsFullSummaryOfA);
  c.RestartFrom(kA, 2, c.Snapshot(kA));
  Watch watch(&c, c.node(kA).keys);
  watch.RunFor(2 * kInterval);
  // Keys added in the new epoch go out as deltas of epoch 2, which B and C must not apply to
  // the epoch-1 stand-in: they ask for the full summary instead (held back too).
  AddKeys(&c, kA, 20, 1000);
  watch.RunFor(2 * kAntiEntropy);
  for (int at : {kB, kC}) {
    const PeerInfo* p = FindPeer(c.engine(at).Peers(c.now()), kAId);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(p->alive);
    EXPECT_EQ(p->epoch, 2u);
    ExpectEntryIs(&c, at, old);  // untouched by the new epoch's deltas
  }
  EXPECT_GT(c.engine(kB).stats().deltas_in + c.engine(kC).stats().deltas_in, deltas_before);
  EXPECT_GT(c.engine(kB).stats().resyncs_requested + c.engine(kC).stats().resyncs_requested,
            resyncs_before);
  EXPECT_GT(watch.stand_in_checks(), 0u);

  c.SetFilter(nullptr);
  ASSERT_TRUE(watch.RunUntil([&] { return c.Holds(kB, kA) && c.Holds(kC, kA); },
                             c.now() + 3 * kAntiEntropy))
      << "at " << c.now();
  watch.RunFor(2 * kInterval);
  EXPECT_EQ(watch.misses(), 0u) << watch.first_miss();
  for (int at : {kB, kC}) ExpectEntryIs(&c, at, c.node(kA).builder->current());
  EXPECT_EQ(c.FalseNegatives(), 0u);
}

TEST(GossipRestart, KillNineRestartFromAnOlderSnapshotSwapsToTheExactNewSummary) {
  SimCluster c;
  ConvergedThree(&c);
  const NodeSnapshot snapshot = c.Snapshot(kA);
  // Changes after the snapshot reach B and C, then A is killed: they are lost with it.
  AddKeys(&c, kA, 50, 150);
  ASSERT_TRUE(c.RunUntilTrue([&] { return c.AllHoldAll(); }, c.now() + 10 * kInterval));
  const Summary old = c.node(kA).builder->current();
  c.SetFilter(IsFullSummaryOfA);
  c.RestartFrom(kA, 2, snapshot);
  ASSERT_EQ(c.node(kA).keys.size(), 150u);
  Watch watch(&c, c.node(kA).keys);
  watch.RunFor(2 * kInterval);
  // Content removed while the window is open: not in the new summary.
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(c.RemoveKey(kA, Key(kA, i)));
  c.Publish(kA);
  watch.RunFor(kAntiEntropy);
  for (int at : {kB, kC}) ExpectEntryIs(&c, at, old);
  EXPECT_GT(watch.stand_in_checks(), 0u);

  c.SetFilter(nullptr);
  ASSERT_TRUE(watch.RunUntil([&] { return c.Holds(kB, kA) && c.Holds(kC, kA); },
                             c.now() + 3 * kAntiEntropy))
      << "at " << c.now();
  EXPECT_EQ(watch.misses(), 0u) << watch.first_miss();
  // The entry is now exactly the new epoch's summary: without the 50 keys lost with the kill
  // and the 10 removed during the window (checked bit for bit, not by probing those keys).
  const Summary& now = c.node(kA).builder->current();
  EXPECT_EQ(now.epoch, 2u);
  for (int at : {kB, kC}) ExpectEntryIs(&c, at, now);
  EXPECT_EQ(c.FalseNegatives(), 0u);
}

// A frame of origin A's epoch-2 summary or delta as relayed late by C.
std::string RelayedByC(SimCluster* c, WireType type, const std::string& codec_bytes) {
  WireHeader h;
  h.cluster_tag = c->node(kC).options.cluster_tag;
  h.sender_id = c->node(kC).options.node_id;
  h.sender_epoch = c->node(kC).spec.epoch;
  h.sender_heartbeat = 1;  // not news: only the body matters
  std::string frame;
  EXPECT_TRUE(EncodeSummaryFrame(h, type, codec_bytes, &frame).ok());
  return frame;
}

TEST(GossipRestart, TwoQuickRestartsAndLateFramesOfTheMiddleEpochChangeNothing) {
  SimCluster c;
  ConvergedThree(&c);
  const Summary old = c.node(kA).builder->current();
  c.SetFilter(IsFullSummaryOfA);
  c.RestartFrom(kA, 2, c.Snapshot(kA));
  Watch watch(&c, c.node(kA).keys);
  watch.RunFor(2 * kInterval);
  // Epoch 2's full summary, and a delta on top of it, as they might still be travelling.
  const Summary mid_full = c.node(kA).builder->current();
  ASSERT_EQ(mid_full.epoch, 2u);
  Summary mid_next = mid_full;
  ++mid_next.version;
  mid_next.filter.Add(c.hasher().Hash("http://n0/late"));
  SummaryDelta mid_delta;
  ASSERT_TRUE(ComputeDelta(mid_full, mid_next, &mid_delta).ok());
  std::string full_bytes, delta_bytes;
  ASSERT_TRUE(EncodeSummary(mid_full, &full_bytes).ok());
  ASSERT_TRUE(EncodeDelta(mid_delta, &delta_bytes).ok());
  // Restarted again, in epoch 3, from a snapshot taken at once.
  c.RestartFrom(kA, 3, c.Snapshot(kA));
  watch.RunFor(2 * kInterval);
  for (int at : {kB, kC}) {
    const PeerInfo* p = FindPeer(c.engine(at).Peers(c.now()), kAId);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->epoch, 3u);
    ExpectEntryIs(&c, at, old);  // still the epoch-1 stand-in
  }
  // Epoch 2's frames turn up late through C: older than the member's epoch, they are stale
  // and leave the stand-in as it was.
  const uint64_t stale = c.engine(kB).stats().stale_dropped;
  EXPECT_TRUE(
      c.engine(kB).OnMessage(RelayedByC(&c, WireType::kFullSummary, full_bytes), c.now()).ok());
  EXPECT_TRUE(c.engine(kB).OnMessage(RelayedByC(&c, WireType::kDelta, delta_bytes), c.now()).ok());
  EXPECT_EQ(c.engine(kB).stats().stale_dropped, stale + 2);
  ExpectEntryIs(&c, kB, old);

  c.SetFilter(nullptr);
  ASSERT_TRUE(watch.RunUntil([&] { return c.Holds(kB, kA) && c.Holds(kC, kA); },
                             c.now() + 3 * kAntiEntropy))
      << "at " << c.now();
  EXPECT_EQ(watch.misses(), 0u) << watch.first_miss();
  // And once more after epoch 3 is installed: still stale, the entry stays exact.
  EXPECT_TRUE(
      c.engine(kB).OnMessage(RelayedByC(&c, WireType::kFullSummary, full_bytes), c.now()).ok());
  EXPECT_TRUE(c.engine(kB).OnMessage(RelayedByC(&c, WireType::kDelta, delta_bytes), c.now()).ok());
  ExpectEntryIs(&c, kB, c.node(kA).builder->current());
  EXPECT_EQ(c.node(kA).builder->current().epoch, 3u);
}

TEST(GossipRestart, StandInOfARestartedPeerThatFallsSilentGoesAfterTheFailureTimeout) {
  SimCluster c;
  ConvergedThree(&c);
  c.SetFilter(IsFullSummaryOfA);
  c.RestartFrom(kA, 2, c.Snapshot(kA));
  Watch watch(&c, c.node(kA).keys, {kB});
  ASSERT_TRUE(watch.RunUntil([&] { return watch.stand_in_checks() > 0; }, c.now() + kAntiEntropy));
  watch.RunFor(kInterval);
  c.node(kA).up = false;  // down again before its new summary got anywhere
  // Its last frames and their relays by C settle within two intervals.
  watch.RunFor(2 * kInterval);
  // Listed at every event up to the failure timeout after B last heard of it.
  const PeerInfo* p = FindPeer(c.engine(kB).Peers(c.now()), kAId);
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->alive);
  ASSERT_EQ(p->summary_epoch, 1u);
  const int64_t heard = p->last_heard_ms;
  watch.RunFor(kTimeout - (c.now() - heard));
  ASSERT_EQ(c.now(), heard + kTimeout);
  for (const std::string& key : c.node(kA).keys) EXPECT_TRUE(c.WhoHasLists(kB, key, kA));
  EXPECT_EQ(watch.misses(), 0u) << watch.first_miss();
  EXPECT_EQ(FindPeer(c.engine(kB).Peers(c.now()), kAId)->last_heard_ms, heard);

  // One millisecond later it is dead: a silent peer is not routed to, stand-in or not.
  c.RunFor(1);
  std::vector<PeerMatch> out;
  for (const std::string& key : c.node(kA).keys) {
    c.engine(kB).WhoHas(key, c.hasher().Hash(key), c.now(), &out);
  }
  for (const PeerMatch& m : out) EXPECT_NE(m.node_id, kAId);
  // By its next round B has dropped the stand-in itself.
  c.RunFor(kInterval);
  Summary held;
  EXPECT_TRUE(c.engine(kB).GetSummary(kAId, &held).IsNotFound());
  p = FindPeer(c.engine(kB).Peers(c.now()), kAId);
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(p->alive);
  EXPECT_EQ(p->epoch, 2u);
  EXPECT_EQ(p->summary_epoch, 0u);
  EXPECT_EQ(p->version, 0u);
  EXPECT_EQ(p->k, 0u);
}

// Hand-driven: exactly what B does with a stand-in, frame by frame.

GossipOptions Options(const std::string& id) {
  GossipOptions o;
  o.node_id = id;
  o.endpoint = "tcp://" + id + ":1";
  o.key_scheme = KeyScheme::kRaw;
  o.cluster_tag = ClusterTag("unit");
  return o;
}

Summary MakeSummary(uint64_t epoch, uint64_t version, const std::vector<KeyHash>& keys) {
  Summary s;
  s.origin = "a";
  s.epoch = epoch;
  s.version = version;
  s.key_scheme = KeyScheme::kRaw;
  s.filter = BloomFilter(10, 2);
  for (const KeyHash& h : keys) s.filter.Add(h);
  s.estimated_items = keys.size();
  return s;
}

WireHeader From(const std::string& id, uint64_t epoch, uint64_t heartbeat) {
  WireHeader h;
  h.flags = kWireFlagContact;
  h.cluster_tag = ClusterTag("unit");
  h.sender_id = id;
  h.sender_endpoint = "tcp://" + id + ":1";
  h.sender_epoch = epoch;
  h.sender_heartbeat = heartbeat;
  return h;
}

std::string FullFrame(const WireHeader& h, const Summary& s) {
  std::string codec, frame;
  EXPECT_TRUE(EncodeSummary(s, &codec).ok());
  EXPECT_TRUE(EncodeSummaryFrame(h, WireType::kFullSummary, codec, &frame).ok());
  return frame;
}

std::vector<WireFrame> Sent(GossipEngine* e, std::vector<Outgoing>* keep) {
  *keep = e->TakeOutgoing();
  std::vector<WireFrame> out;
  for (const Outgoing& o : *keep) {
    WireFrame f;
    EXPECT_TRUE(DecodeFrame(o.payload, WireLimits(), &f).ok());
    out.push_back(std::move(f));
  }
  return out;
}

bool Lists(const GossipEngine& b, const KeyHash& key, int64_t now) {
  std::vector<PeerMatch> out;
  b.WhoHas("k", key, now, &out);
  return out.size() == 1 && out[0].node_id == "a";
}

TEST(GossipRestart, StandInIsListedButNeitherBuiltOnNorAnnouncedNorServed) {
  GossipEngine b(Options("b"));
  const KeyHash kept{0x1111, 0x2222};
  const KeyHash added{0x3333, 0x4444};
  const Summary old = MakeSummary(1, 7, {kept});
  ASSERT_TRUE(b.OnMessage(FullFrame(From("a", 1, 5), old), 100).ok());
  ASSERT_TRUE(Lists(b, kept, 100));

  // A's first frame in epoch 2: a heartbeat digest, no summary yet.
  std::string frame;
  ASSERT_TRUE(EncodeDigestFrame(From("a", 2, 1), DigestBody(), &frame).ok());
  ASSERT_TRUE(b.OnMessage(frame, 200).ok());
  std::vector<PeerInfo> peers = b.Peers(200);
  ASSERT_EQ(peers.size(), 1u);
  EXPECT_EQ(peers[0].epoch, 2u);
  EXPECT_EQ(peers[0].summary_epoch, 1u);
  EXPECT_EQ(peers[0].version, 7u);
  EXPECT_TRUE(peers[0].alive);
  EXPECT_TRUE(Lists(b, kept, 200));
  Summary held;
  ASSERT_TRUE(b.GetSummary("a", &held).ok());
  EXPECT_EQ(held.epoch, 1u);  // never relabelled as epoch 2
  EXPECT_EQ(held.version, 7u);

  // A delta of epoch 2 whose base happens to equal the stand-in's version: still a gap.
  const Summary next = MakeSummary(2, 8, {kept, added});
  SummaryDelta d;
  ASSERT_TRUE(ComputeDelta(MakeSummary(2, 7, {kept}), next, &d).ok());
  std::string codec;
  ASSERT_TRUE(EncodeDelta(d, &codec).ok());
  ASSERT_TRUE(EncodeSummaryFrame(From("a", 2, 2), WireType::kDelta, codec, &frame).ok());
  std::vector<Outgoing> raw;
  (void)Sent(&b, &raw);
  ASSERT_TRUE(b.OnMessage(frame, 300).ok());
  ASSERT_TRUE(b.GetSummary("a", &held).ok());
  EXPECT_EQ(held.epoch, 1u);
  EXPECT_EQ(held.version, 7u);
  EXPECT_TRUE(held.filter == old.filter);
  std::vector<WireFrame> sent = Sent(&b, &raw);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(raw[0].endpoint, "tcp://a:1");
  ASSERT_EQ(sent[0].header.type, WireType::kRequestFull);
  EXPECT_EQ(sent[0].requests, (std::vector<FullRequest>{{"a", 2, 0}}));  // nothing to build on

  // Its complete digest does not announce the stand-in; a request for A is not answered with
  // it, and neither is a join from C.
  DigestBody join;
  join.flags = kDigestComplete | kDigestReplyWanted;
  ASSERT_TRUE(EncodeDigestFrame(From("c", 1, 1), join, &frame).ok());
  ASSERT_TRUE(b.OnMessage(frame, 400).ok());
  ASSERT_TRUE(EncodeRequestFullFrame(From("c", 1, 2), {{"a", 2, 0}}, &frame).ok());
  ASSERT_TRUE(b.OnMessage(frame, 400).ok());
  bool digest_seen = false;
  for (const WireFrame& f : Sent(&b, &raw)) {
    EXPECT_NE(f.header.type, WireType::kFullSummary);
    for (const DigestEntry& e : f.digest.entries) {
      if (e.origin != "a") continue;
      digest_seen = true;
      EXPECT_EQ(e.epoch, 2u);
      EXPECT_FALSE(e.has_summary);
      EXPECT_EQ(e.version, 0u);
    }
  }
  EXPECT_TRUE(digest_seen);
  EXPECT_TRUE(Lists(b, kept, 400));

  // The new epoch's full summary replaces the stand-in in one step, version 1 below 7 or not.
  const Summary fresh = MakeSummary(2, 1, {added});
  ASSERT_TRUE(b.OnMessage(FullFrame(From("a", 2, 3), fresh), 500).ok());
  ASSERT_TRUE(b.GetSummary("a", &held).ok());
  EXPECT_EQ(held.epoch, 2u);
  EXPECT_EQ(held.version, 1u);
  EXPECT_TRUE(held.filter == fresh.filter);
  peers = b.Peers(500);
  EXPECT_EQ(peers[0].summary_epoch, 2u);
  EXPECT_TRUE(Lists(b, added, 500));
}

}  // namespace
}  // namespace peerbloom
