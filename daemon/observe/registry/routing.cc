// Outcomes of requests routed to peers, as Squid's route log, the `report` op and Squid's
// helpers tell them (docs/squid.md).
#include <array>
#include <cmath>

#include "daemon/observe/registry/parts.h"

namespace peerbloom::daemon::registry {
namespace {

constexpr char kRouted[] = "peerbloom_peer_routed_total";
constexpr char kAnswers[] = "peerbloom_squid_helper_answers_total";
constexpr char kHelperErrors[] = "peerbloom_squid_helper_errors_total";

constexpr std::array<Stat<NodeRoutes>, 7> kNodeRoutes = {{
    {"node_id", "the peer requests were routed to", kValue, kStatsOnly,
     [](const NodeRoutes& r) -> Json { return r.node_id; }},
    {"routed", "requests routed to it whose outcome is known", kCounter, kStatsOnly,
     [](const NodeRoutes& r) -> Json { return r.counts.routed; }},
    {"hits", "routed requests it held", kCounter, Metric(kRouted, {"outcome", "hit"}),
     [](const NodeRoutes& r) -> Json { return r.counts.hits; }},
    {"false_hits", "routed requests it did not hold, while it was up", kCounter,
     Metric(kRouted, {"outcome", "false_hit"}),
     [](const NodeRoutes& r) -> Json { return r.counts.false_hits; }},
    {"unreachable", "routed requests that went direct while it was down or cut off", kCounter,
     Metric(kRouted, {"outcome", "unreachable"}),
     [](const NodeRoutes& r) -> Json { return r.counts.unreachable; }},
    {"false_hit_rate", "false_hits / (hits + false_hits)", kGauge, kStatsOnly,
     [](const NodeRoutes& r) -> Json { return r.counts.FalseHitRate(); }},
    {"estimated_fpr", "its summary's estimated false-positive rate, -1 for an unknown node", kGauge,
     kStatsOnly, [](const NodeRoutes& r) -> Json { return r.estimated_fpr; }},
}};

// Helpers that reported within this long count as running.
constexpr int64_t kHelperActiveMs = 10 * 60 * 1000;

const HelperReports& H(const Context& c) { return c.s.parts.helpers; }

constexpr std::array<Stat<Context>, 13> kHelper = {{
    {"helpers", "helper processes that reported within 10 minutes", kGauge,
     Metric("peerbloom_squid_helpers"),
     [](const Context& c) -> Json { return H(c).Active(c.now, kHelperActiveMs); }},
    {"reports", "report lines taken", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return H(c).reports(); }},
    {"last_report_ms_ago", "time since the latest report, -1 before any", kGauge, kStatsOnly,
     [](const Context& c) -> Json {
       return H(c).reports() == 0 ? int64_t{-1} : c.now - H(c).last_report_ms();
     }},
    {"answered_peer", "answered OK peer=NAME (the request was routed)", kCounter,
     Metric(kAnswers, {"answer", "peer"}),
     [](const Context& c) -> Json { return H(c).Totals().peer; }},
    {"answered_none", "answered ERR: no peer's summary claims the URL", kCounter,
     Metric(kAnswers, {"answer", "none"}),
     [](const Context& c) -> Json { return H(c).Totals().none; }},
    {"answered_invalid", "answered ERR: the line held no URL", kCounter,
     Metric(kAnswers, {"answer", "invalid"}),
     [](const Context& c) -> Json { return H(c).Totals().invalid; }},
    {"errors", "answered ERR because the daemon could not be asked", kCounter,
     Metric(kAnswers, {"answer", "error"}),
     [](const Context& c) -> Json { return H(c).Totals().Errors(); }},
    {"errors_no_socket", "... the who-has socket did not exist", kCounter,
     Metric(kHelperErrors, {"cause", "no_socket"}),
     [](const Context& c) -> Json { return H(c).Totals().no_socket; }},
    {"errors_denied", "... permission denied on the who-has socket", kCounter,
     Metric(kHelperErrors, {"cause", "denied"}),
     [](const Context& c) -> Json { return H(c).Totals().denied; }},
    {"errors_refused", "... connection refused (no daemon behind the socket)", kCounter,
     Metric(kHelperErrors, {"cause", "refused"}),
     [](const Context& c) -> Json { return H(c).Totals().refused; }},
    {"errors_timeout", "... no answer within the helper's --wait-ms", kCounter,
     Metric(kHelperErrors, {"cause", "timeout"}),
     [](const Context& c) -> Json { return H(c).Totals().timeout; }},
    {"errors_other", "... any other failure", kCounter, Metric(kHelperErrors, {"cause", "other"}),
     [](const Context& c) -> Json { return H(c).Totals().other; }},
    {"malformed_reports", "report lines refused", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return H(c).malformed(); }},
}};

