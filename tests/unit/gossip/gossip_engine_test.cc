// One or two GossipEngines driven by hand: refusals, counters, queues, seeds, who-has details.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "peerbloom/gossip.h"
#include "peerbloom/summary.h"
#include "peerbloom/wire.h"

namespace peerbloom {
namespace {

GossipOptions Options(const std::string& id) {
  GossipOptions o;
  o.node_id = id;
  o.endpoint = "tcp://" + id + ":1";
  o.key_scheme = KeyScheme::kRaw;
  o.cluster_tag = ClusterTag("unit");
  return o;
}

Summary MakeSummary(const std::string& origin, uint64_t epoch, uint64_t version,
                    const std::vector<KeyHash>& keys) {
  Summary s;
  s.origin = origin;
  s.epoch = epoch;
  s.version = version;
  s.key_scheme = KeyScheme::kRaw;
  s.filter = BloomFilter(10, 2);
  for (const KeyHash& h : keys) s.filter.Add(h);
  s.estimated_items = keys.size();
  return s;
}

WireHeader HeaderFrom(const GossipOptions& o) {
  WireHeader h;
  h.flags = kWireFlagContact;
  h.cluster_tag = o.cluster_tag;
  h.sender_id = o.node_id;
  h.sender_endpoint = o.endpoint;
  h.sender_epoch = 1;
  h.sender_heartbeat = 1;
  return h;
}

// Delivers every frame between the engines until none is left; returns frames moved.
int Exchange(std::map<std::string, GossipEngine*> by_endpoint, int64_t now) {
  int moved = 0;
  for (bool again = true; again;) {
    again = false;
    for (auto& [endpoint, engine] : by_endpoint) {
      for (Outgoing& o : engine->TakeOutgoing()) {
        auto it = by_endpoint.find(o.endpoint);
        if (it == by_endpoint.end()) continue;
        EXPECT_TRUE(it->second->OnMessage(o.payload, now).ok());
        again = true;
        ++moved;
      }
    }
  }
  return moved;
}

TEST(GossipEngine, RefusesOwnFramesOtherClustersAndGarbage) {
  const GossipOptions a_opt = Options("a");
  GossipEngine a(a_opt);
  std::string frame;
  ASSERT_TRUE(EncodeDigestFrame(HeaderFrom(a_opt), DigestBody(), &frame).ok());
  Status s = a.OnMessage(frame, 10);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(s.message(), "frame from this node itself");

  WireHeader other = HeaderFrom(Options("b"));
  other.cluster_tag = ClusterTag("another");
  ASSERT_TRUE(EncodeDigestFrame(other, DigestBody(), &frame).ok());
  s = a.OnMessage(frame, 10);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(s.message(),
            "frame of another cluster (tag '" + std::to_string(ClusterTag("another")) + "')");

  EXPECT_TRUE(a.OnMessage("garbage", 10).IsCorruption());
  EXPECT_EQ(a.stats().malformed_in, 3u);
  EXPECT_EQ(a.stats().messages_in, 3u);
  EXPECT_TRUE(a.Peers(10).empty());  // nothing was learned from refused frames
}

TEST(GossipEngine, RefusesSummariesOfAnotherKeyScheme) {
  GossipEngine a(Options("a"));
  Summary s = MakeSummary("b", 1, 1, {{1, 2}});
  s.key_scheme = KeyScheme::kSquidMd5;
  std::string codec, frame;
  ASSERT_TRUE(EncodeSummary(s, &codec).ok());
  ASSERT_TRUE(
      EncodeSummaryFrame(HeaderFrom(Options("b")), WireType::kFullSummary, codec, &frame).ok());
  const Status st = a.OnMessage(frame, 5);
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_EQ(st.message(), "summary of key scheme 'squid-md5'");
  EXPECT_TRUE(a.Peers(5).empty());
}

TEST(GossipEngine, WhoHasNamesPeerEndpointAndSummaryAge) {
  GossipOptions a_opt = Options("a");
  GossipOptions b_opt = Options("b");
  b_opt.seeds = {Seed{a_opt.endpoint, ""}};
  GossipEngine a(a_opt), b(b_opt);
  const KeyHash key{0x1234, 0x5678};
  a.PublishFull(MakeSummary("a", 1, 1, {key}), 100);
  b.PublishFull(MakeSummary("b", 1, 1, {}), 100);
  a.OnTick(100);
  b.OnTick(100);
  Exchange({{a_opt.endpoint, &a}, {b_opt.endpoint, &b}}, 100);
  std::vector<PeerMatch> out;
  b.WhoHas("k", key, 400, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].node_id, "a");
  EXPECT_EQ(out[0].endpoint, a_opt.endpoint);
  EXPECT_EQ(out[0].summary_age_ms, 300);
  EXPECT_FALSE(out[0].imported);
  // A never lists itself, and B has no summary listing A's absent keys.
  out.clear();
  a.WhoHas("k", key, 400, &out);
  EXPECT_TRUE(out.empty());
  // B's next round picks its only member, the seed, as a neighbour (a seed is not one as such).
  b.OnTick(100 + b_opt.gossip_interval_ms);
  // After the failure timeout without news, A is dead at B and drops out of who-has.
  out.clear();
  b.WhoHas("k", key, 100 + b_opt.failure_timeout_ms + 1, &out);
  EXPECT_TRUE(out.empty());
  const std::vector<PeerInfo> peers = b.Peers(100 + b_opt.failure_timeout_ms + 1);
  ASSERT_EQ(peers.size(), 1u);
  EXPECT_FALSE(peers[0].alive);
  EXPECT_TRUE(peers[0].chosen);
  EXPECT_EQ(peers[0].version, 1u);
  EXPECT_EQ(peers[0].k, 2u);
  EXPECT_EQ(peers[0].log2_bits, 10u);
}

TEST(GossipEngine, DeltasThatDoNotFitTheLocalSummaryAreRefused) {
  GossipEngine a(Options("a"));
  Summary base = MakeSummary("a", 1, 1, {{1, 2}});
  EXPECT_TRUE(a.PublishFull(base, 0));
  Summary next = MakeSummary("a", 1, 2, {{1, 2}, {3, 4}});
  SummaryDelta d;
  ASSERT_TRUE(ComputeDelta(base, next, &d).ok());
  SummaryDelta wrong_base = d;
  wrong_base.base_version = 7;
  EXPECT_FALSE(a.PublishDelta(wrong_base, 1));
  SummaryDelta wrong_digest = d;
  wrong_digest.result_digest ^= 1;
  EXPECT_FALSE(a.PublishDelta(wrong_digest, 1));
  EXPECT_EQ(a.stats().local_publish_refused, 2u);
  EXPECT_TRUE(a.PublishDelta(d, 1));
  EXPECT_EQ(a.stats().local_publish_refused, 2u);
  Summary held;
  ASSERT_TRUE(a.GetSummary("a", &held).ok());
  EXPECT_EQ(held.version, 2u);
  EXPECT_EQ(held.filter, next.filter);
  Summary wrong_origin = MakeSummary("z", 1, 1, {});
  a.PublishFull(wrong_origin, 2);
  EXPECT_EQ(a.stats().local_publish_refused, 3u);
}

TEST(GossipEngine, PerEndpointByteCapDropsAndCounts) {
  GossipOptions o = Options("a");
  o.max_pending_bytes_per_endpoint = 300;
  o.seeds = {Seed{"tcp://s:1", ""}};
  GossipEngine a(o);
  a.PublishFull(MakeSummary("a", 1, 1, {}), 0);
  for (int64_t t = 0; t <= 10 * o.anti_entropy_interval_ms; t += o.gossip_interval_ms) {
    a.OnTick(t);  // join digests to the seed pile up: TakeOutgoing is never called
  }
  EXPECT_GT(a.stats().queue_dropped, 0u);
  EXPECT_GT(a.stats().queue_dropped_bytes, 0u);
  size_t bytes = 0;
  for (const Outgoing& out : a.TakeOutgoing()) bytes += out.payload.size();
  EXPECT_LE(bytes, 300u);
  EXPECT_GT(bytes, 0u);
}

TEST(GossipEngine, JoinsSeedsAndRetriesUntilHeard) {
  GossipOptions o = Options("a");
  o.seeds = {Seed{"tcp://s:1", std::string(40, 'K')}};
  GossipEngine a(o);
  EXPECT_EQ(a.NextDeadline(), 0);  // not started: tick at once
  a.OnTick(1000);
  std::vector<Outgoing> out = a.TakeOutgoing();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].endpoint, "tcp://s:1");
  EXPECT_EQ(out[0].public_key, std::string(40, 'K'));
  WireFrame f;
  ASSERT_TRUE(DecodeFrame(out[0].payload, WireLimits(), &f).ok());
  EXPECT_EQ(f.header.type, WireType::kDigest);
  EXPECT_EQ(f.digest.flags, kDigestComplete | kDigestReplyWanted);
  EXPECT_EQ(a.NextDeadline(), 1000 + o.gossip_interval_ms);
  // No answer: the next join goes out one anti-entropy interval later, not every round.
  int joins = 0;
  for (int64_t t = 1000 + o.gossip_interval_ms; t <= 1000 + o.anti_entropy_interval_ms;
       t += o.gossip_interval_ms) {
    a.OnTick(t);
    joins += static_cast<int>(a.TakeOutgoing().size());
  }
  EXPECT_EQ(joins, 1);
}

