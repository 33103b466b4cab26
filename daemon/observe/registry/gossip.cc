// The gossip engine and the peer links it speaks over.
#include <array>

#include "daemon/observe/registry/parts.h"

namespace peerbloom::daemon::registry {
namespace {

const GossipStats& G(const Context& c) { return c.s.parts.engine.stats(); }
const TransportStats& T(const Context& c) { return c.s.transport.stats(); }

uint64_t Alive(const Context& c) {
  uint64_t alive = 0;
  for (const PeerInfo& p : c.peers) alive += p.alive ? 1 : 0;
  return alive;
}

constexpr char kMembers[] = "peerbloom_gossip_members";
constexpr char kUpdates[] = "peerbloom_gossip_updates_total";
constexpr char kRepairs[] = "peerbloom_gossip_repairs_total";
constexpr char kProbe[] = "peerbloom_gossip_probe_events_total";
constexpr char kUntrusted[] = "peerbloom_gossip_untrusted_total";
constexpr Label kIn{"direction", "in"};
constexpr Label kOut{"direction", "out"};

// The gossip engine: membership, traffic, repairs and refusals.
constexpr std::array<Stat<Context>, 48> kGossip = {{
    {"members_known", "members known", kGauge, kStatsOnly,
     [](const Context& c) -> Json { return c.peers.size(); }},
    {"members_alive", "members alive", kGauge, Metric(kMembers, {"state", "alive"}),
     [](const Context& c) -> Json { return Alive(c); }},
    {nullptr, "members dead", kGauge, Metric(kMembers, {"state", "dead"}),
     [](const Context& c) -> Json { return c.peers.size() - Alive(c); }},
    {"messages_in", "messages received", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return G(c).messages_in; }},
    {"messages_out", "messages sent", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return G(c).messages_out; }},
    {"bytes_in", "bytes received", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return G(c).bytes_in; }},
    {"bytes_out", "bytes sent", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return G(c).bytes_out; }},
    {"malformed_in", "messages refused as malformed", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return G(c).malformed_in; }},
    {"full_summaries_in", "full summaries received", kCounter,
     Metric(kUpdates, {"kind", "full"}, kIn),
     [](const Context& c) -> Json { return G(c).full_summaries_in; }},
    {"full_summaries_out", "full summaries sent", kCounter,
     Metric(kUpdates, {"kind", "full"}, kOut),
     [](const Context& c) -> Json { return G(c).full_summaries_out; }},
    {"deltas_in", "deltas received", kCounter, Metric(kUpdates, {"kind", "delta"}, kIn),
     [](const Context& c) -> Json { return G(c).deltas_in; }},
    {"deltas_out", "deltas sent", kCounter, Metric(kUpdates, {"kind", "delta"}, kOut),
     [](const Context& c) -> Json { return G(c).deltas_out; }},
    {"deltas_relayed", "deltas passed on for another origin", kCounter,
     Metric("peerbloom_gossip_deltas_relayed_total"),
     [](const Context& c) -> Json { return G(c).deltas_relayed; }},
    {"digests_in", "anti-entropy digests received", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return G(c).digests_in; }},
    {"digests_out", "anti-entropy digests sent", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return G(c).digests_out; }},
    {"queue_dropped", "frames dropped by the per-endpoint send queue cap", kCounter,
     Metric("peerbloom_gossip_queue_overflow_total"),
     [](const Context& c) -> Json { return G(c).queue_dropped; }},
    {"queue_dropped_bytes", "bytes of those frames", kCounter,
     Metric("peerbloom_gossip_queue_overflow_bytes_total"),
     [](const Context& c) -> Json { return G(c).queue_dropped_bytes; }},
    {"members_refused", "members refused (bad id or endpoint, table full)", kCounter,
     Metric("peerbloom_gossip_members_refused_total"),
     [](const Context& c) -> Json { return G(c).members_refused; }},
    {"local_publish_refused", "local publications the engine refused", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return G(c).local_publish_refused; }},
    {"members_revoked", "members dropped when authorized_keys lost them", kCounter,
     Metric("peerbloom_gossip_members_revoked_total"),
     [](const Context& c) -> Json { return G(c).members_revoked; }},
    {"probes", "pings sent by the probe failure detector", kCounter,
     Metric(kProbe, {"kind", "ping"}), [](const Context& c) -> Json { return G(c).probes; }},
    {"probes_indirect", "ping-reqs sent: a probe went unanswered", kCounter,
     Metric(kProbe, {"kind", "ping_req"}),
     [](const Context& c) -> Json { return G(c).probes_indirect; }},
    {"suspicions", "members this node suspected (no ack, direct or relayed)", kCounter,
     Metric(kProbe, {"kind", "suspicion"}),
     [](const Context& c) -> Json { return G(c).suspicions; }},
    {"refutations", "suspicions of this node it refuted with a newer heartbeat", kCounter,
     Metric(kProbe, {"kind", "refutation"}),
     [](const Context& c) -> Json { return G(c).refutations; }},
    {"declared_dead", "suspicions that ran out here: the member is dead", kCounter,
     Metric(kProbe, {"kind", "declared_dead"}),
     [](const Context& c) -> Json { return G(c).declared_dead; }},
    {"requests_in", "summary requests received", kCounter, Metric(kRepairs, {"kind", "request_in"}),
     [](const Context& c) -> Json { return G(c).requests_in; }},
    {nullptr, "links told to stop pushing deltas (a duplicate came through)", kCounter,
     Metric(kRepairs, {"kind", "prune"}), [](const Context& c) -> Json { return G(c).prunes; }},
    {nullptr, "pruned links asked to push again (a version was missed)", kCounter,
     Metric(kRepairs, {"kind", "graft"}), [](const Context& c) -> Json { return G(c).grafts; }},
    {"cuts_told", "frames telling a linked member this node stopped pushing deltas to it", kCounter,
     Metric(kRepairs, {"kind", "cut_told"}),
     [](const Context& c) -> Json { return G(c).cuts_told; }},
    {"links_quiet", "links deltas come on that fell quiet while others still brought theirs",
     kCounter, Metric(kRepairs, {"kind", "link_quiet"}),
     [](const Context& c) -> Json { return G(c).links_quiet; }},
    {nullptr, "recent deltas sent in answer to a request", kCounter,
     Metric(kRepairs, {"kind", "deltas_served"}),
     [](const Context& c) -> Json { return G(c).deltas_served; }},
    {"link_gaps", "frames found missing from a sender's numbered stream", kCounter,
     Metric(kRepairs, {"kind", "link_gap"}),
     [](const Context& c) -> Json { return G(c).link_gaps; }},
    {"resends_asked", "resend frames sent for missing numbered frames", kCounter,
     Metric(kRepairs, {"kind", "resend_asked"}),
     [](const Context& c) -> Json { return G(c).resends_asked; }},
    {"frames_resent", "kept numbered frames sent again at a receiver's ask", kCounter,
     Metric(kRepairs, {"kind", "frame_resent"}),
     [](const Context& c) -> Json { return G(c).frames_resent; }},
    {"tail_marks", "tail marks sent after a link's last numbered frame, while frames are lost",
     kCounter, Metric(kRepairs, {"kind", "tail_mark"}),
     [](const Context& c) -> Json { return G(c).tail_marks; }},
    {"resyncs_requested", "full summaries asked for after a version gap or a digest mismatch",
     kCounter, Metric("peerbloom_gossip_resyncs_requested_total"),
     [](const Context& c) -> Json { return G(c).resyncs_requested; }},
    {"stale_dropped", "summaries older than the one held", kCounter,
     Metric("peerbloom_gossip_stale_dropped_total"),
     [](const Context& c) -> Json { return G(c).stale_dropped; }},
    {"summaries_out_of_bounds", "full summaries refused for a geometry beyond the bounds", kCounter,
     Metric(kGossipRefused, {"reason", "geometry"}),
     [](const Context& c) -> Json { return G(c).summaries_out_of_bounds; }},
    {"signatures_verified", "origin signatures checked and found valid", kCounter,
     Metric("peerbloom_gossip_signatures_verified_total"),
     [](const Context& c) -> Json { return G(c).signatures_verified; }},
    {"signatures_refused", "summaries and deltas refused: unsigned or bad signature", kCounter,
     Metric(kSignatureRefusals, {"reason", "summary"}),
     [](const Context& c) -> Json { return G(c).signatures_refused; }},
    {"epochs_refused", "relayed epochs refused: no valid epoch certificate", kCounter,
     Metric(kSignatureRefusals, {"reason", "epoch"}),
     [](const Context& c) -> Json { return G(c).epochs_refused; }},
    {"beats_refused", "relayed heartbeats refused: a beat signature not valid", kCounter,
     Metric(kSignatureRefusals, {"reason", "beat"}),
     [](const Context& c) -> Json { return G(c).beats_refused; }},
    {"sender_mismatch", "frames naming a sender other than their link's node", kCounter,
     Metric(kUntrusted, {"reason", "sender_mismatch"}),
     [](const Context& c) -> Json { return G(c).sender_mismatch; }},
    {"members_unlisted", "senders or entries naming a node id not in authorized_keys", kCounter,
     Metric(kUntrusted, {"reason", "unlisted"}),
     [](const Context& c) -> Json { return G(c).members_unlisted; }},
    {"implausible_epochs", "epochs refused for being too far ahead of the clock", kCounter,
     Metric(kUntrusted, {"reason", "epoch"}),
     [](const Context& c) -> Json { return G(c).implausible_epochs; }},
    {"implausible_heartbeats", "heartbeats refused for advancing faster than possible", kCounter,
     Metric(kUntrusted, {"reason", "heartbeat"}),
     [](const Context& c) -> Json { return G(c).implausible_heartbeats; }},
    {"contacts_refused", "endpoints or keys not bound to the node id", kCounter,
     Metric(kUntrusted, {"reason", "contact"}),
     [](const Context& c) -> Json { return G(c).contacts_refused; }},
    {"claims_corrected", "a node's own frame overrode what others claimed of it", kCounter,
     Metric(kUntrusted, {"reason", "corrected"}),
     [](const Context& c) -> Json { return G(c).claims_corrected; }},
}};