// Read only with squid_route_log: the group is null otherwise.
const RouteLogFeed& L(const Context& c) { return *c.s.parts.route_log; }

constexpr std::array<Stat<Context>, 6> kRouteLog = {{
    {"path", "squid_route_log", kValue, kStatsOnly,
     [](const Context& c) -> Json { return L(c).follower().path(); }},
    {"lines", "lines read", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return L(c).stats().lines; }},
    {"routed", "lines of routed requests", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return L(c).stats().routed; }},
    {"unnamed", "routed to a cache_peer name squid_peer_names does not map", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return L(c).stats().unnamed; }},
    {"read_errors", "failed reads", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return L(c).stats().read_errors; }},
    {"last_error", "the last read error, \"\" for none", kValue, kStatsOnly,
     [](const Context& c) -> Json { return L(c).last_error(); }},
}};

void WalkNodes(const Context& c, Sink& s, Place p) {
  s.BeginArray(p.key, p.label);
  for (const auto& [id, counts] : c.s.parts.routes.nodes()) {
    double fpr = -1.0;
    for (const PeerInfo& peer : c.peers) {
      if (peer.node_id == id) fpr = PeerEstimatedFpr(peer);
    }
    Object(kNodeRoutes, NodeRoutes{id, counts, fpr}, s, nullptr, id);
  }
  s.EndArray();
}

void WalkLog(const Context& c, Sink& s, Place p) {
  if (!c.s.parts.route_log) return s.Null(p.key);
  Object(kRouteLog, c, s, p.key);
}

const RouteOutcomes& R(const Context& c) { return c.s.parts.routes; }

constexpr std::array<Stat<Context>, 11> kRouting = {{
    {"routed", "requests routed to peers whose outcome is known", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return R(c).total().routed; }},
    {"hits", "routed requests the peer held", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return R(c).total().hits; }},
    {"false_hits", "routed requests the peer did not hold, while it was up", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return R(c).total().false_hits; }},
    {"unreachable", "routed requests that went direct while the peer was down or cut off", kCounter,
     kStatsOnly, [](const Context& c) -> Json { return R(c).total().unreachable; }},
    {"false_hit_rate", "false_hits / (hits + false_hits)", kGauge, kStatsOnly,
     [](const Context& c) -> Json { return R(c).total().FalseHitRate(); }},
    {"pending", "requests that went direct, waiting for the peer's liveness to settle them", kGauge,
     kStatsOnly, [](const Context& c) -> Json { return R(c).pending(); }},
    {"log", "squid_route_log as read; null when not set", Type::kGroup, kStatsOnly, nullptr,
     &WalkLog, [] { return Docs(kRouteLog); }},
    {"reports", "report requests taken", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return R(c).reports(); }},
    {"untracked", "outcomes for nodes past the tracked-node bound (in the totals only)", kCounter,
     kStatsOnly, [](const Context& c) -> Json { return R(c).untracked(); }},
    {"helper", "what Squid's helpers answered, as they report it (docs/squid.md)", Type::kGroup,
     kFieldsExported, nullptr,
     [](const Context& c, Sink& s, Place p) { Object(kHelper, c, s, p.key); },
     [] { return Docs(kHelper); }},
    {"peers", "one object per node an outcome was reported for", Type::kGroup, ByElement("peer"),
     nullptr, &WalkNodes, [] { return Docs(kNodeRoutes); }},
}};

constexpr std::array<Family, 3> kFamilies = {{
    {kRouted,
     "requests a cache routed to the member because its summary claimed the URL, by outcome"},
    {kAnswers,
     "answers Squid's helpers gave: a peer named, no peer, not a URL, ERR for want of the "
     "daemon"},
    {kHelperErrors, "helper answers ERR because the daemon could not be asked, by cause"},
}};

}  // namespace

// (1 - e^(-kn/m))^k (Fan et al. 2000, eq. 1) from what gossip knows of the summary; 0
// without one.
double PeerEstimatedFpr(const PeerInfo& p) {
  if (p.k == 0 || p.log2_bits == 0) return 0.0;
  if (p.imported) return p.digest_fpr;
  const double m = std::ldexp(1.0, static_cast<int>(p.log2_bits));
  const double k = p.k;
  return std::pow(1.0 - std::exp(-k * static_cast<double>(p.estimated_items) / m), k);
}

Table<Context> RoutingTable() { return kRouting; }
Table<NodeRoutes> NodeRoutesTable() { return kNodeRoutes; }
std::span<const Family> RoutingFamilies() { return kFamilies; }

}  // namespace peerbloom::daemon::registry
