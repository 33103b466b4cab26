// The `stats` and `peers` answers as tables: each entry names a value, says what it means
// and reads it. nlohmann::json objects keep their keys sorted, so the answer does not depend
// on the order of the tables.
#include "daemon/stats_report.h"

#include <array>
#include <cmath>
#include <string>

namespace peerbloom::daemon {
namespace {

using Json = nlohmann::json;

// What one `stats` answer reads, gathered once per request.
struct Context {
  const StatsSources& s;
  int64_t now;
  const Summary& summary;
  std::vector<PeerInfo> peers;
};

// A value read at a given loop time.
template <typename T>
struct At {
  const T& v;
  int64_t now;
};

int64_t AgeMs(int64_t now, int64_t then) { return then > 0 ? now - then : -1; }

constexpr std::array<StatEntry<Context>, 13> kFilter = {{
    {"k", "hash functions", [](const Context& c) -> Json { return c.s.parts.store.filter().k(); }},
    {"log2_counters", "log2 of the counter count",
     [](const Context& c) -> Json { return c.s.parts.store.filter().log2_counters(); }},
    {"counters", "4-bit counters",
     [](const Context& c) -> Json { return c.s.parts.store.filter().counters(); }},
    {"bytes", "memory of the counters",
     [](const Context& c) -> Json { return c.s.parts.store.filter().bytes(); }},
    {"items", "keys held",
     [](const Context& c) -> Json { return c.s.parts.store.filter().items(); }},
    {"capacity", "the configured capacity",
     [](const Context& c) -> Json { return c.s.parts.config.capacity; }},
    {"profile", "the configured profile",
     [](const Context& c) -> Json { return std::string(ProfileName(c.s.parts.config.profile)); }},
    {"key_scheme", "the configured key scheme",
     [](const Context& c) -> Json {
       return std::string(KeySchemeName(c.s.parts.config.key_scheme));
     }},
    {"saturated_counters", "counters stuck at 15",
     [](const Context& c) -> Json { return c.s.parts.store.filter().saturated_counters(); }},
    {"saturation_events", "increments that met a saturated counter",
     [](const Context& c) -> Json { return c.s.parts.store.filter().saturation_events(); }},
    {"refused_removes", "removes of keys the filter does not hold",
     [](const Context& c) -> Json { return c.s.parts.store.filter().refused_removes(); }},
    {"adds", "keys added", [](const Context& c) -> Json { return c.s.parts.store.stats().adds; }},
    {"removes", "keys removed",
     [](const Context& c) -> Json { return c.s.parts.store.stats().removes; }},
}};

constexpr std::array<StatEntry<Context>, 12> kSummary = {{
    {"epoch", "epoch of this incarnation",
     [](const Context& c) -> Json { return c.summary.epoch; }},
    {"version", "version of the latest summary",
     [](const Context& c) -> Json { return c.summary.version; }},
    {"k", "hash functions", [](const Context& c) -> Json { return c.summary.filter.k(); }},
    {"log2_bits", "log2 of the summary's bits",
     [](const Context& c) -> Json { return c.summary.filter.log2_bits(); }},
    {"set_bits", "bits set", [](const Context& c) -> Json { return c.summary.filter.PopCount(); }},
    {"estimated_fpr", "false-positive rate estimated from the fill",
     [](const Context& c) -> Json { return c.summary.filter.EstimatedFpr(); }},
    {"pending", "summary positions changed since the last publication",
     [](const Context& c) -> Json { return c.s.parts.store.builder()->pending(); }},
    {"published_full", "full summaries published",
     [](const Context& c) -> Json { return c.s.publish.full; }},
    {"published_deltas", "deltas published",
     [](const Context& c) -> Json { return c.s.publish.deltas; }},
    {"published_immediately", "publications forced by publish_threshold",
     [](const Context& c) -> Json { return c.s.publish.immediate; }},
    {"deltas_refused_by_engine", "deltas the gossip engine did not take (a full summary followed)",
     [](const Context& c) -> Json { return c.s.publish.refused_deltas; }},
    {"epochs_superseded", "epochs started because peers knew this node in a higher one",
     [](const Context& c) -> Json { return c.s.publish.new_epochs; }},
}};

constexpr std::array<StatEntry<Context>, 33> kGossip = {{
    {"members_known", "members known", [](const Context& c) -> Json { return c.peers.size(); }},
    {"members_alive", "members alive",
     [](const Context& c) -> Json {
       size_t alive = 0;
       for (const PeerInfo& p : c.peers) alive += p.alive ? 1 : 0;
       return alive;
     }},
    {"messages_in", "messages received",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().messages_in; }},
    {"messages_out", "messages sent",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().messages_out; }},
    {"bytes_in", "bytes received",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().bytes_in; }},
    {"bytes_out", "bytes sent",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().bytes_out; }},
    {"malformed_in", "messages refused as malformed",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().malformed_in; }},
    {"full_summaries_in", "full summaries received",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().full_summaries_in; }},
    {"full_summaries_out", "full summaries sent",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().full_summaries_out; }},
    {"deltas_in", "deltas received",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().deltas_in; }},
    {"deltas_out", "deltas sent",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().deltas_out; }},
    {"deltas_relayed", "deltas passed on for another origin",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().deltas_relayed; }},
    {"digests_in", "anti-entropy digests received",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().digests_in; }},
    {"digests_out", "anti-entropy digests sent",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().digests_out; }},
    {"requests_in", "summary requests received",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().requests_in; }},
    {"resyncs_requested", "full summaries asked for after a gap",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().resyncs_requested; }},
    {"stale_dropped", "summaries older than the one held",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().stale_dropped; }},
    {"queue_dropped", "messages dropped from full queues",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().queue_dropped; }},
    {"queue_dropped_bytes", "bytes of those messages",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().queue_dropped_bytes; }},
    {"members_refused", "members refused (bad id or endpoint, table full)",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().members_refused; }},
    {"local_publish_refused", "local publications the engine refused",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().local_publish_refused; }},
    {"summaries_out_of_bounds", "full summaries refused for a geometry beyond the bounds",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().summaries_out_of_bounds; }},
    {"signatures_verified", "origin signatures checked and valid",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().signatures_verified; }},
    {"signatures_refused", "summaries and deltas refused: unsigned or bad signature",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().signatures_refused; }},
    {"epochs_refused", "relayed epochs refused: no valid epoch certificate",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().epochs_refused; }},
    {"beats_refused", "relayed heartbeats refused: a beat signature not valid",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().beats_refused; }},
    {"sender_mismatch", "frames naming a sender other than their link's node",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().sender_mismatch; }},
    {"members_unlisted", "senders or entries naming a node id not in authorized_keys",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().members_unlisted; }},
    {"implausible_epochs", "epochs refused for being too far ahead of the clock",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().implausible_epochs; }},
    {"implausible_heartbeats", "heartbeats refused for advancing faster than possible",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().implausible_heartbeats; }},
    {"claims_corrected", "a node's own frame overrode what others claimed of it",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().claims_corrected; }},
    {"contacts_refused", "endpoints or keys not bound to the node id",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().contacts_refused; }},
    {"members_revoked", "members dropped when authorized_keys lost them",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().members_revoked; }},
}};

