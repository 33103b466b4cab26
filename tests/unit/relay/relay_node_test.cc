#include <algorithm>
#include <map>
#include <memory>
#include <queue>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "peerbloom/relay.h"

namespace peerbloom {
namespace {

// A small in-process network of RelayNodes: random latency (2..6 ms), optional loss, nodes
// that can be killed (their packets vanish, neighbours are not told), ticks every 20 ms.
class Net {
 public:
  Net(size_t n, const std::vector<std::pair<size_t, size_t>>& edges, RelayOptions base,
      double loss = 0, uint64_t seed = 7, const std::map<size_t, RelayOptions>& overrides = {})
      : loss_(loss), rng_(seed) {
    std::vector<std::vector<std::string>> links(n);
    for (auto [a, b] : edges) {
      links[a].push_back(Name(b));
      links[b].push_back(Name(a));
    }
    for (size_t i = 0; i < n; ++i) {
      RelayOptions o = overrides.contains(i) ? overrides.at(i) : base;
      o.node_id = Name(i);
      nodes_.push_back(std::make_unique<RelayNode>(o));
      nodes_.back()->SetLinks(links[i]);
    }
    delivered_.resize(n);
  }
  static std::string Name(size_t i) { return "n" + std::to_string(i); }

  RelayNode& node(size_t i) { return *nodes_[i]; }
  void Kill(size_t i) { dead_.insert(i); }
  uint64_t now() const { return now_ms_; }

  Status Broadcast(size_t origin, const std::string& payload) {
    const Status s = nodes_[origin]->Broadcast(payload, now_ms_);
    Collect(origin);
    return s;
  }
  // Runs until nothing is in flight and every node is idle (bounded by `max_ms`).
  void Settle(uint64_t max_ms = 600000) {
    const uint64_t end = now_ms_ + max_ms;
    while (now_ms_ < end) {
      const uint64_t next_tick = (now_ms_ / 20 + 1) * 20;
      while (!queue_.empty() && std::get<0>(queue_.top()) <= next_tick) {
        auto [t, seq, to, from, bytes] = queue_.top();
        queue_.pop();
        now_ms_ = t;
        nodes_[to]->OnPacket(Name(from), bytes, now_ms_);
        Collect(to);
      }
      now_ms_ = next_tick;
      bool idle = queue_.empty();
      for (size_t i = 0; i < nodes_.size(); ++i) {
        if (dead_.contains(i)) continue;
        nodes_[i]->OnTick(now_ms_);
        Collect(i);
        idle = idle && nodes_[i]->Idle();
      }
      if (idle && queue_.empty()) return;
    }
  }
  // Deliveries of (origin, id) at node i.
  const std::map<std::pair<std::string, uint64_t>, int>& delivered(size_t i) const {
    return delivered_[i];
  }
  uint32_t max_hops_seen() const { return max_hops_; }
  uint32_t hop_limit_seen() const { return hop_limit_; }

 private:
  void Collect(size_t from) {
    for (RelaySend& s : nodes_[from]->TakeSends()) {
      if (s.kind == RelayKind::kData) {
        RelayPacket p;
        EXPECT_TRUE(DecodeRelayPacket(s.packet, RelayLimits(), &p).ok());
        max_hops_ = std::max(max_hops_, p.data.hops);
        hop_limit_ = p.data.hop_limit;
      }
      const size_t to = std::stoul(s.to.substr(1));
      if (dead_.contains(from) || dead_.contains(to)) continue;
      if (loss_ > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < loss_) continue;
      const uint64_t latency = 2 + rng_() % 5;
      queue_.emplace(now_ms_ + latency, seq_++, to, from, std::move(s.packet));
    }
    for (const RelayDelivery& d : nodes_[from]->TakeDeliveries()) {
      ++delivered_[from][{d.origin, d.id}];
    }
  }

