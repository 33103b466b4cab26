// The /metrics text as a table of metric families. Each entry writes its samples through a
// Writer that prints `name{labels} value` lines under the family's HELP and TYPE lines.
#include "daemon/metrics_report.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <utility>

namespace peerbloom::daemon {
namespace {

using Labels = std::vector<std::pair<std::string_view, std::string>>;

// What one rendering reads, gathered once.
struct Context {
  const StatsSources& s;
  const LoopMetrics& loop;
  int64_t now;
  int64_t now_unix_ms;
  const Summary& summary;
  std::vector<PeerInfo> peers;  // members and imported digests
};

std::string Number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

class Writer {
 public:
  explicit Writer(std::string* out) : out_(out) {}
  void Begin(const char* name) { name_ = name; }
  void Sample(const Labels& labels, double value) { Line(name_, labels, Number(value)); }
  void Sample(const Labels& labels, uint64_t value) { Line(name_, labels, std::to_string(value)); }
  void Sample(double value) { Sample(Labels{}, value); }
  void Sample(uint64_t value) { Sample(Labels{}, value); }
  // The _bucket, _sum and _count series of a histogram.
  void Histogram(const LatencyHistogram& h) {
    uint64_t cumulative = 0;
    for (size_t i = 0; i < h.kBounds.size(); ++i) {
      cumulative += h.buckets[i];
      Line(name_ + "_bucket", {{"le", Number(h.kBounds[i])}}, std::to_string(cumulative));
    }
    Line(name_ + "_bucket", {{"le", "+Inf"}}, std::to_string(h.count));
    Line(name_ + "_sum", {}, Number(h.sum));
    Line(name_ + "_count", {}, std::to_string(h.count));
  }

 private:
  void Line(const std::string& name, const Labels& labels, const std::string& value) {
    *out_ += name;
    if (!labels.empty()) {
      *out_ += '{';
      for (size_t i = 0; i < labels.size(); ++i) {
        if (i > 0) *out_ += ',';
        *out_ += labels[i].first;
        *out_ += "=\"" + EscapeLabelValue(labels[i].second) + '"';
      }
      *out_ += '}';
    }
    *out_ += ' ' + value + '\n';
  }