constexpr std::array<StatEntry<Context>, 20> kTransport = {{
    {"curve", "whether CURVE is on",
     [](const Context& c) -> Json { return c.s.parts.config.curve; }},
    {"messages_in", "frames received",
     [](const Context& c) -> Json { return c.s.transport.stats().messages_in; }},
    {"bytes_in", "bytes received",
     [](const Context& c) -> Json { return c.s.transport.stats().bytes_in; }},
    {"messages_out", "frames sent",
     [](const Context& c) -> Json { return c.s.transport.stats().messages_out; }},
    {"bytes_out", "bytes sent",
     [](const Context& c) -> Json { return c.s.transport.stats().bytes_out; }},
    {"send_dropped", "sends dropped on a full send queue",
     [](const Context& c) -> Json { return c.s.transport.stats().send_dropped; }},
    {"send_no_key", "sends with CURVE on and no key known for the endpoint",
     [](const Context& c) -> Json { return c.s.transport.stats().send_no_key; }},
    {"refused_frames", "messages that were not exactly one frame",
     [](const Context& c) -> Json { return c.s.transport.stats().refused_frames; }},
    {"refused_by_gossip", "frames the gossip engine refused",
     [](const Context& c) -> Json { return c.s.transport.stats().refused_by_gossip; }},
    {"zap_allowed", "CURVE handshakes of authorized keys",
     [](const Context& c) -> Json { return c.s.transport.stats().zap_allowed; }},
    {"zap_denied", "CURVE handshakes of unauthorized keys",
     [](const Context& c) -> Json { return c.s.transport.stats().zap_denied; }},
    {"links_accepted", "incoming links accepted",
     [](const Context& c) -> Json { return c.s.transport.stats().links_accepted; }},
    {"links_disconnected", "links closed, oversized frames included",
     [](const Context& c) -> Json { return c.s.transport.stats().links_disconnected; }},
    {"handshakes_failed", "handshakes that failed",
     [](const Context& c) -> Json { return c.s.transport.stats().handshakes_failed; }},
    {"links_open", "links open now",
     [](const Context& c) -> Json { return c.s.transport.stats().links_open; }},
    {"frames_revoked", "frames on a link whose key authorized_keys no longer lists",
     [](const Context& c) -> Json { return c.s.transport.stats().frames_revoked; }},
    {"links_revoked", "outgoing links closed when their key was delisted",
     [](const Context& c) -> Json { return c.s.transport.stats().links_revoked; }},
    {"inbound_closed", "inbound connections shut down when a key was delisted",
     [](const Context& c) -> Json { return c.s.transport.stats().inbound_closed; }},
    {"links_refused", "outgoing links refused at max_links",
     [](const Context& c) -> Json { return c.s.transport.stats().links_refused; }},
    {"send_unlisted", "sends to a key authorized_keys does not list",
     [](const Context& c) -> Json { return c.s.transport.stats().send_unlisted; }},
}};