  using Item = std::tuple<uint64_t, uint64_t, size_t, size_t, std::string>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue_;
  std::vector<std::unique_ptr<RelayNode>> nodes_;
  std::vector<std::map<std::pair<std::string, uint64_t>, int>> delivered_;
  std::set<size_t> dead_;
  double loss_;
  std::mt19937_64 rng_;
  uint64_t now_ms_ = 1000;
  uint64_t seq_ = 0;
  uint32_t max_hops_ = 0;
  uint32_t hop_limit_ = 0;
};

// 8 nodes on a ring, with chords 0-4, 2-6 and 1-5: cycles of length 3 to 8.
std::vector<std::pair<size_t, size_t>> RingWithChords() {
  std::vector<std::pair<size_t, size_t>> e;
  for (size_t i = 0; i < 8; ++i) e.push_back({i, (i + 1) % 8});
  e.insert(e.end(), {{0, 4}, {2, 6}, {1, 5}});
  return e;
}

RelayOptions Base() {
  RelayOptions o;
  o.hop_limit = 6;
  o.flow.max_per_window = 0;
  return o;
}

// Every node delivers each of `count` broadcasts per origin exactly once.
void ExpectExactlyOnce(const Net& net, size_t nodes, const std::set<size_t>& skip,
                       size_t expected_messages) {
  for (size_t i = 0; i < nodes; ++i) {
    if (skip.contains(i)) continue;
    EXPECT_EQ(net.delivered(i).size(), expected_messages) << "node " << i;
    for (const auto& [key, times] : net.delivered(i)) {
      ASSERT_EQ(times, 1) << "node " << i << " message " << key.first << "/" << key.second;
    }
  }
}

TEST(RelayNode, EveryBroadcastOnceAtEveryNodeOfACyclicMesh) {
  Net net(8, RingWithChords(), Base());
  std::mt19937 rng(3);
  for (int b = 0; b < 1000; ++b) {
    ASSERT_TRUE(net.Broadcast(rng() % 8, "m" + std::to_string(b)).ok());
    if (b % 50 == 49) net.Settle();
  }
  net.Settle();
  ExpectExactlyOnce(net, 8, {}, 1000);
  EXPECT_LE(net.max_hops_seen(), 6u);
}

TEST(RelayNode, LossIsRepaired) {
  Net net(8, RingWithChords(), Base(), 0.2);
  for (int b = 0; b < 200; ++b) {
    ASSERT_TRUE(net.Broadcast(b % 8, "m").ok());
    net.Settle();
  }
  ExpectExactlyOnce(net, 8, {}, 200);
}

TEST(RelayNode, NothingTravelsPastTheHopLimit) {
  RelayOptions o = Base();
  o.hop_limit = 3;
  std::vector<std::pair<size_t, size_t>> chain;
  for (size_t i = 0; i + 1 < 7; ++i) chain.push_back({i, i + 1});
  Net net(7, chain, o);
  ASSERT_TRUE(net.Broadcast(0, "x").ok());
  net.Settle();
  for (size_t i = 0; i < 7; ++i) EXPECT_EQ(net.delivered(i).size(), i <= 3 ? 1u : 0u) << i;
  EXPECT_EQ(net.max_hops_seen(), 3u);
  EXPECT_EQ(net.node(3).stats().hop_limited, 1u);
}

TEST(RelayNode, NodeKilledMidStreamDoesNotStopTheRest) {
  Net net(8, RingWithChords(), Base(), 0.05);
  for (int b = 0; b < 100; ++b) {
    if (b == 50) net.Kill(3);
    size_t origin = b % 8;
    if (b >= 50 && origin == 3) origin = 0;
    ASSERT_TRUE(net.Broadcast(origin, "m").ok());
    if (b % 10 == 9) net.Settle();
  }
  net.Settle();
  ExpectExactlyOnce(net, 8, {3}, 100);
}

TEST(RelayNode, FilterFalsePositivesCostNoDelivery) {
  // A 1-byte filter with one probe names most neighbours after a few hops: nearly every
  // eager push becomes an announcement, and repair still delivers everything once.
  RelayOptions o = Base();
  o.filter_fp_rate = 0.9;
  Net net(8, RingWithChords(), o);
  ASSERT_EQ(net.node(0).filter_size().bytes, 1u);
  for (int b = 0; b < 100; ++b) {
    ASSERT_TRUE(net.Broadcast(b % 8, "m").ok());
    net.Settle();
  }
  ExpectExactlyOnce(net, 8, {}, 100);
  uint64_t skips = 0;
  for (size_t i = 0; i < 8; ++i) skips += net.node(i).stats().filter_skips;
  EXPECT_GT(skips, 0u);
}

// A node that got a message at the hop limit forwards nothing, until a neighbour (here on a
// link added since) announces the message fewer hops from the origin.
TEST(RelayNode, MessageAtTheLimitMovesOnWhenAShorterWayIsAnnounced) {
  RelayOptions o = Base();
  o.node_id = "x";
  o.hop_limit = 4;
  RelayNode node(o);
  node.SetLinks({"a"});
  RelayPacket data;
  data.data.origin = "o";
  data.data.id = 1;
  data.data.hop_limit = 4;
  data.data.hops = 4;
  data.data.filter_k = 7;
  data.data.filter = std::string(8, '\0');
  data.data.payload = "p";
  std::string bytes;
  ASSERT_TRUE(EncodeRelayPacket(data, RelayLimits(), &bytes).ok());
  node.OnPacket("a", bytes, 1000);
  EXPECT_EQ(node.TakeDeliveries().size(), 1u);
  EXPECT_TRUE(node.TakeSends().empty());
  EXPECT_EQ(node.stats().hop_limited, 1u);

  node.SetLinks({"a", "b"});
  RelayPacket ihave;
  ihave.kind = RelayKind::kIHave;
  ihave.refs = {{"o", 1, 2}};
  ASSERT_TRUE(EncodeRelayPacket(ihave, RelayLimits(), &bytes).ok());
  node.OnPacket("b", bytes, 1010);
  EXPECT_TRUE(node.TakeDeliveries().empty());  // delivered once only
  bool pushed = false;
  for (const RelaySend& s : node.TakeSends()) {
    if (s.kind != RelayKind::kData) continue;
    RelayPacket p;
    ASSERT_TRUE(DecodeRelayPacket(s.packet, RelayLimits(), &p).ok());
    EXPECT_EQ(s.to, "a");
    EXPECT_EQ(p.data.hops, 3u);
    pushed = true;
  }
  EXPECT_TRUE(pushed);
  EXPECT_EQ(node.stats().shortened, 1u);
}

// A relay passes an origin's signature on (whether or not it verifies): the DATA
// packet it forwards keeps the SIGNED flag and the 64 signature bytes, and the bytes the
// signature covers are the same before and after the hop.
TEST(RelayNode, ForwardsAnOriginSignatureUnchanged) {
  RelayOptions o = Base();
  o.node_id = "x";
  RelayNode node(o);
  node.SetLinks({"a", "b"});
  RelayPacket in;
  in.data.origin = "o";
  in.data.id = 1;
  in.data.hop_limit = 6;
  in.data.hops = 1;
  in.data.filter_k = 7;
  in.data.filter = std::string(8, '\0');
  in.data.payload = "p";
  in.data.flags = kRelayFlagSigned;
  in.data.signature = std::string(kRelaySignatureBytes, 'S');
  std::string bytes;
  ASSERT_TRUE(EncodeRelayPacket(in, RelayLimits(), &bytes).ok());
  node.OnPacket("a", bytes, 1000);
  ASSERT_EQ(node.TakeDeliveries().size(), 1u);
  size_t forwarded = 0;
  for (const RelaySend& s : node.TakeSends()) {
    if (s.kind != RelayKind::kData) continue;
    RelayPacket out;
    ASSERT_TRUE(DecodeRelayPacket(s.packet, RelayLimits(), &out).ok());
    EXPECT_EQ(s.to, "b");
    EXPECT_EQ(out.data.hops, 2u);
    EXPECT_EQ(out.data.flags, kRelayFlagSigned);
    EXPECT_EQ(out.data.signature, in.data.signature);
    std::string covered_in, covered_out;
    ASSERT_TRUE(RelaySignedBytes(in.data, &covered_in).ok());
    ASSERT_TRUE(RelaySignedBytes(out.data, &covered_out).ok());
    EXPECT_EQ(covered_out, covered_in);
    ++forwarded;
  }
  EXPECT_EQ(forwarded, 1u);
}

TEST(RelayNode, FloodingOriginIsThrottledWhileOthersGetThrough) {
  RelayOptions o = Base();
  o.flow.max_per_window = 20;
  o.flow.window_ms = 100000000;  // longer than the test runs: nothing slides out
  // Node 0 runs without a limit of its own (a misconfigured or hostile origin).
  RelayOptions loud = o;
  loud.flow.max_per_window = 0;
  Net net(8, RingWithChords(), o, 0, 7, {{0, loud}});
  for (int b = 0; b < 200; ++b) {
    ASSERT_TRUE(net.Broadcast(0, "flood").ok());
    if (b % 10 == 0) {
      ASSERT_TRUE(net.Broadcast(1 + b / 10 % 7, "quiet").ok());
    }
    net.Settle();
  }
  // Every other node takes 20 of the flood's 200 in the window and all 20 quiet messages.
  for (size_t i = 1; i < 8; ++i) {
    size_t from_loud = 0, from_quiet = 0;
    for (const auto& [key, times] : net.delivered(i)) {
      ASSERT_EQ(times, 1);
      (key.first == "n0" ? from_loud : from_quiet) += 1;
    }
    EXPECT_EQ(from_loud, 20u) << i;
    EXPECT_EQ(from_quiet, 20u) << i;
  }
  uint64_t throttled = 0;
  for (size_t i = 1; i < 8; ++i) throttled += net.node(i).stats().throttled;
  EXPECT_GT(throttled, 0u);
  // The node itself refuses its own messages over its rate.
  Net self(2, {{0, 1}}, o);
  for (int b = 0; b < 20; ++b) ASSERT_TRUE(self.Broadcast(0, "m").ok());
  EXPECT_EQ(self.Broadcast(0, "m").ToString(),
            "resource exhausted: broadcast rate of this node exceeded");
}

std::string DataPacket(const std::string& origin, uint64_t id, size_t payload_bytes) {
  RelayPacket p;
  p.data.origin = origin;
  p.data.id = id;
  p.data.hop_limit = 6;
  p.data.filter_k = 7;
  p.data.filter = std::string(8, '\0');
  p.data.payload = std::string(payload_bytes, 'p');
  std::string bytes;
  EXPECT_TRUE(EncodeRelayPacket(p, RelayLimits(), &bytes).ok());
  return bytes;
}

// Large messages within the rate limit once took a node's memory without bound (about 1.4 GiB
// for 7,580 messages of 64 KiB in 30 s). Cached messages are bounded in bytes, per origin and
// in total; every message is still delivered and forwarded, and a flooding origin evicts its
// own messages, not a quiet origin's.
TEST(RelayNode, CachedMessagesStayWithinTheirByteBounds) {
  RelayOptions o = Base();
  o.node_id = "x";
  o.max_cached_bytes = 4 << 20;
  o.max_cached_bytes_per_origin = 1 << 20;
  RelayNode node(o);
  node.SetLinks({"a", "b"});
  node.SetLinkUp("a", true);
  node.SetLinkUp("b", true);
  node.OnPacket("a", DataPacket("quiet", 1, 1000), 1000);
  size_t forwarded = 0;
  for (uint64_t id = 1; id <= 200; ++id) {
    node.OnPacket("a", DataPacket("loud", id, 60000), 1000 + id);
    for (const RelaySend& send : node.TakeSends()) forwarded += send.kind == RelayKind::kData;
  }
  EXPECT_EQ(node.TakeDeliveries().size(), 201u);
  EXPECT_EQ(forwarded, 201u);  // every message went on to b
  // Each message takes its payload and its forwarded packet: about 120 KB; 1 MiB holds 8.
  EXPECT_LE(node.cached_bytes(), size_t{1} << 20);
  EXPECT_GE(node.stats().cache_evicted, 190u);
  // The quiet origin's message is still served on a GRAFT.
  RelayPacket graft;
  graft.kind = RelayKind::kGraft;
  graft.refs = {{"quiet", 1, 0}};
  std::string bytes;
  ASSERT_TRUE(EncodeRelayPacket(graft, RelayLimits(), &bytes).ok());
  node.OnPacket("b", bytes, 2000);
  EXPECT_EQ(node.stats().grafts_served, 1u);
}

// 50 announcements of 4,096 invented messages each once made a node send 2,048,000 GRAFTs
// back. Awaited messages are bounded, a quarter of them per link, so a hostile link cannot
// block another's announcements either; GRAFTs stay within attempts x bound.
TEST(RelayNode, AnnouncementsOfInventedMessagesAreBounded) {
  RelayOptions o = Base();
  o.node_id = "x";
  o.max_missing = 400;
  RelayNode node(o);
  node.SetLinks({"evil", "good"});
  node.SetLinkUp("evil", true);
  node.SetLinkUp("good", true);
  uint64_t id = 0;
  for (int packet = 0; packet < 50; ++packet) {
    RelayPacket ihave;
    ihave.kind = RelayKind::kIHave;
    for (int r = 0; r < 100; ++r) ihave.refs.push_back({"ghost", ++id, 1});
    std::string bytes;
    ASSERT_TRUE(EncodeRelayPacket(ihave, RelayLimits(), &bytes).ok());
    node.OnPacket("evil", bytes, 1000);
  }
  EXPECT_EQ(node.stats().ihave_dropped, 5000u - 100u);
  RelayPacket honest;
  honest.kind = RelayKind::kIHave;
  honest.refs = {{"real", 7, 1}};
  std::string bytes;
  ASSERT_TRUE(EncodeRelayPacket(honest, RelayLimits(), &bytes).ok());
  node.OnPacket("good", bytes, 1000);
  uint64_t graft_refs = 0;
  bool asked_good = false;
  for (uint64_t t = 1000; t <= 60000; t += 20) {
    node.OnTick(t);
    for (const RelaySend& send : node.TakeSends()) {
      if (send.kind != RelayKind::kGraft) continue;
      RelayPacket p;
      ASSERT_TRUE(DecodeRelayPacket(send.packet, RelayLimits(), &p).ok());
      graft_refs += p.refs.size();
      asked_good |= send.to == "good";
    }
  }
  EXPECT_TRUE(asked_good);  // the honest announcement was awaited and asked for
  EXPECT_LE(graft_refs, uint64_t{o.max_graft_attempts} * (100 + 1));
  EXPECT_TRUE(node.Idle());
}

}  // namespace
}  // namespace peerbloom
