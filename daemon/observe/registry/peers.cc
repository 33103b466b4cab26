// The `peers` answer: every member and imported digest, what gossip knows of it and its
// routing outcomes. /metrics labels its samples with the member's node id.
#include <array>
#include <cmath>

#include "daemon/observe/registry/parts.h"

namespace peerbloom::daemon::registry {
namespace {

int64_t AgeMs(int64_t now, int64_t then) { return then > 0 ? now - then : -1; }

// A peer's summary fill estimated from its key count n, k and size m: 1 - e^(-kn/m) (the
// standard Bloom filter approximation); measuring it would copy every peer's summary per
// scrape. An imported digest's fill is measured.
double PeerFill(const PeerInfo& p) {
  if (p.imported) return p.digest_fill;
  if (p.log2_bits == 0 || p.log2_bits >= 63) return 0.0;
  const double m = std::ldexp(1.0, static_cast<int>(p.log2_bits));
  return 1.0 - std::exp(-static_cast<double>(p.k) * static_cast<double>(p.estimated_items) / m);
}

NodeRoutes RoutesOf(const Member& m) {
  return {m.v.node_id, m.routes.For(m.v.node_id), PeerEstimatedFpr(m.v)};
}

constexpr std::array<Stat<Member>, 20> kPeer = {{
    {"node_id", "the member's node id", kValue, kStatsOnly,
     [](const Member& p) -> Json { return p.v.node_id; }},
    {"endpoint", "its peer endpoint", kValue, kStatsOnly,
     [](const Member& p) -> Json { return p.v.endpoint; }},
    {"public_key", "its CURVE key", kValue, kStatsOnly,
     [](const Member& p) -> Json { return p.v.public_key; }},
    {"alive", "heard from within failure_timeout (1 while alive, 0 once dead)", kGauge,
     Metric("peerbloom_peer_up"), [](const Member& p) -> Json { return p.v.alive; }},
    {"neighbour", "linked directly", kValue, kStatsOnly,
     [](const Member& p) -> Json { return p.v.neighbour; }},
    {"chosen", "in this node's neighbour set", kValue, kStatsOnly,
     [](const Member& p) -> Json { return p.v.chosen; }},
    {"imported", "an imported Squid digest", kValue, kStatsOnly,
     [](const Member& p) -> Json { return p.v.imported; }},
    {"epoch", "its epoch", kGauge, kStatsOnly, [](const Member& p) -> Json { return p.v.epoch; }},
    {"summary_epoch", "epoch of the summary held", kGauge, kStatsOnly,
     [](const Member& p) -> Json { return p.v.summary_epoch; }},
    {"version", "version of the summary held", kGauge, Metric("peerbloom_peer_filter_version"),
     [](const Member& p) -> Json { return p.v.version; }},
    {"heartbeat", "its heartbeat", kGauge, kStatsOnly,
     [](const Member& p) -> Json { return p.v.heartbeat; }},
    {"estimated_items", "keys its summary holds, as it reports them", kGauge,
     Metric("peerbloom_peer_filter_keys"),
     [](const Member& p) -> Json { return p.v.estimated_items; }},
    {"k", "its summary's hash functions", kGauge, kStatsOnly,
     [](const Member& p) -> Json { return p.v.k; }},
    {"log2_bits", "log2 of its summary's bits", kGauge, kStatsOnly,
     [](const Member& p) -> Json { return p.v.log2_bits; }},
    {nullptr, "size of the summary held (its bits / 8)", kGauge,
     Metric("peerbloom_peer_filter_size_bytes"),
     [](const Member& p) -> Json {
       if (p.v.log2_bits == 0 || p.v.log2_bits >= 64) return nullptr;
       return (uint64_t{1} << p.v.log2_bits) / 8;
     }},
    {nullptr, "fill of the summary held, estimated from its keys, k and size (digests: measured)",
     kGauge, Metric("peerbloom_peer_filter_fill_ratio"),
     [](const Member& p) -> Json { return PeerFill(p.v); }},
    {nullptr, "false-positive rate of the summary held, fill^k; no sample without one", kGauge,
     Metric("peerbloom_peer_filter_estimated_fpr"),
     [](const Member& p) -> Json {
       if (p.v.k == 0 || p.v.log2_bits == 0) return nullptr;
       return PeerEstimatedFpr(p.v);  // the routing table's estimate, the same formula
     }},
    {"last_heard_ms_ago", "time since it was last heard of", kGauge,
     MetricSeconds("peerbloom_peer_last_heard_seconds"),
     [](const Member& p) -> Json { return p.now - p.v.last_heard_ms; }},
    {"summary_age_ms", "age of the summary held, -1 without one", kGauge,
     MetricSeconds("peerbloom_peer_filter_age_seconds"),
     [](const Member& p) -> Json { return AgeMs(p.now, p.v.summary_received_ms); }},
    {"routing", "outcomes of requests routed to it (/metrics has them from stats' routing)",
     Type::kGroup, kStatsOnly, nullptr,
     [](const Member& p, Sink& s, Place place) {
       Object(NodeRoutesTable().subspan(1), RoutesOf(p), s, place.key);
     },
     [] { return Docs(NodeRoutesTable().subspan(1)); }},
}};

void WalkPeers(const Context& c, Sink& s, Place p) {
  s.BeginArray(p.key, p.label);
  for (const PeerInfo& peer : c.peers) {
    Object(kPeer, Member{peer, c.now, c.s.parts.routes}, s, nullptr, peer.node_id);
  }
  s.EndArray();
}

constexpr std::array<Stat<Context>, 1> kPeers = {{
    {"peers", "every member and imported digest", Type::kGroup, ByElement("peer"), nullptr,
     &WalkPeers, [] { return Docs(kPeer); }},
}};

}  // namespace

Table<Context> PeersTable() { return kPeers; }

}  // namespace peerbloom::daemon::registry