constexpr std::array<StatEntry<Context>, 11> kControl = {{
    {"requests", "requests served",
     [](const Context& c) -> Json { return c.s.control.stats().requests; }},
    {"errors", "replies with \"ok\": false",
     [](const Context& c) -> Json { return c.s.control.stats().errors; }},
    {"malformed", "bad envelopes or headers",
     [](const Context& c) -> Json { return c.s.control.stats().malformed; }},
    {"internal_errors", "operations that threw",
     [](const Context& c) -> Json { return c.s.control.stats().internal_errors; }},
    {"unauthorized", "requests without the control token or with a wrong one",
     [](const Context& c) -> Json { return c.s.control.stats().unauthorized; }},
    {"connections", "tcp connections accepted",
     [](const Context& c) -> Json { return c.s.control.tcp_stats().connections; }},
    {"open", "tcp connections open",
     [](const Context& c) -> Json { return c.s.control.open_connections(); }},
    {"max_connections", "tcp connections held at most (0 for ipc)",
     [](const Context& c) -> Json { return c.s.control.max_connections(); }},
    {"evicted", "tcp connections closed to make room for a new one",
     [](const Context& c) -> Json { return c.s.control.tcp_stats().evicted; }},
    {"shed", "tcp connections closed at once: no descriptor left",
     [](const Context& c) -> Json { return c.s.control.tcp_stats().shed; }},
    {"dropped_bytes", "bytes of refused tcp requests read and dropped, never held",
     [](const Context& c) -> Json { return c.s.control.tcp_stats().dropped_bytes; }},
}};

const WhoHasSocket& W(const Context& c) { return *c.s.who_has_socket; }

constexpr std::array<StatEntry<Context>, 8> kWhoHasSocket = {{
    {"connections", "connections accepted",
     [](const Context& c) -> Json { return W(c).stats().connections; }},
    {"open", "connections open", [](const Context& c) -> Json { return W(c).open_connections(); }},
    {"max_connections", "connections held at most",
     [](const Context& c) -> Json { return W(c).max_connections(); }},
    {"evicted", "connections closed to make room for a new one",
     [](const Context& c) -> Json { return W(c).stats().evicted; }},
    {"shed", "connections closed at once: no descriptor left",
     [](const Context& c) -> Json { return W(c).stats().shed; }},
    {"requests", "lines answered", [](const Context& c) -> Json { return W(c).stats().requests; }},
    {"overlong", "connections closed for a line over 64 KiB",
     [](const Context& c) -> Json { return W(c).stats().overlong; }},
    {"output_bytes", "answers written and not yet read by their clients",
     [](const Context& c) -> Json { return W(c).output_bytes(); }},
}};

MetricsServerStats M(const Context& c) { return c.s.metrics_server->stats(); }

constexpr std::array<StatEntry<Context>, 8> kMetricsEndpoint = {{
    {"scrapes", "answers to GET /metrics", [](const Context& c) -> Json { return M(c).scrapes; }},
    {"connections", "connections accepted",
     [](const Context& c) -> Json { return M(c).connections; }},
    {"open", "connections open", [](const Context& c) -> Json { return M(c).open; }},
    {"max_connections", "connections held at most",
     [](const Context& c) -> Json { return c.s.metrics_server->max_connections(); }},
    {"evicted", "connections closed to make room for a new one",
     [](const Context& c) -> Json { return M(c).evicted; }},
    {"timed_out", "connections closed: no whole request, or the answer not taken, in 5 s",
     [](const Context& c) -> Json { return M(c).timed_out; }},
    {"shed", "connections closed at once: no descriptor left",
     [](const Context& c) -> Json { return M(c).shed; }},
    {"bad_requests", "requests answered 400, 405, 413 or 431",
     [](const Context& c) -> Json { return M(c).bad_requests; }},
}};

constexpr std::array<StatEntry<Context>, 9> kSnapshot = {{
    {"path", "the snapshot file", [](const Context& c) -> Json { return c.s.snapshot_path; }},
    {"restored", "whether this start restored a snapshot",
     [](const Context& c) -> Json { return c.s.snapshot.restored; }},
    {"legacy_geometry",
     "whether the filter keeps the restored snapshot's geometry of an earlier sizing rule",
     [](const Context& c) -> Json { return c.s.snapshot.legacy_geometry; }},
    {"written", "snapshots written", [](const Context& c) -> Json { return c.s.snapshot.written; }},
    {"failed", "snapshots that failed",
     [](const Context& c) -> Json { return c.s.snapshot.failed; }},
    {"failure_episodes", "runs of failed snapshots, each ended by a write that succeeded",
     [](const Context& c) -> Json { return c.s.snapshot.failure_episodes; }},
    {"failing", "whether the last snapshot failed",
     [](const Context& c) -> Json { return c.s.snapshot.failing; }},
    {"last_duration_ms", "time the last write took",
     [](const Context& c) -> Json { return c.s.snapshot.last_duration_ms; }},
    {"last_unix_ms", "wall time of the last write",
     [](const Context& c) -> Json { return c.s.snapshot.last_unix_ms; }},
}};

