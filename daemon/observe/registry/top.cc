// The top level of the `stats` answer: this node, and a group per part.
#include <array>

#include "daemon/observe/registry/parts.h"

namespace peerbloom::daemon::registry {
namespace {

void WalkWhoHasSocket(const Context& c, Sink& s, Place p) {
  if (!c.s.who_has_socket) return s.Null(p.key);
  Object(WhoHasSocketTable(), c, s, p.key);
}

void WalkMetricsEndpoint(const Context& c, Sink& s, Place p) {
  if (!c.s.metrics_server) return s.Null(p.key);
  Object(MetricsEndpointTable(), c, s, p.key);
}

void WalkFeeds(const Context& c, Sink& s, Place p) {
  s.BeginArray(p.key, p.label);
  for (const auto& feed : c.s.parts.feeds)
    Object(FeedTable(), *feed, s, nullptr, feed->config().path);
  s.EndArray();
}

void WalkNginxFeeds(const Context& c, Sink& s, Place p) {
  s.BeginArray(p.key, p.label);
  for (const auto& feed : c.s.parts.nginx_feeds)
    Object(NginxFeedTable(), *feed, s, nullptr, feed->config().path);
  s.EndArray();
}

void WalkNginxRoutes(const Context& c, Sink& s, Place p) {
  if (!c.s.route_socket || c.s.nginx_routes == nullptr) return s.Null(p.key);
  Object(NginxRoutesTable(), c, s, p.key);
}

void WalkRelay(const Context& c, Sink& s, Place p) { Object(RelayTable(), c.s.relay, s, p.key); }

constexpr std::array<Stat<Context>, 19> kTop = {{
    {"node_id", "this node's id", kValue, kStatsOnly,
     [](const Context& c) -> Json { return c.s.parts.config.node_id; }},
    {"endpoint", "the advertised peer endpoint", kValue, kStatsOnly,
     [](const Context& c) -> Json { return c.s.parts.endpoint; }},
    {"uptime_ms", "time since start", kGauge, MetricSeconds("peerbloom_uptime_seconds"),
     [](const Context& c) -> Json { return c.now - c.s.start_ms; }},
    Group<Context, &FilterTable>("filter", "the local counting filter"),
    Group<Context, &SummaryTable>("summary", "the published summary"),
    Group<Context, &GossipTable>("gossip", "the gossip engine"),
    Group<Context, &TransportTable>("transport", "peer links"),
    Group<Context, &ControlTable>("control", "the control endpoint"),
    {"who_has_socket", "the who-has socket, null when off", Type::kGroup, kFieldsExported, nullptr,
     &WalkWhoHasSocket, &PartDocs<Context, &WhoHasSocketTable>},
    {"metrics_endpoint", "the /metrics endpoint, null without metrics_listen", Type::kGroup,
     kFieldsExported, nullptr, &WalkMetricsEndpoint, &PartDocs<Context, &MetricsEndpointTable>},
    Group<Context, &SnapshotTable>("snapshot", "snapshots"),
    Group<Context, &FaultsTable>("faults", "faults injected (tests only) and noticed"),
    {"feeds", "one object per feed", Type::kGroup, ByElement("feed"), nullptr, &WalkFeeds,
     [] { return Docs(FeedTable()); }},
    {"nginx_feeds", "one object per nginx-cache feed (docs/nginx.md)", Type::kGroup,
     ByElement("feed"), nullptr, &WalkNginxFeeds, [] { return Docs(NginxFeedTable()); }},
    {"nginx_routes", "the nginx route socket's answers, null when off", Type::kGroup,
     kFieldsExported, nullptr, &WalkNginxRoutes, &PartDocs<Context, &NginxRoutesTable>},
    Group<Context, &DigestsTable>("squid_digests", "imported Squid digests"),
    {"reloads", "SIGHUP reloads applied", kCounter, Metric("peerbloom_reloads_total"),
     [](const Context& c) -> Json { return c.s.reloads; }},
    Group<Context, &RoutingTable>("routing",
                                  "outcomes of requests routed to peers (docs/squid.md)"),
    {"relay", "the broadcast relay", Type::kGroup, kFieldsExported, nullptr, &WalkRelay,
     [] { return Docs(RelayTable()); }},
}};

}  // namespace

Table<Context> TopTable() { return kTop; }

std::vector<Family> AllFamilies() {
  std::vector<Family> out;
  for (std::span<const Family> part :
       {LoopFamilies(), StoreFamilies(), GossipFamilies(), EndpointFamilies(), DigestFamilies(),
        RoutingFamilies(), RelayFamilies(), NginxFamilies()}) {
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

}  // namespace peerbloom::daemon::registry
