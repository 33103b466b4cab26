// Metrics only: families no `stats` value holds, whose samples the loop counts itself
// (LoopMetrics: traffic by wire type and by peer, refusals by reason, who-has latency) or
// that name this node. Each writes its own samples.
#include <array>
#include <map>
#include <string>

#include "daemon/observe/registry/parts.h"

namespace peerbloom::daemon::registry {
namespace {

void Traffic2(MetricWriter& w, const std::map<std::string, Traffic>& in,
              const std::map<std::string, Traffic>& out, std::string_view label, bool bytes) {
  for (const auto& [key, t] : in) {
    w.Sample({{label, key}, {"direction", "in"}}, bytes ? t.bytes : t.messages);
  }
  for (const auto& [key, t] : out) {
    w.Sample({{label, key}, {"direction", "out"}}, bytes ? t.bytes : t.messages);
  }
}

// Outgoing traffic is counted by endpoint; members are named by node id.
std::map<std::string, Traffic> OutByPeer(const Context& c) {
  std::map<std::string, Traffic> out;
  for (const PeerInfo& p : c.peers) {
    const auto it = c.loop->out_by_endpoint().find(p.endpoint);
    if (!p.imported && it != c.loop->out_by_endpoint().end()) out[p.node_id] = it->second;
  }
  return out;
}

constexpr std::array<Family, 8> kFamilies = {{
    {"peerbloom_node_info", "always 1; names this node",
     [](const Context& c, MetricWriter& w) {
       w.Sample({{"node", c.s.parts.config.node_id}, {"endpoint", c.s.parts.endpoint}},
                uint64_t{1});
     },
     "gauge", "node, endpoint"},
    {"peerbloom_gossip_messages_total",
     "gossip frames by wire type (in: every frame received, refused ones too)",
     [](const Context& c, MetricWriter& w) {
       Traffic2(w, c.loop->in_by_type(), c.loop->out_by_type(), "type", false);
     },
     "counter", "type, direction=in|out"},
    {"peerbloom_gossip_bytes_total", "bytes of those frames",
     [](const Context& c, MetricWriter& w) {
       Traffic2(w, c.loop->in_by_type(), c.loop->out_by_type(), "type", true);
     },
     "counter", "type, direction=in|out"},
    {kDecodeErrors,
     "received frames refused, by the kind of refusal (corruption, not_supported, ...; "
     "frame_count: not one ZeroMQ frame)",
     [](const Context& c, MetricWriter& w) {
       for (const auto& [reason, n] : c.loop->refused_by_reason()) {
         w.Sample({{"reason", reason}}, n);
       }
     },
     "counter", "reason"},
    {"peerbloom_peer_messages_total",
     "gossip frames exchanged with the member (in: accepted frames it sent)",
     [](const Context& c, MetricWriter& w) {
       Traffic2(w, c.loop->in_by_peer(), OutByPeer(c), "peer", false);
     },
     "counter", "peer, direction=in|out"},
    {"peerbloom_peer_bytes_total", "bytes of those frames",
     [](const Context& c, MetricWriter& w) {
       Traffic2(w, c.loop->in_by_peer(), OutByPeer(c), "peer", true);
     },
     "counter", "peer, direction=in|out"},
    {"peerbloom_who_has_keys_total", "keys looked up by who-has requests",
     [](const Context& c, MetricWriter& w) { w.Sample(c.loop->who_has_keys()); }, "counter"},
    {"peerbloom_who_has_duration_seconds", "time to answer one who-has request (a batch of keys)",
     [](const Context& c, MetricWriter& w) { w.Histogram(c.loop->who_has_seconds()); }, "histogram",
     "le"},
}};

}  // namespace

std::span<const Family> LoopFamilies() { return kFamilies; }

}  // namespace peerbloom::daemon::registry