constexpr std::array<StatEntry<Context>, 5> kFaults = {{
    {"injected_dropped", "peer messages dropped by test_fault_drop or test_fault_blocked",
     [](const Context& c) -> Json { return c.s.transport.stats().fault_dropped; }},
    {"injected_duplicated", "peer messages sent twice by test_fault_duplicate",
     [](const Context& c) -> Json { return c.s.transport.stats().fault_duplicated; }},
    {"injected_reordered", "peer messages held back by test_fault_reorder",
     [](const Context& c) -> Json { return c.s.transport.stats().fault_reordered; }},
    {"clock_jumps", "steps of the wall clock against the monotonic clock",
     [](const Context& c) -> Json { return c.s.faults.clock_jumps; }},
    {"last_clock_jump_ms", "the last step, negative when the clock went back",
     [](const Context& c) -> Json { return c.s.faults.last_clock_jump_ms; }},
}};

constexpr std::array<StatEntry<StoreLogState>, 6> kStoreLog = {{
    {"live_keys", "keys Squid holds by the log",
     [](const StoreLogState& s) -> Json { return s.live().size(); }},
    {"duplicate_swapouts", "SWAPOUTs of a key already live",
     [](const StoreLogState& s) -> Json { return s.counters().duplicate_swapouts; }},
    {"unknown_releases", "RELEASEs of a key not live",
     [](const StoreLogState& s) -> Json { return s.counters().unknown_releases; }},
    {"swapout_failures", "SWAPOUT failures",
     [](const StoreLogState& s) -> Json { return s.counters().swapout_failures; }},
    {"other_actions", "lines with other actions",
     [](const StoreLogState& s) -> Json { return s.counters().other_actions; }},
    {"internal", "Squid's internal objects skipped",
     [](const StoreLogState& s) -> Json { return s.counters().internal; }},
}};

constexpr std::array<StatEntry<RebuildStats>, 11> kRebuild = {{
    {"running", "whether a rebuild is reading",
     [](const RebuildStats& r) -> Json { return r.running; }},
    {"started", "rebuilds started", [](const RebuildStats& r) -> Json { return r.started; }},
    {"finished", "rebuilds finished", [](const RebuildStats& r) -> Json { return r.finished; }},
    {"failed", "rebuilds failed", [](const RebuildStats& r) -> Json { return r.failed; }},
    {"held", "log lines held while the rebuild read",
     [](const RebuildStats& r) -> Json { return r.held; }},
    {"journal", "keys in the last rebuild's journal",
     [](const RebuildStats& r) -> Json { return r.journal; }},
    {"added", "keys the last rebuild added", [](const RebuildStats& r) -> Json { return r.added; }},
    {"removed", "keys the last rebuild removed",
     [](const RebuildStats& r) -> Json { return r.removed; }},
    {"duration_ms", "time the last rebuild took",
     [](const RebuildStats& r) -> Json { return r.duration_ms; }},
    {"trigger", "what started the last rebuild",
     [](const RebuildStats& r) -> Json { return r.trigger; }},
    {"last_error", "why the last rebuild failed",
     [](const RebuildStats& r) -> Json { return r.last_error; }},
}};

constexpr std::array<StatEntry<Feed>, 26> kFeed = {{
    {"path", "the feed's path", [](const Feed& f) -> Json { return f.config().path; }},
    {"format", "line or squid-store-log", [](const Feed& f) -> Json { return f.config().format; }},
    {"store_log", "store.log feeds: the live set's counters, null otherwise",
     [](const Feed& f) -> Json {
       const StoreLogState* st = f.store_log();
       return st ? StatObject<StoreLogState>(kStoreLog, *st) : Json(nullptr);
     }},
    {"fifo", "whether the path is a FIFO", [](const Feed& f) -> Json { return f.is_fifo(); }},
    {"open", "whether the path is open", [](const Feed& f) -> Json { return f.is_open(); }},
    {"offset", "bytes read of the current file",
     [](const Feed& f) -> Json { return f.position().offset; }},
    {"lag_bytes", "bytes not read yet: the rest of the current file and queued rotated files",
     [](const Feed& f) -> Json { return f.unread_bytes(); }},
    {"lines", "lines read", [](const Feed& f) -> Json { return f.stats().lines; }},
    {"adds", "adds applied", [](const Feed& f) -> Json { return f.stats().adds; }},
    {"removes", "removes applied", [](const Feed& f) -> Json { return f.stats().removes; }},
    {"removes_refused", "removes the filter refused",
     [](const Feed& f) -> Json { return f.stats().removes_refused; }},
    {"malformed", "lines refused", [](const Feed& f) -> Json { return f.stats().malformed; }},
    {"bytes", "bytes read", [](const Feed& f) -> Json { return f.follower_stats().bytes; }},
    {"long_lines_skipped", "lines over the length limit",
     [](const Feed& f) -> Json { return f.follower_stats().long_lines_skipped; }},
    {"opens", "opens of the path", [](const Feed& f) -> Json { return f.follower_stats().opens; }},
    {"rotations", "rotations followed",
     [](const Feed& f) -> Json { return f.follower_stats().rotations; }},
    {"truncations", "truncations seen",
     [](const Feed& f) -> Json { return f.follower_stats().truncations; }},
    {"resumes", "saved positions resumed",
     [](const Feed& f) -> Json { return f.follower_stats().resumes; }},
    {"resume_mismatches", "saved positions not found at the path",
     [](const Feed& f) -> Json { return f.follower_stats().resume_mismatches; }},
    {"resumes_rotated", "saved positions found under a rotated name",
     [](const Feed& f) -> Json { return f.follower_stats().resumes_rotated; }},
    {"resumes_lost", "saved positions whose file's tail is gone",
     [](const Feed& f) -> Json { return f.follower_stats().resumes_lost; }},
    {"resume_lost", "which file and byte were lost",
     [](const Feed& f) -> Json { return f.resume_lost(); }},
    {"rotated_files_read", "rotated files read after a resume",
     [](const Feed& f) -> Json { return f.follower_stats().rotated_files_read; }},
    {"dropped_partial_lines", "unterminated lines dropped",
     [](const Feed& f) -> Json { return f.follower_stats().dropped_partial_lines; }},
    {"rebuild", "the live set's rebuilds from cache_dirs",
     [](const Feed& f) -> Json { return StatObject<RebuildStats>(kRebuild, f.rebuild_stats()); }},
    {"read_errors", "read errors",
     [](const Feed& f) -> Json { return f.follower_stats().read_errors; }},
}};