  std::string* out_;
  std::string name_;
};

struct Metric {
  const char* name;
  const char* type;
  const char* labels;  // documentation only: the label names the samples carry
  const char* help;
  void (*write)(const Context&, Writer&);
};

double Seconds(int64_t ms) { return static_cast<double>(ms) / 1000.0; }

// A peer's summary fill and false-positive rate, estimated from its key count n, k and size
// m: fill = 1 - e^(-kn/m), fpr = fill^k (the standard Bloom filter approximation). Exact
// values would need a copy of every peer's summary per scrape.
double PeerFill(const PeerInfo& p) {
  if (p.log2_bits == 0 || p.log2_bits >= 63) return 0.0;
  const double m = std::ldexp(1.0, static_cast<int>(p.log2_bits));
  return 1.0 - std::exp(-static_cast<double>(p.k) * static_cast<double>(p.estimated_items) / m);
}

template <typename Fn>
void ForPeers(const Context& c, Writer& w, Fn&& value) {
  for (const PeerInfo& p : c.peers) value(w, Labels{{"peer", p.node_id}}, p);
}

void Traffic2(Writer& w, const std::map<std::string, Traffic>& in,
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
    const auto it = c.loop.out_by_endpoint().find(p.endpoint);
    if (!p.imported && it != c.loop.out_by_endpoint().end()) out[p.node_id] = it->second;
  }
  return out;
}

const GossipStats& G(const Context& c) { return c.s.parts.engine.stats(); }
const TransportStats& T(const Context& c) { return c.s.transport.stats(); }

template <typename Fn>
void ForFeeds(const Context& c, Writer& w, Fn&& value) {
  for (const auto& f : c.s.parts.feeds) value(w, Labels{{"feed", f->config().path}}, *f);
}

std::vector<DigestSourceStats> Sources(const Context& c) {
  const DigestFetcher* f = c.s.digests.fetcher();
  return f ? f->Stats(c.now) : std::vector<DigestSourceStats>();
}

const Metric kMetrics[] = {
    // The node.
    {"peerbloom_node_info", "gauge", "node, endpoint", "always 1; names this node",
     [](const Context& c, Writer& w) {
       w.Sample({{"node", c.s.parts.config.node_id}, {"endpoint", c.s.parts.endpoint}},
                uint64_t{1});
     }},
    {"peerbloom_uptime_seconds", "gauge", "", "time since start",
     [](const Context& c, Writer& w) { w.Sample(Seconds(c.now - c.s.start_ms)); }},
    {"peerbloom_reloads_total", "counter", "", "SIGHUP reloads applied",
     [](const Context& c, Writer& w) { w.Sample(c.s.reloads); }},
    // The local counting filter.
    {"peerbloom_filter_keys", "gauge", "", "keys the local counting filter holds",
     [](const Context& c, Writer& w) { w.Sample(c.s.parts.store.filter().items()); }},
    {"peerbloom_filter_capacity_keys", "gauge", "", "the configured capacity",
     [](const Context& c, Writer& w) { w.Sample(c.s.parts.config.capacity); }},
    {"peerbloom_filter_counters", "gauge", "", "4-bit counters of the local filter",
     [](const Context& c, Writer& w) { w.Sample(c.s.parts.store.filter().counters()); }},
    {"peerbloom_filter_saturated_counters", "gauge", "", "counters stuck at 15",
     [](const Context& c, Writer& w) { w.Sample(c.s.parts.store.filter().saturated_counters()); }},
    {"peerbloom_filter_saturation_events_total", "counter", "",
     "increments that met a saturated counter",
     [](const Context& c, Writer& w) { w.Sample(c.s.parts.store.filter().saturation_events()); }},
    {"peerbloom_filter_refused_removes_total", "counter", "",
     "removes of keys the filter does not hold",
     [](const Context& c, Writer& w) { w.Sample(c.s.parts.store.filter().refused_removes()); }},
    {"peerbloom_filter_adds_total", "counter", "", "keys added (feeds and control)",
     [](const Context& c, Writer& w) { w.Sample(c.s.parts.store.stats().adds); }},
    {"peerbloom_filter_removes_total", "counter", "", "keys removed (feeds and control)",
     [](const Context& c, Writer& w) { w.Sample(c.s.parts.store.stats().removes); }},
    // The published summary.
    {"peerbloom_published_version", "gauge", "", "version of the latest local summary",
     [](const Context& c, Writer& w) { w.Sample(c.summary.version); }},
    {"peerbloom_published_size_bytes", "gauge", "", "size of the local summary (its bits / 8)",
     [](const Context& c, Writer& w) { w.Sample(c.summary.filter.bits() / 8); }},
    {"peerbloom_published_fill_ratio", "gauge", "", "fraction of the local summary's bits set",
     [](const Context& c, Writer& w) { w.Sample(c.summary.filter.FillRatio()); }},
    {"peerbloom_published_estimated_fpr", "gauge", "",
     "false-positive rate of the local summary, estimated from its fill",
     [](const Context& c, Writer& w) { w.Sample(c.summary.filter.EstimatedFpr()); }},
    {"peerbloom_published_pending_positions", "gauge", "",
     "summary positions changed since the last publication",
     [](const Context& c, Writer& w) { w.Sample(c.s.parts.store.builder()->pending()); }},
    {"peerbloom_publications_total", "counter", "kind=full|delta",
     "local summaries handed to gossip",
     [](const Context& c, Writer& w) {
       w.Sample({{"kind", "full"}}, c.s.publish.full);
       w.Sample({{"kind", "delta"}}, c.s.publish.deltas);
     }},
    {"peerbloom_publications_immediate_total", "counter", "",
     "publications forced by publish_threshold",
     [](const Context& c, Writer& w) { w.Sample(c.s.publish.immediate); }},
    // Snapshots.
    {"peerbloom_snapshot_age_seconds", "gauge", "",
     "time since the last snapshot was written (absent before the first)",
     [](const Context& c, Writer& w) {
       if (c.s.snapshot.last_unix_ms > 0) w.Sample(Seconds(c.now_unix_ms - c.s.snapshot.last_unix_ms));
     }},
    {"peerbloom_snapshot_duration_seconds", "gauge", "", "time the last snapshot write took",
     [](const Context& c, Writer& w) { w.Sample(Seconds(c.s.snapshot.last_duration_ms)); }},
    {"peerbloom_snapshots_total", "counter", "result=written|failed", "snapshot writes",
     [](const Context& c, Writer& w) {
       w.Sample({{"result", "written"}}, c.s.snapshot.written);
       w.Sample({{"result", "failed"}}, c.s.snapshot.failed);
     }},
    {"peerbloom_snapshot_failure_episodes_total", "counter", "",
     "runs of failed snapshots (a full or read-only disk)",
     [](const Context& c, Writer& w) { w.Sample(c.s.snapshot.failure_episodes); }},
    {"peerbloom_snapshot_failing", "gauge", "", "1 while the last snapshot failed",
     [](const Context& c, Writer& w) { w.Sample(uint64_t{c.s.snapshot.failing ? 1u : 0u}); }},
    // Faults.
    {"peerbloom_clock_jumps_total", "counter", "",
     "steps of the wall clock against the monotonic clock",
     [](const Context& c, Writer& w) { w.Sample(c.s.faults.clock_jumps); }},
    {"peerbloom_test_faults_injected_total", "counter", "kind=drop|duplicate|reorder",
     "peer messages the test_fault_* settings dropped, duplicated or held back (tests only)",
     [](const Context& c, Writer& w) {
       w.Sample({{"kind", "drop"}}, c.s.transport.stats().fault_dropped);
       w.Sample({{"kind", "duplicate"}}, c.s.transport.stats().fault_duplicated);
       w.Sample({{"kind", "reorder"}}, c.s.transport.stats().fault_reordered);
     }},
    // Peers (members and imported Squid digests), by node id.
    {"peerbloom_peer_up", "gauge", "peer", "1 while the member is alive, 0 once dead",
     [](const Context& c, Writer& w) {
       ForPeers(c, w, [](Writer& o, const Labels& l, const PeerInfo& p) {
         o.Sample(l, uint64_t{p.alive ? 1u : 0u});
       });
     }},
    {"peerbloom_peer_last_heard_seconds", "gauge", "peer", "time since the member was last heard of",
     [](const Context& c, Writer& w) {
       ForPeers(c, w, [&c](Writer& o, const Labels& l, const PeerInfo& p) {
         o.Sample(l, Seconds(c.now - p.last_heard_ms));
       });
     }},
    {"peerbloom_peer_filter_age_seconds", "gauge", "peer",
     "age of the summary held (absent without one)",
     [](const Context& c, Writer& w) {
       ForPeers(c, w, [&c](Writer& o, const Labels& l, const PeerInfo& p) {
         if (p.summary_received_ms > 0) o.Sample(l, Seconds(c.now - p.summary_received_ms));
       });
     }},
    {"peerbloom_peer_filter_version", "gauge", "peer", "version of the summary held",
     [](const Context& c, Writer& w) {
       ForPeers(c, w, [](Writer& o, const Labels& l, const PeerInfo& p) { o.Sample(l, p.version); });
     }},
    {"peerbloom_peer_filter_size_bytes", "gauge", "peer", "size of the summary held (its bits / 8)",
     [](const Context& c, Writer& w) {
       ForPeers(c, w, [](Writer& o, const Labels& l, const PeerInfo& p) {
         if (p.log2_bits > 0 && p.log2_bits < 64) o.Sample(l, (uint64_t{1} << p.log2_bits) / 8);
       });
     }},
    {"peerbloom_peer_filter_keys", "gauge", "peer", "keys the member reports holding",
     [](const Context& c, Writer& w) {
       ForPeers(c, w, [](Writer& o, const Labels& l, const PeerInfo& p) {
         o.Sample(l, p.estimated_items);
       });
     }},
    {"peerbloom_peer_filter_fill_ratio", "gauge", "peer",
     "fill of the summary held, estimated from its keys, k and size (digests: measured)",
     [](const Context& c, Writer& w) {
       ForPeers(c, w, [](Writer& o, const Labels& l, const PeerInfo& p) {
         o.Sample(l, p.imported ? p.digest_fill : PeerFill(p));
       });
     }},
    {"peerbloom_peer_filter_estimated_fpr", "gauge", "peer",
     "false-positive rate of the summary held, fill^k",
     [](const Context& c, Writer& w) {
       ForPeers(c, w, [](Writer& o, const Labels& l, const PeerInfo& p) {
         o.Sample(l, p.imported ? p.digest_fpr : std::pow(PeerFill(p), p.k));
       });
     }},
    {"peerbloom_peer_messages_total", "counter", "peer, direction=in|out",
     "gossip frames exchanged with the member (in: accepted frames it sent)",
     [](const Context& c, Writer& w) {
       Traffic2(w, c.loop.in_by_peer(), OutByPeer(c), "peer", false);
     }},
    {"peerbloom_peer_bytes_total", "counter", "peer, direction=in|out",
     "bytes of those frames",
     [](const Context& c, Writer& w) { Traffic2(w, c.loop.in_by_peer(), OutByPeer(c), "peer", true); }},
    {"peerbloom_peer_routed_total", "counter", "peer, outcome=hit|false_hit|unreachable",
     "requests a cache routed to the member because its summary claimed the URL, by outcome",
     [](const Context& c, Writer& w) {
       for (const auto& [node, counts] : c.s.parts.routes.nodes()) {
         w.Sample({{"peer", node}, {"outcome", "hit"}}, counts.hits);
         w.Sample({{"peer", node}, {"outcome", "false_hit"}}, counts.false_hits);
         w.Sample({{"peer", node}, {"outcome", "unreachable"}}, counts.unreachable);
       }
     }},
    // Squid's helpers, as they report what they answered (docs/squid.md).
    {"peerbloom_squid_helper_answers_total", "counter", "answer=peer|none|invalid|error",
     "answers Squid's helpers gave: a peer named, no peer, not a URL, ERR for want of the "
     "daemon",
     [](const Context& c, Writer& w) {
       const HelperCounts t = c.s.parts.helpers.Totals();
       w.Sample({{"answer", "peer"}}, t.peer);
       w.Sample({{"answer", "none"}}, t.none);
       w.Sample({{"answer", "invalid"}}, t.invalid);
       w.Sample({{"answer", "error"}}, t.Errors());
     }},
    {"peerbloom_squid_helper_errors_total", "counter",
     "cause=no_socket|denied|refused|timeout|other",
     "helper answers ERR because the daemon could not be asked, by cause",
     [](const Context& c, Writer& w) {
       const HelperCounts t = c.s.parts.helpers.Totals();
       w.Sample({{"cause", "no_socket"}}, t.no_socket);
       w.Sample({{"cause", "denied"}}, t.denied);
       w.Sample({{"cause", "refused"}}, t.refused);
       w.Sample({{"cause", "timeout"}}, t.timeout);
       w.Sample({{"cause", "other"}}, t.other);
     }},
    {"peerbloom_squid_helpers", "gauge", "", "helper processes that reported within 10 minutes",
     [](const Context& c, Writer& w) {
       w.Sample(static_cast<double>(c.s.parts.helpers.Active(c.now, 10 * 60 * 1000)));
     }},
    // The broadcast relay (docs/relay.md).
    {"peerbloom_relay_delivered_total", "counter", "",
     "broadcasts delivered here (each message once)",
     [](const Context& c, Writer& w) { w.Sample(c.s.relay.relay_stats().delivered); }},
    {"peerbloom_relay_dropped_total", "counter",
     "reason=duplicate|stale|throttled|hop_limited|malformed|unknown_link",
     "relay packets or messages not passed on, by reason",
     [](const Context& c, Writer& w) {
       const RelayStats& r = c.s.relay.relay_stats();
       w.Sample({{"reason", "duplicate"}}, r.duplicates);
       w.Sample({{"reason", "stale"}}, r.stale);
       w.Sample({{"reason", "throttled"}}, r.throttled);
       w.Sample({{"reason", "hop_limited"}}, r.hop_limited);
       w.Sample({{"reason", "malformed"}}, r.malformed);
       w.Sample({{"reason", "unknown_link"}}, r.unknown_link);
     }},
    {"peerbloom_relay_packets_sent_total", "counter", "kind=payload|control",
     "relay packets sent: payload copies, and IHAVE, GRAFT and PRUNE packets",
     [](const Context& c, Writer& w) {
       const RelayStats& r = c.s.relay.relay_stats();
       w.Sample({{"kind", "payload"}}, r.payloads_sent);
       w.Sample({{"kind", "control"}}, r.control_packets_sent);
     }},
    {"peerbloom_relay_gave_up_total", "counter", "", "announced broadcasts never obtained",
     [](const Context& c, Writer& w) { w.Sample(c.s.relay.relay_stats().gave_up); }},
    {"peerbloom_relay_repairs_pending", "gauge", "",
     "1 while announcements or GRAFTs are still pending",
     [](const Context& c, Writer& w) {
       w.Sample(uint64_t{c.s.relay.repairs_pending() ? 1u : 0u});
     }},
    // Gossip.
    {"peerbloom_gossip_members", "gauge", "state=alive|dead", "members known",
     [](const Context& c, Writer& w) {
       uint64_t alive = 0;
       for (const PeerInfo& p : c.peers) alive += p.alive ? 1 : 0;
       w.Sample({{"state", "alive"}}, alive);
       w.Sample({{"state", "dead"}}, c.peers.size() - alive);
     }},
    {"peerbloom_gossip_messages_total", "counter", "type, direction=in|out",
     "gossip frames by wire type (in: every frame received, refused ones too)",
     [](const Context& c, Writer& w) {
       Traffic2(w, c.loop.in_by_type(), c.loop.out_by_type(), "type", false);
     }},
    {"peerbloom_gossip_bytes_total", "counter", "type, direction=in|out", "bytes of those frames",
     [](const Context& c, Writer& w) {
       Traffic2(w, c.loop.in_by_type(), c.loop.out_by_type(), "type", true);
     }},
    {"peerbloom_gossip_updates_total", "counter", "kind=full|delta, direction=in|out",
     "summaries exchanged: full ones (joins and resyncs) against deltas",
     [](const Context& c, Writer& w) {
       w.Sample({{"kind", "full"}, {"direction", "in"}}, G(c).full_summaries_in);
       w.Sample({{"kind", "full"}, {"direction", "out"}}, G(c).full_summaries_out);
       w.Sample({{"kind", "delta"}, {"direction", "in"}}, G(c).deltas_in);
       w.Sample({{"kind", "delta"}, {"direction", "out"}}, G(c).deltas_out);
     }},
    {"peerbloom_gossip_resyncs_requested_total", "counter", "",
     "full summaries asked for after a version gap or a digest mismatch",
     [](const Context& c, Writer& w) { w.Sample(G(c).resyncs_requested); }},
    {"peerbloom_gossip_repairs_total", "counter", "kind=prune|graft|deltas_served|request_in",
     "dissemination repairs: links pruned and grafted, deltas re-sent, requests served",
     [](const Context& c, Writer& w) {
       w.Sample({{"kind", "prune"}}, G(c).prunes);
       w.Sample({{"kind", "graft"}}, G(c).grafts);
       w.Sample({{"kind", "deltas_served"}}, G(c).deltas_served);
       w.Sample({{"kind", "request_in"}}, G(c).requests_in);
     }},
    {"peerbloom_gossip_deltas_relayed_total", "counter", "",
     "deltas passed on for another origin",
     [](const Context& c, Writer& w) { w.Sample(G(c).deltas_relayed); }},
    {"peerbloom_gossip_stale_dropped_total", "counter", "", "summaries older than the one held",
     [](const Context& c, Writer& w) { w.Sample(G(c).stale_dropped); }},
    {"peerbloom_gossip_signature_refusals_total", "counter",
     "reason=summary|epoch|beat|broadcast",
     "summaries, deltas, relayed epochs and heartbeats and broadcasts refused for a missing or "
     "bad origin signature",
     [](const Context& c, Writer& w) {
       w.Sample({{"reason", "summary"}}, G(c).signatures_refused);
       w.Sample({{"reason", "epoch"}}, G(c).epochs_refused);
       w.Sample({{"reason", "beat"}}, G(c).beats_refused);
       w.Sample({{"reason", "broadcast"}}, c.s.relay.relay_stats().signatures_refused);
     }},
    {"peerbloom_gossip_signatures_verified_total", "counter", "",
     "origin signatures checked and found valid",
     [](const Context& c, Writer& w) { w.Sample(G(c).signatures_verified); }},
    {"peerbloom_gossip_queue_overflow_total", "counter", "",
     "frames dropped by the per-endpoint send queue cap",
     [](const Context& c, Writer& w) { w.Sample(G(c).queue_dropped); }},
    {"peerbloom_gossip_queue_overflow_bytes_total", "counter", "", "bytes of those frames",
     [](const Context& c, Writer& w) { w.Sample(G(c).queue_dropped_bytes); }},
    {"peerbloom_gossip_members_refused_total", "counter", "",
     "members refused (bad id or endpoint, table full)",
     [](const Context& c, Writer& w) { w.Sample(G(c).members_refused); }},
    {"peerbloom_gossip_refused_total", "counter", "reason=geometry|import_quota",
     "full summaries refused for a geometry beyond the cluster's bounds, and imported "
     "digest frames refused for their importer's quota",
     [](const Context& c, Writer& w) {
       w.Sample({{"reason", "geometry"}}, G(c).summaries_out_of_bounds);
       w.Sample({{"reason", "import_quota"}}, G(c).imports_over_quota);
     }},
    {"peerbloom_gossip_decode_errors_total", "counter", "reason",
     "received frames refused, by the kind of refusal (corruption, not_supported, ...; "
     "frame_count: not one ZeroMQ frame)",
     [](const Context& c, Writer& w) {
       for (const auto& [reason, n] : c.loop.refused_by_reason()) w.Sample({{"reason", reason}}, n);
       w.Sample({{"reason", "frame_count"}}, T(c).refused_frames);
     }},
    // Peer links.
    {"peerbloom_transport_links_open", "gauge", "", "outgoing peer links",
     [](const Context& c, Writer& w) { w.Sample(T(c).links_open); }},
    {"peerbloom_transport_send_dropped_total", "counter", "",
     "frames the transport could not queue (link queue full or refused)",
     [](const Context& c, Writer& w) { w.Sample(T(c).send_dropped); }},
    {"peerbloom_transport_auth_denied_total", "counter", "", "connections with unauthorized keys",
     [](const Context& c, Writer& w) { w.Sample(T(c).zap_denied); }},
    {"peerbloom_transport_handshakes_failed_total", "counter", "", "failed CURVE handshakes",
     [](const Context& c, Writer& w) { w.Sample(T(c).handshakes_failed); }},
    {"peerbloom_transport_revoked_total", "counter", "what",
     "refused for a key authorized_keys no longer lists (frame: frames received on its link; "
     "link: outgoing links closed; inbound: inbound connections shut down)",
     [](const Context& c, Writer& w) {
       w.Sample({{"what", "frame"}}, T(c).frames_revoked);
       w.Sample({{"what", "link"}}, T(c).links_revoked);
       w.Sample({{"what", "inbound"}}, T(c).inbound_closed);
     }},
    {"peerbloom_transport_links_refused_total", "counter", "",
     "outgoing links refused at max_links",
     [](const Context& c, Writer& w) { w.Sample(T(c).links_refused); }},
    {"peerbloom_gossip_untrusted_total", "counter", "reason",
     "claims refused or overridden (sender_mismatch: a frame naming another node than its "
     "link's; unlisted: a node id not in authorized_keys; epoch, heartbeat: implausible; "
     "contact: an endpoint or key not bound to the node; corrected: overridden by the node's "
     "own word)",
     [](const Context& c, Writer& w) {
       w.Sample({{"reason", "sender_mismatch"}}, G(c).sender_mismatch);
       w.Sample({{"reason", "unlisted"}}, G(c).members_unlisted);
       w.Sample({{"reason", "epoch"}}, G(c).implausible_epochs);
       w.Sample({{"reason", "heartbeat"}}, G(c).implausible_heartbeats);
       w.Sample({{"reason", "contact"}}, G(c).contacts_refused);
       w.Sample({{"reason", "corrected"}}, G(c).claims_corrected);
     }},
    {"peerbloom_gossip_members_revoked_total", "counter", "",
     "members dropped when authorized_keys lost them",
     [](const Context& c, Writer& w) { w.Sample(G(c).members_revoked); }},
    // who-has.
    {"peerbloom_who_has_keys_total", "counter", "", "keys looked up by who-has requests",
     [](const Context& c, Writer& w) { w.Sample(c.loop.who_has_keys()); }},
    {"peerbloom_who_has_duration_seconds", "histogram", "le",
     "time to answer one who-has request (a batch of keys)",
     [](const Context& c, Writer& w) { w.Histogram(c.loop.who_has_seconds()); }},
    // The control endpoint.
    {"peerbloom_control_requests_total", "counter", "", "control requests served",
     [](const Context& c, Writer& w) { w.Sample(c.s.control.stats().requests); }},
    {"peerbloom_control_errors_total", "counter", "", "control replies with \"ok\": false",
     [](const Context& c, Writer& w) { w.Sample(c.s.control.stats().errors); }},
    {"peerbloom_control_unauthorized_total", "counter", "",
     "control requests without the control token or with a wrong one",
     [](const Context& c, Writer& w) { w.Sample(c.s.control.stats().unauthorized); }},
    {"peerbloom_control_connections_total", "counter", "result=accepted|evicted|shed",
     "tcp control connections accepted, closed to make room for a new one, or closed at once "
     "for want of a descriptor",
     [](const Context& c, Writer& w) {
       const ControlTcpStats t = c.s.control.tcp_stats();
       w.Sample({{"result", "accepted"}}, t.connections);
       w.Sample({{"result", "evicted"}}, t.evicted);
       w.Sample({{"result", "shed"}}, t.shed);
     }},
    {"peerbloom_control_dropped_bytes_total", "counter", "",
     "bytes of refused tcp control requests read and dropped, never held",
     [](const Context& c, Writer& w) { w.Sample(c.s.control.tcp_stats().dropped_bytes); }},
    // The local listeners.
    {"peerbloom_who_has_socket_connections_total", "counter", "result=accepted|evicted|shed",
     "who-has socket connections accepted, closed to make room for a new one, or closed at "
     "once for want of a descriptor",
     [](const Context& c, Writer& w) {
       if (!c.s.who_has_socket) return;
       const WhoHasSocketStats& t = c.s.who_has_socket->stats();
       w.Sample({{"result", "accepted"}}, t.connections);
       w.Sample({{"result", "evicted"}}, t.evicted);
       w.Sample({{"result", "shed"}}, t.shed);
     }},
    {"peerbloom_who_has_socket_output_bytes", "gauge", "",
     "who-has answers written and not yet read by their clients",
     [](const Context& c, Writer& w) {
       if (c.s.who_has_socket) w.Sample(uint64_t{c.s.who_has_socket->output_bytes()});
     }},
    {"peerbloom_metrics_connections_total", "counter",
     "result=accepted|evicted|timed_out|shed",
     "/metrics connections accepted, closed to make room for a new one, closed for no whole "
     "request or an answer not taken in time, or closed at once for want of a descriptor",
     [](const Context& c, Writer& w) {
       if (!c.s.metrics_server) return;
       const MetricsServerStats t = c.s.metrics_server->stats();
       w.Sample({{"result", "accepted"}}, t.connections);
       w.Sample({{"result", "evicted"}}, t.evicted);
       w.Sample({{"result", "timed_out"}}, t.timed_out);
       w.Sample({{"result", "shed"}}, t.shed);
     }},
    // Feeds, by path.
    {"peerbloom_feed_lines_total", "counter", "feed", "lines read",
     [](const Context& c, Writer& w) {
       ForFeeds(c, w, [](Writer& o, const Labels& l, const Feed& f) { o.Sample(l, f.stats().lines); });
     }},
    {"peerbloom_feed_adds_total", "counter", "feed", "adds applied",
     [](const Context& c, Writer& w) {
       ForFeeds(c, w, [](Writer& o, const Labels& l, const Feed& f) { o.Sample(l, f.stats().adds); });
     }},
    {"peerbloom_feed_removes_total", "counter", "feed", "removes applied",
     [](const Context& c, Writer& w) {
       ForFeeds(c, w,
                [](Writer& o, const Labels& l, const Feed& f) { o.Sample(l, f.stats().removes); });
     }},
    {"peerbloom_feed_malformed_total", "counter", "feed", "lines refused",
     [](const Context& c, Writer& w) {
       ForFeeds(c, w,
                [](Writer& o, const Labels& l, const Feed& f) { o.Sample(l, f.stats().malformed); });
     }},
    {"peerbloom_feed_lag_bytes", "gauge", "feed",
     "bytes not read yet: the rest of the current file and queued rotated files",
     [](const Context& c, Writer& w) {
       ForFeeds(c, w,
                [](Writer& o, const Labels& l, const Feed& f) { o.Sample(l, f.unread_bytes()); });
     }},
    {"peerbloom_feed_read_errors_total", "counter", "feed", "read errors",
     [](const Context& c, Writer& w) {
       ForFeeds(c, w, [](Writer& o, const Labels& l, const Feed& f) {
         o.Sample(l, f.follower_stats().read_errors);
       });
     }},
    // Squid digests this node fetches, by source.
    {"peerbloom_squid_digest_fetches_total", "counter", "source, result=ok|failed",
     "Cache Digest fetches",
     [](const Context& c, Writer& w) {
       for (const DigestSourceStats& d : Sources(c)) {
         w.Sample({{"source", d.source}, {"result", "ok"}}, d.fetches - d.failures);
         w.Sample({{"source", d.source}, {"result", "failed"}}, d.failures);
       }
     }},
    {"peerbloom_squid_digest_age_seconds", "gauge", "source",
     "age of the last accepted digest (absent before the first)",
     [](const Context& c, Writer& w) {
       for (const DigestSourceStats& d : Sources(c)) {
         if (d.age_ms >= 0) w.Sample({{"source", d.source}}, Seconds(d.age_ms));
       }
     }},
    {"peerbloom_squid_digest_imports_total", "counter", "result=applied|refused",
     "fetched digests the gossip engine took or refused",
     [](const Context& c, Writer& w) {
       w.Sample({{"result", "applied"}}, c.s.digests.applied());
       w.Sample({{"result", "refused"}}, c.s.digests.refused());
     }},
};

}  // namespace

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char ch : value) {
    if (ch == '\\') {
      out += "\\\\";
    } else if (ch == '"') {
      out += "\\\"";
    } else if (ch == '\n') {
      out += "\\n";
    } else {
      out += ch;
    }
  }
  return out;
}

std::string MetricsReport::Render(int64_t now, int64_t now_unix_ms) const {
  const Context c{
      s_, loop_, now, now_unix_ms, s_.parts.store.builder()->current(), s_.parts.engine.Peers(now)};
  std::string out;
  out.reserve(16 << 10);
  Writer w(&out);
  for (const Metric& m : kMetrics) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", m.name, m.help, m.name, m.type);
    w.Begin(m.name);
    m.write(c, w);
  }
  return out;
}

std::vector<MetricDoc> MetricsReference() {
  std::vector<MetricDoc> out;
  for (const Metric& m : kMetrics) out.push_back({m.name, m.type, m.labels, m.help});
  return out;
}

}  // namespace peerbloom::daemon
