// The broadcast relay (docs/relay.md).
#include <array>

#include "daemon/observe/registry/parts.h"

namespace peerbloom::daemon::registry {
namespace {

constexpr char kDropped[] = "peerbloom_relay_dropped_total";
constexpr char kPacketsSent[] = "peerbloom_relay_packets_sent_total";

constexpr std::array<Stat<RelayService>, 35> kRelay = {{
    {"links", "configured relay links", kValue, kStatsOnly,
     [](const RelayService& r) -> Json { return r.Stats()["links"]; }},
    {"links_up", "relay links membership knows alive with an endpoint", kGauge, kStatsOnly,
     [](const RelayService& r) -> Json { return r.Stats()["links_up"]; }},
    {"eager_links", "links pushing payloads (the broadcast tree here)", kGauge, kStatsOnly,
     [](const RelayService& r) -> Json { return r.Stats()["eager_links"]; }},
    {"broadcasts", "messages this node originated", kCounter, kStatsOnly,
     [](const RelayService& r) -> Json { return r.Stats()["broadcasts"]; }},
    {"broadcasts_refused", "broadcast requests refused (own rate, payload cap)", kCounter,
     kStatsOnly, [](const RelayService& r) -> Json { return r.Stats()["broadcasts_refused"]; }},
    {"delivered", "messages delivered here, each once", kCounter,
     Metric("peerbloom_relay_delivered_total"),
     [](const RelayService& r) -> Json { return r.relay_stats().delivered; }},
    {"duplicates", "second copies of delivered messages", kCounter,
     Metric(kDropped, {"reason", "duplicate"}),
     [](const RelayService& r) -> Json { return r.relay_stats().duplicates; }},
    {"stale", "copies older than the seen window", kCounter, Metric(kDropped, {"reason", "stale"}),
     [](const RelayService& r) -> Json { return r.relay_stats().stale; }},
    {"throttled", "messages dropped by per-origin flow control", kCounter,
     Metric(kDropped, {"reason", "throttled"}),
     [](const RelayService& r) -> Json { return r.relay_stats().throttled; }},
    {"hop_limited", "messages received at the hop limit (not forwarded)", kCounter,
     Metric(kDropped, {"reason", "hop_limited"}),
     [](const RelayService& r) -> Json { return r.relay_stats().hop_limited; }},
    {"malformed", "relay packets or frames that did not decode", kCounter,
     Metric(kDropped, {"reason", "malformed"}),
     [](const RelayService& r) -> Json { return r.Stats()["malformed"]; }},
    {"unknown_link", "packets from a node that is not a relay link", kCounter,
     Metric(kDropped, {"reason", "unknown_link"}),
     [](const RelayService& r) -> Json { return r.relay_stats().unknown_link; }},
    {"sender_mismatch", "frames naming another sender than the node of their link", kCounter,
     kStatsOnly, [](const RelayService& r) -> Json { return r.Stats()["sender_mismatch"]; }},
    {"signatures_refused", "messages refused: unsigned or bad origin signature", kCounter,
     Metric(kSignatureRefusals, {"reason", "broadcast"}),
     [](const RelayService& r) -> Json { return r.relay_stats().signatures_refused; }},
    {"filter_skips", "eager pushes turned into announcements by a visited-filter hit", kCounter,
     kStatsOnly, [](const RelayService& r) -> Json { return r.relay_stats().filter_skips; }},
    {"grafts_sent", "GRAFTs sent (repairs)", kCounter, kStatsOnly,
     [](const RelayService& r) -> Json { return r.relay_stats().grafts_sent; }},
    {"grafts_served", "GRAFTs answered with a payload", kCounter, kStatsOnly,
     [](const RelayService& r) -> Json { return r.relay_stats().grafts_served; }},
    {"cache_evicted", "cached messages dropped to keep within the cache's byte bounds", kCounter,
     kStatsOnly, [](const RelayService& r) -> Json { return r.relay_stats().cache_evicted; }},
    {"ihave_dropped", "announcements not awaited: too many awaited already", kCounter, kStatsOnly,
     [](const RelayService& r) -> Json { return r.relay_stats().ihave_dropped; }},
    {"gave_up", "announced messages never obtained", kCounter,
     Metric("peerbloom_relay_gave_up_total"),
     [](const RelayService& r) -> Json { return r.relay_stats().gave_up; }},
    {"prunes_sent", "PRUNEs sent", kCounter, kStatsOnly,
     [](const RelayService& r) -> Json { return r.relay_stats().prunes_sent; }},
    {"ihave_sent", "IHAVE entries sent", kCounter, kStatsOnly,
     [](const RelayService& r) -> Json { return r.relay_stats().announcements_sent; }},
    {"payloads_sent", "payload copies sent", kCounter, Metric(kPacketsSent, {"kind", "payload"}),
     [](const RelayService& r) -> Json { return r.relay_stats().payloads_sent; }},
    {"control_packets_sent", "IHAVE, GRAFT and PRUNE packets sent", kCounter,
     Metric(kPacketsSent, {"kind", "control"}),
     [](const RelayService& r) -> Json { return r.relay_stats().control_packets_sent; }},
    {"no_endpoint", "packets for a link membership has no endpoint for", kCounter, kStatsOnly,
     [](const RelayService& r) -> Json { return r.Stats()["no_endpoint"]; }},
    {"purges", "cluster-wide purges delivered here", kCounter, kStatsOnly,
     [](const RelayService& r) -> Json { return r.Stats()["purges"]; }},
    {"purge_actions_pending", "purge actions (HTTP PURGE, command) queued or running", kGauge,
     kStatsOnly, [](const RelayService& r) -> Json { return r.Stats()["purge_actions_pending"]; }},
    {"purge_actions_refused", "purge actions refused: too many under way", kCounter, kStatsOnly,
     [](const RelayService& r) -> Json { return r.Stats()["purge_actions_refused"]; }},
    {"purge_errors", "purges whose handling failed inside the daemon (contained and logged)",
     kCounter, kStatsOnly, [](const RelayService& r) -> Json { return r.Stats()["purge_errors"]; }},
    {"purge_results_dropped",
     "purge results not broadcast: results for that origin's purges over their share a second",
     kCounter, kStatsOnly,
     [](const RelayService& r) -> Json { return r.Stats()["purge_results_dropped"]; }},
    {"repairs_pending", "whether announcement rounds or GRAFTs are pending", kGauge,
     Metric("peerbloom_relay_repairs_pending"),
     [](const RelayService& r) -> Json { return r.repairs_pending(); }},
    {"last_seq", "the listen cursor of the newest delivery", kGauge, kStatsOnly,
     [](const RelayService& r) -> Json { return r.last_seq(); }},
    {"listen_dropped", "deliveries dropped from the listen buffer (oldest first)", kCounter,
     kStatsOnly, [](const RelayService& r) -> Json { return r.Stats()["listen_dropped"]; }},
    {"seen_saves", "times the seen messages were written to relay.seen", kCounter, kStatsOnly,
     [](const RelayService& r) -> Json { return r.Stats()["seen_saves"]; }},
    {"seen_save_errors", "writes of relay.seen that failed (logged)", kCounter, kStatsOnly,
     [](const RelayService& r) -> Json { return r.Stats()["seen_save_errors"]; }},
}};

constexpr std::array<Family, 2> kFamilies = {{
    {kDropped, "relay packets or messages not passed on, by reason"},
    {kPacketsSent, "relay packets sent: payload copies, and IHAVE, GRAFT and PRUNE packets"},
}};

}  // namespace

Table<RelayService> RelayTable() { return kRelay; }
std::span<const Family> RelayFamilies() { return kFamilies; }

}  // namespace peerbloom::daemon::registry