using SourceAt = At<DigestSourceStats>;
constexpr std::array<StatEntry<SourceAt>, 16> kDigestSource = {{
    {"source", "HOST:PORT", [](const SourceAt& d) -> Json { return d.v.source; }},
    {"url", "the digest's URL", [](const SourceAt& d) -> Json { return d.v.url; }},
    {"fetches", "fetches done", [](const SourceAt& d) -> Json { return d.v.fetches; }},
    {"failures", "fetches failed", [](const SourceAt& d) -> Json { return d.v.failures; }},
    {"consecutive_failures", "failures since the last success",
     [](const SourceAt& d) -> Json { return d.v.consecutive_failures; }},
    {"bytes", "bytes of accepted digests", [](const SourceAt& d) -> Json { return d.v.bytes; }},
    {"in_flight", "whether a fetch runs", [](const SourceAt& d) -> Json { return d.v.in_flight; }},
    {"last_error", "why the last fetch failed",
     [](const SourceAt& d) -> Json { return d.v.last_error; }},
    {"age_ms", "age of the last accepted digest",
     [](const SourceAt& d) -> Json { return d.v.age_ms; }},
    {"next_fetch_in_ms", "time to the next fetch",
     [](const SourceAt& d) -> Json { return d.v.next_fetch_ms - d.now; }},
    {"digest_bytes", "size of the last digest",
     [](const SourceAt& d) -> Json { return d.v.digest_bytes; }},
    {"capacity", "the last digest's capacity",
     [](const SourceAt& d) -> Json { return d.v.capacity; }},
    {"count", "the last digest's entry count", [](const SourceAt& d) -> Json { return d.v.count; }},
    {"fill", "the last digest's fill", [](const SourceAt& d) -> Json { return d.v.fill; }},
    {"estimated_fpr", "the last digest's estimated false-positive rate",
     [](const SourceAt& d) -> Json { return d.v.estimated_fpr; }},
    {"valid_for_ms", "time until the last digest's refresh",
     [](const SourceAt& d) -> Json { return d.v.valid_for_ms; }},
}};

using PeerAt = At<PeerInfo>;
constexpr std::array<StatEntry<PeerAt>, 8> kImported = {{
    {"node_id", "squid:HOST:PORT", [](const PeerAt& p) -> Json { return p.v.node_id; }},
    {"url", "the digest's URL", [](const PeerAt& p) -> Json { return p.v.endpoint; }},
    {"imported_by", "the node that fetches it",
     [](const PeerAt& p) -> Json { return p.v.imported_by; }},
    {"alive", "whether it is refreshed", [](const PeerAt& p) -> Json { return p.v.alive; }},
    {"capacity", "the digest's capacity",
     [](const PeerAt& p) -> Json { return p.v.digest_capacity; }},
    {"fill", "the digest's fill", [](const PeerAt& p) -> Json { return p.v.digest_fill; }},
    {"estimated_fpr", "the digest's estimated false-positive rate",
     [](const PeerAt& p) -> Json { return p.v.digest_fpr; }},
    {"age_ms", "age of the digest held",
     [](const PeerAt& p) -> Json { return AgeMs(p.now, p.v.summary_received_ms); }},
}};