constexpr char kRevoked[] = "peerbloom_transport_revoked_total";

constexpr std::array<Stat<Context>, 20> kTransport = {{
    {"curve", "whether CURVE is on", kValue, kStatsOnly,
     [](const Context& c) -> Json { return c.s.parts.config.curve; }},
    {"messages_in", "frames received", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return T(c).messages_in; }},
    {"bytes_in", "bytes received", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return T(c).bytes_in; }},
    {"messages_out", "frames sent", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return T(c).messages_out; }},
    {"bytes_out", "bytes sent", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return T(c).bytes_out; }},
    {"send_dropped", "frames the transport could not queue (send queue full or refused)", kCounter,
     Metric("peerbloom_transport_send_dropped_total"),
     [](const Context& c) -> Json { return T(c).send_dropped; }},
    {"send_no_key", "sends with CURVE on and no key known for the endpoint", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return T(c).send_no_key; }},
    {"refused_frames", "messages that were not exactly one frame", kCounter,
     Metric(kDecodeErrors, {"reason", "frame_count"}),
     [](const Context& c) -> Json { return T(c).refused_frames; }},
    {"refused_by_gossip", "frames the gossip engine refused", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return T(c).refused_by_gossip; }},
    {"zap_allowed", "CURVE handshakes of authorized keys", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return T(c).zap_allowed; }},
    {"zap_denied", "CURVE handshakes of unauthorized keys", kCounter,
     Metric("peerbloom_transport_auth_denied_total"),
     [](const Context& c) -> Json { return T(c).zap_denied; }},
    {"links_accepted", "incoming links accepted", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return T(c).links_accepted; }},
    {"links_disconnected", "links closed, oversized frames included", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return T(c).links_disconnected; }},
    {"handshakes_failed", "handshakes that failed", kCounter,
     Metric("peerbloom_transport_handshakes_failed_total"),
     [](const Context& c) -> Json { return T(c).handshakes_failed; }},
    {"links_open", "outgoing peer links open now", kGauge, Metric("peerbloom_transport_links_open"),
     [](const Context& c) -> Json { return T(c).links_open; }},
    {"frames_revoked", "frames on a link whose key authorized_keys no longer lists", kCounter,
     Metric(kRevoked, {"what", "frame"}),
     [](const Context& c) -> Json { return T(c).frames_revoked; }},
    {"links_revoked", "outgoing links closed when their key was delisted", kCounter,
     Metric(kRevoked, {"what", "link"}),
     [](const Context& c) -> Json { return T(c).links_revoked; }},
    {"inbound_closed", "inbound connections shut down when a key was delisted", kCounter,
     Metric(kRevoked, {"what", "inbound"}),
     [](const Context& c) -> Json { return T(c).inbound_closed; }},
    {"links_refused", "outgoing links refused at max_links", kCounter,
     Metric("peerbloom_transport_links_refused_total"),
     [](const Context& c) -> Json { return T(c).links_refused; }},
    {"send_unlisted", "sends to a key authorized_keys does not list", kCounter, kStatsOnly,
     [](const Context& c) -> Json { return T(c).send_unlisted; }},
}};