TEST(GossipEngine, SetSeedsReportsEndpointsNoLongerNeeded) {
  GossipOptions o = Options("a");
  o.seeds = {Seed{"tcp://s1:1", ""}, Seed{"tcp://s2:1", ""}};
  GossipEngine a(o);
  a.OnTick(0);
  a.SetSeeds({Seed{"tcp://s2:1", ""}}, 10);
  EXPECT_EQ(a.TakeDropped(), std::vector<std::string>{"tcp://s1:1"});
}

TEST(GossipEngine, ForgetsDeadMembersWhenAsked) {
  GossipOptions a_opt = Options("a");
  a_opt.forget_dead_after_ms = 5000;
  GossipOptions b_opt = Options("b");
  b_opt.seeds = {Seed{a_opt.endpoint, ""}};
  GossipEngine a(a_opt), b(b_opt);
  b.OnTick(0);
  Exchange({{a_opt.endpoint, &a}, {b_opt.endpoint, &b}}, 0);
  ASSERT_EQ(a.Peers(0).size(), 1u);
  const int64_t gone = a_opt.failure_timeout_ms + a_opt.forget_dead_after_ms + 1;
  a.OnTick(gone / 2);
  EXPECT_EQ(a.Peers(gone / 2).size(), 1u);
  a.OnTick(gone);
  EXPECT_TRUE(a.Peers(gone).empty());
}

TEST(GossipEngine, OptionsAreValidated) {
  EXPECT_TRUE(ValidateGossipOptions(Options("a")).ok());
  GossipOptions o = Options("a");
  o.node_id = "bad id";
  EXPECT_EQ(ValidateGossipOptions(o).message(), "invalid node id 'bad id'");
  o = Options("a");
  o.heartbeat_interval_ms = o.failure_timeout_ms / 2;
  EXPECT_EQ(ValidateGossipOptions(o).message(),
            "heartbeat interval '5000' must be positive and below half the failure timeout "
            "'10000'");
  o = Options("a");
  o.gossip_interval_ms = 0;
  EXPECT_EQ(ValidateGossipOptions(o).message(),
            "gossip option 'gossip_interval_ms' must be positive, not '0'");
  o = Options("a");
  o.max_members = o.wire_limits.max_entries;
  EXPECT_TRUE(ValidateGossipOptions(o).IsInvalidArgument());
}

}  // namespace
}  // namespace peerbloom