constexpr std::array<StatEntry<PeerAt>, 16> kPeer = {{
    {"node_id", "the member's node id", [](const PeerAt& p) -> Json { return p.v.node_id; }},
    {"endpoint", "its peer endpoint", [](const PeerAt& p) -> Json { return p.v.endpoint; }},
    {"public_key", "its CURVE key", [](const PeerAt& p) -> Json { return p.v.public_key; }},
    {"alive", "heard from within failure_timeout",
     [](const PeerAt& p) -> Json { return p.v.alive; }},
    {"neighbour", "linked directly", [](const PeerAt& p) -> Json { return p.v.neighbour; }},
    {"chosen", "in this node's neighbour set", [](const PeerAt& p) -> Json { return p.v.chosen; }},
    {"imported", "an imported Squid digest", [](const PeerAt& p) -> Json { return p.v.imported; }},
    {"epoch", "its epoch", [](const PeerAt& p) -> Json { return p.v.epoch; }},
    {"summary_epoch", "epoch of the summary held",
     [](const PeerAt& p) -> Json { return p.v.summary_epoch; }},
    {"version", "version of the summary held", [](const PeerAt& p) -> Json { return p.v.version; }},
    {"heartbeat", "its heartbeat", [](const PeerAt& p) -> Json { return p.v.heartbeat; }},
    {"estimated_items", "keys its summary holds, estimated",
     [](const PeerAt& p) -> Json { return p.v.estimated_items; }},
    {"k", "its summary's hash functions", [](const PeerAt& p) -> Json { return p.v.k; }},
    {"log2_bits", "log2 of its summary's bits",
     [](const PeerAt& p) -> Json { return p.v.log2_bits; }},
    {"last_heard_ms_ago", "time since it was last heard of",
     [](const PeerAt& p) -> Json { return p.now - p.v.last_heard_ms; }},
    {"summary_age_ms", "age of the summary held, -1 without one",
     [](const PeerAt& p) -> Json { return AgeMs(p.now, p.v.summary_received_ms); }},
}};

template <typename T, typename Table>
Json ArrayOf(const Table& table, const std::vector<T>& items, int64_t now) {
  Json out = Json::array();
  for (const T& item : items) out.push_back(StatObject<At<T>>(table, At<T>{item, now}));
  return out;
}

constexpr std::array<StatEntry<Context>, 9> kDigests = {{
    {"sources", "this daemon's [[squid_digest]] entries",
     [](const Context& c) -> Json {
       const DigestFetcher* f = c.s.digests.fetcher();
       return ArrayOf(kDigestSource, f ? f->Stats(c.now) : std::vector<DigestSourceStats>(), c.now);
     }},
    {"imported", "every imported digest this node knows, its own and gossiped",
     [](const Context& c) -> Json {
       std::vector<PeerInfo> imported;
       for (const PeerInfo& p : c.peers) {
         if (p.imported) imported.push_back(p);
       }
       return ArrayOf(kImported, imported, c.now);
     }},
    {"applied", "fetched digests the engine took",
     [](const Context& c) -> Json { return c.s.digests.applied(); }},
    {"refused", "fetched digests the engine refused",
     [](const Context& c) -> Json { return c.s.digests.refused(); }},
    {"imports_in", "imported digests received",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().imports_in; }},
    {"imports_out", "imported digests sent",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().imports_out; }},
    {"imports_refused", "imported digests refused",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().imports_refused; }},
    {"imports_expired", "imported digests expired unrefreshed",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().imports_expired; }},
    {"imports_over_quota", "import frames refused for an importer's quota",
     [](const Context& c) -> Json { return c.s.parts.engine.stats().imports_over_quota; }},
}};

// A peer's summary's false-positive rate from what `peers` knows of it: (1 - e^(-kn/m))^k
// (Fan et al. 2000, eq. 1), 0 without a summary.
double PeerEstimatedFpr(const PeerInfo& p) {
  if (p.k == 0 || p.log2_bits == 0) return 0.0;
  if (p.imported) return p.digest_fpr;
  const double m = std::ldexp(1.0, static_cast<int>(p.log2_bits));
  const double k = p.k;
  return std::pow(1.0 - std::exp(-k * static_cast<double>(p.estimated_items) / m), k);
}

// One node's routing outcomes beside its summary's estimated false-positive rate.
struct NodeRoutes {
  const std::string& node_id;
  RouteCounts counts;
  double estimated_fpr;  // -1 when the node is not a member this daemon knows
};

constexpr std::array<StatEntry<NodeRoutes>, 7> kNodeRoutes = {{
    {"node_id", "the peer requests were routed to",
     [](const NodeRoutes& r) -> Json { return r.node_id; }},
    {"routed", "requests routed to it whose outcome is known",
     [](const NodeRoutes& r) -> Json { return r.counts.routed; }},
    {"hits", "routed requests it held", [](const NodeRoutes& r) -> Json { return r.counts.hits; }},
    {"false_hits", "routed requests it did not hold, while it was up",
     [](const NodeRoutes& r) -> Json { return r.counts.false_hits; }},
    {"unreachable", "routed requests that went direct while it was down or cut off",
     [](const NodeRoutes& r) -> Json { return r.counts.unreachable; }},
    {"false_hit_rate", "false_hits / (hits + false_hits)",
     [](const NodeRoutes& r) -> Json { return r.counts.FalseHitRate(); }},
    {"estimated_fpr", "its summary's estimated false-positive rate, -1 for an unknown node",
     [](const NodeRoutes& r) -> Json { return r.estimated_fpr; }},
}};

// Helpers that reported within this long count as running.
constexpr int64_t kHelperActiveMs = 10 * 60 * 1000;