constexpr std::array<Family, 8> kFamilies = {{
    {kMembers, "members known, alive and dead"},
    {kProbe,
     "the probe failure detector: pings and ping-reqs sent, members suspected, suspicions of "
     "this node refuted, members declared dead when a suspicion ran out"},
    {kUpdates, "summaries exchanged: full ones (joins and resyncs) against deltas"},
    {kRepairs, "dissemination repairs: links pruned and grafted, deltas re-sent, requests served"},
    {kSignatureRefusals,
     "summaries, deltas, relayed epochs and heartbeats and broadcasts refused for a missing or "
     "bad origin signature"},
    {kGossipRefused,
     "full summaries refused for a geometry beyond the cluster's bounds, and imported "
     "digest frames refused for their importer's quota"},
    {kUntrusted,
     "claims refused or overridden (sender_mismatch: a frame naming another node than its "
     "link's; unlisted: a node id not in authorized_keys; epoch, heartbeat: implausible; "
     "contact: an endpoint or key not bound to the node; corrected: overridden by the node's "
     "own word)"},
    {kRevoked,
     "refused for a key authorized_keys no longer lists (frame: frames received on its link; "
     "link: outgoing links closed; inbound: inbound connections shut down)"},
}};

}  // namespace

Table<Context> GossipTable() { return kGossip; }
Table<Context> TransportTable() { return kTransport; }
std::span<const Family> GossipFamilies() { return kFamilies; }

}  // namespace peerbloom::daemon::registry
