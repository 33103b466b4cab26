// The registry's tables, one per part of the daemon, and what they read.
//
// Each part's file declares its counters once (registry.h says how): store.cc the filter,
// the summary, snapshots and faults; gossip.cc the gossip engine and the peer links;
// endpoints.cc the control endpoint and the local listeners; feeds.cc the feeds; digests.cc
// the imported Squid digests; routing.cc the routing outcomes; relay.cc the broadcast relay;
// peers.cc the `peers` answer; loop.cc the metrics only the loop takes; top.cc the top level
// of the `stats` answer, which holds the other parts.
#ifndef PEERBLOOM_DAEMON_OBSERVE_REGISTRY_PARTS_H_
#define PEERBLOOM_DAEMON_OBSERVE_REGISTRY_PARTS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "daemon/observe/loop_metrics.h"
#include "daemon/observe/registry/metric_writer.h"
#include "daemon/observe/registry/registry.h"
#include "daemon/observe/stats_report.h"
#include "peerbloom/gossip.h"

namespace peerbloom::daemon::registry {

// What one rendering reads, gathered once.
struct Context {
  const StatsSources& s;
  const LoopMetrics* loop;  // null for the JSON answers: they show no loop-only metric
  int64_t now;              // the loop's clock
  int64_t now_unix_ms;      // the wall clock (metrics only: the snapshot's age)
  const Summary& summary;
  std::vector<PeerInfo> peers;  // members and imported digests
};

// A value read at a given loop time.
template <typename T>
struct At {
  const T& v;
  int64_t now;
};

// A member, for the `peers` answer: what gossip knows of it and its routing outcomes.
struct Member {
  const PeerInfo& v;
  int64_t now;
  const RouteOutcomes& routes;
};

// One node's routing outcomes beside its summary's estimated false-positive rate.
struct NodeRoutes {
  const std::string& node_id;
  RouteCounts counts;
  double estimated_fpr;  // -1 when the node is not a member this daemon knows
};

// The part tables. Top holds the others as groups.
Table<Context> TopTable();
Table<Context> FilterTable();
Table<Context> SummaryTable();
Table<Context> SnapshotTable();
Table<Context> FaultsTable();
Table<Context> GossipTable();
Table<Context> TransportTable();
Table<Context> ControlTable();
Table<Context> WhoHasSocketTable();
Table<Context> MetricsEndpointTable();
Table<Context> DigestsTable();
Table<Context> RoutingTable();
Table<Feed> FeedTable();                 // an element of feeds[]
Table<NginxCacheFeed> NginxFeedTable();  // an element of nginx_feeds[]
Table<Context> NginxRoutesTable();
Table<RelayService> RelayTable();

// The `peers` answer: one group, an array with an entry per member; each entry holds a
// `routing` object (NodeRoutesTable without node_id, which the entry has).
Table<Context> PeersTable();
Table<NodeRoutes> NodeRoutesTable();
// A peer's summary's estimated false-positive rate, as `peers` and `routing` show it.
double PeerEstimatedFpr(const PeerInfo& p);

// Families of /metrics that no single stat makes: a family of several stats declares its
// help here (`write` null; its stats give type and labels); a family the loop alone counts
// (traffic by wire type and peer, refusals by reason, who-has latency) is a metric only and
// writes its samples itself.
struct Family {
  const char* name;
  const char* help;
  void (*write)(const Context&, MetricWriter&) = nullptr;
  const char* type = "";    // with `write`: counter, gauge or histogram
  const char* labels = "";  // with `write`: the label names its samples carry
};
std::span<const Family> GossipFamilies();
// Families that stats of several parts make.
inline constexpr char kSignatureRefusals[] = "peerbloom_gossip_signature_refusals_total";
inline constexpr char kGossipRefused[] = "peerbloom_gossip_refused_total";
inline constexpr char kDecodeErrors[] = "peerbloom_gossip_decode_errors_total";
std::span<const Family> StoreFamilies();
std::span<const Family> EndpointFamilies();
std::span<const Family> DigestFamilies();
std::span<const Family> RoutingFamilies();
std::span<const Family> RelayFamilies();
std::span<const Family> LoopFamilies();
std::span<const Family> NginxFamilies();
// Every Family above, the loop's first (their samples are written first).
std::vector<Family> AllFamilies();

}  // namespace peerbloom::daemon::registry

#endif  // PEERBLOOM_DAEMON_OBSERVE_REGISTRY_PARTS_H_