constexpr std::array<StatEntry<Context>, 13> kHelper = {{
    {"helpers", "helper processes that reported within 10 minutes",
     [](const Context& c) -> Json { return c.s.parts.helpers.Active(c.now, kHelperActiveMs); }},
    {"reports", "report lines taken",
     [](const Context& c) -> Json { return c.s.parts.helpers.reports(); }},
    {"last_report_ms_ago", "time since the latest report, -1 before any",
     [](const Context& c) -> Json {
       const int64_t last = c.s.parts.helpers.last_report_ms();
       return c.s.parts.helpers.reports() == 0 ? int64_t{-1} : c.now - last;
     }},
    {"answered_peer", "answered OK peer=NAME (the request was routed)",
     [](const Context& c) -> Json { return c.s.parts.helpers.Totals().peer; }},
    {"answered_none", "answered ERR: no peer's summary claims the URL",
     [](const Context& c) -> Json { return c.s.parts.helpers.Totals().none; }},
    {"answered_invalid", "answered ERR: the line held no URL",
     [](const Context& c) -> Json { return c.s.parts.helpers.Totals().invalid; }},
    {"errors", "answered ERR because the daemon could not be asked",
     [](const Context& c) -> Json { return c.s.parts.helpers.Totals().Errors(); }},
    {"errors_no_socket", "... the who-has socket did not exist",
     [](const Context& c) -> Json { return c.s.parts.helpers.Totals().no_socket; }},
    {"errors_denied", "... permission denied on the who-has socket",
     [](const Context& c) -> Json { return c.s.parts.helpers.Totals().denied; }},
    {"errors_refused", "... connection refused (no daemon behind the socket)",
     [](const Context& c) -> Json { return c.s.parts.helpers.Totals().refused; }},
    {"errors_timeout", "... no answer within the helper's --wait-ms",
     [](const Context& c) -> Json { return c.s.parts.helpers.Totals().timeout; }},
    {"errors_other", "... any other failure",
     [](const Context& c) -> Json { return c.s.parts.helpers.Totals().other; }},
    {"malformed_reports", "report lines refused",
     [](const Context& c) -> Json { return c.s.parts.helpers.malformed(); }},
}};

constexpr std::array<StatEntry<Context>, 6> kRouteLog = {{
    {"path", "squid_route_log",
     [](const Context& c) -> Json { return c.s.parts.route_log->follower().path(); }},
    {"lines", "lines read",
     [](const Context& c) -> Json { return c.s.parts.route_log->stats().lines; }},
    {"routed", "lines of routed requests",
     [](const Context& c) -> Json { return c.s.parts.route_log->stats().routed; }},
    {"unnamed", "routed to a cache_peer name squid_peer_names does not map",
     [](const Context& c) -> Json { return c.s.parts.route_log->stats().unnamed; }},
    {"read_errors", "failed reads",
     [](const Context& c) -> Json { return c.s.parts.route_log->stats().read_errors; }},
    {"last_error", "the last read error, \"\" for none",
     [](const Context& c) -> Json { return c.s.parts.route_log->last_error(); }},
}};

constexpr std::array<StatEntry<Context>, 11> kRouting = {{
    {"routed", "requests routed to peers whose outcome is known",
     [](const Context& c) -> Json { return c.s.parts.routes.total().routed; }},
    {"hits", "routed requests the peer held",
     [](const Context& c) -> Json { return c.s.parts.routes.total().hits; }},
    {"false_hits", "routed requests the peer did not hold, while it was up",
     [](const Context& c) -> Json { return c.s.parts.routes.total().false_hits; }},
    {"unreachable", "routed requests that went direct while the peer was down or cut off",
     [](const Context& c) -> Json { return c.s.parts.routes.total().unreachable; }},
    {"false_hit_rate", "false_hits / (hits + false_hits)",
     [](const Context& c) -> Json { return c.s.parts.routes.total().FalseHitRate(); }},
    {"pending", "requests that went direct, waiting for the peer's liveness to settle them",
     [](const Context& c) -> Json { return c.s.parts.routes.pending(); }},
    {"log", "squid_route_log as read; null when not set",
     [](const Context& c) -> Json {
       return c.s.parts.route_log ? StatObject<Context>(kRouteLog, c) : Json();
     }},
    {"reports", "report requests taken",
     [](const Context& c) -> Json { return c.s.parts.routes.reports(); }},
    {"untracked", "outcomes for nodes past the tracked-node bound (in the totals only)",
     [](const Context& c) -> Json { return c.s.parts.routes.untracked(); }},
    {"helper", "what Squid's helpers answered, as they report it (docs/squid.md)",
     [](const Context& c) -> Json { return StatObject<Context>(kHelper, c); }},
    {"peers", "one object per node an outcome was reported for",
     [](const Context& c) -> Json {
       Json out = Json::array();
       for (const auto& [id, counts] : c.s.parts.routes.nodes()) {
         double fpr = -1.0;
         for (const PeerInfo& p : c.peers) {
           if (p.node_id == id) fpr = PeerEstimatedFpr(p);
         }
         out.push_back(StatObject<NodeRoutes>(kNodeRoutes, NodeRoutes{id, counts, fpr}));
       }
       return out;
     }},
}};

constexpr std::array<StatEntry<Context>, 17> kTop = {{
    {"node_id", "this node's id",
     [](const Context& c) -> Json { return c.s.parts.config.node_id; }},
    {"endpoint", "the advertised peer endpoint",
     [](const Context& c) -> Json { return c.s.parts.endpoint; }},
    {"uptime_ms", "time since start",
     [](const Context& c) -> Json { return c.now - c.s.start_ms; }},
    {"filter", "the local counting filter",
     [](const Context& c) -> Json { return StatObject<Context>(kFilter, c); }},
    {"summary", "the published summary",
     [](const Context& c) -> Json { return StatObject<Context>(kSummary, c); }},
    {"gossip", "the gossip engine",
     [](const Context& c) -> Json { return StatObject<Context>(kGossip, c); }},
    {"transport", "peer links",
     [](const Context& c) -> Json { return StatObject<Context>(kTransport, c); }},
    {"control", "the control endpoint",
     [](const Context& c) -> Json { return StatObject<Context>(kControl, c); }},
    {"who_has_socket", "the who-has socket, null when off",
     [](const Context& c) -> Json {
       return c.s.who_has_socket ? StatObject<Context>(kWhoHasSocket, c) : Json();
     }},
    {"metrics_endpoint", "the /metrics endpoint, null without metrics_listen",
     [](const Context& c) -> Json {
       return c.s.metrics_server ? StatObject<Context>(kMetricsEndpoint, c) : Json();
     }},
    {"snapshot", "snapshots",
     [](const Context& c) -> Json { return StatObject<Context>(kSnapshot, c); }},
    {"faults", "faults injected (tests only) and noticed",
     [](const Context& c) -> Json { return StatObject<Context>(kFaults, c); }},
    {"feeds", "one object per feed",
     [](const Context& c) -> Json {
       Json feeds = Json::array();
       for (const auto& feed : c.s.parts.feeds) feeds.push_back(StatObject<Feed>(kFeed, *feed));
       return feeds;
     }},
    {"squid_digests", "imported Squid digests",
     [](const Context& c) -> Json { return StatObject<Context>(kDigests, c); }},
    {"reloads", "SIGHUP reloads applied", [](const Context& c) -> Json { return c.s.reloads; }},
    {"routing", "outcomes of requests routed to peers (docs/squid.md)",
     [](const Context& c) -> Json { return StatObject<Context>(kRouting, c); }},
    {"relay", "the broadcast relay",
     [](const Context& c) -> Json { return RelayStatsObject(c.s.relay); }},
}};

template <typename Source, size_t N>
std::vector<StatDoc> Docs(const std::array<StatEntry<Source>, N>& table) {
  return StatDocs<Source>(table);
}

}  // namespace

Json StatsReport::Stats(int64_t now) const {
  const Context c{s_, now, s_.parts.store.builder()->current(), s_.parts.engine.Peers(now)};
  return StatObject<Context>(kTop, c);
}

// Each member's entry carries its routing outcomes beside its summary's estimated FPR.
Json StatsReport::Peers(int64_t now) const {
  const std::vector<PeerInfo> peers = s_.parts.engine.Peers(now);
  Json out = ArrayOf(kPeer, peers, now);
  for (size_t i = 0; i < peers.size(); ++i) {
    const NodeRoutes r{peers[i].node_id, s_.parts.routes.For(peers[i].node_id),
                       PeerEstimatedFpr(peers[i])};
    out[i]["routing"] = StatObject<NodeRoutes>(std::span(kNodeRoutes).subspan(1), r);
  }
  return out;
}

std::vector<StatDoc> StatsReference() {
  std::vector<StatDoc> top = Docs(kTop);
  for (StatDoc& group : top) {
    if (group.name == "filter") group.fields = Docs(kFilter);
    if (group.name == "summary") group.fields = Docs(kSummary);
    if (group.name == "gossip") group.fields = Docs(kGossip);
    if (group.name == "transport") group.fields = Docs(kTransport);
    if (group.name == "control") group.fields = Docs(kControl);
    if (group.name == "who_has_socket") group.fields = Docs(kWhoHasSocket);
    if (group.name == "metrics_endpoint") group.fields = Docs(kMetricsEndpoint);
    if (group.name == "snapshot") group.fields = Docs(kSnapshot);
    if (group.name == "faults") group.fields = Docs(kFaults);
    if (group.name == "relay") group.fields = RelayStatsReference();
    if (group.name == "feeds") {
      group.fields = Docs(kFeed);
      for (StatDoc& f : group.fields) {
        if (f.name == "store_log") f.fields = Docs(kStoreLog);
        if (f.name == "rebuild") f.fields = Docs(kRebuild);
      }
    }
    if (group.name == "squid_digests") {
      group.fields = Docs(kDigests);
      group.fields[0].fields = Docs(kDigestSource);
      group.fields[1].fields = Docs(kImported);
    }
    if (group.name == "routing") {
      group.fields = Docs(kRouting);
      for (StatDoc& f : group.fields) {
        if (f.name == "helper") f.fields = Docs(kHelper);
        if (f.name == "log") f.fields = Docs(kRouteLog);
        if (f.name == "peers") f.fields = Docs(kNodeRoutes);
      }
    }
  }
  return top;
}

std::vector<StatDoc> PeersReference() {
  std::vector<StatDoc> docs = Docs(kPeer);
  StatDoc routing{"routing", "outcomes of requests routed to it", Docs(kNodeRoutes)};
  routing.fields.erase(routing.fields.begin());  // node_id is the entry's own
  docs.push_back(std::move(routing));
  return docs;
}

}  // namespace peerbloom::daemon
