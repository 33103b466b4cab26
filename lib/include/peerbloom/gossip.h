// GossipEngine: membership, failure detection and summary dissemination as a state machine.
//
// Pure logic: no sockets, threads or clocks. The daemon feeds it events (a message arrived,
// time passed, the local summary changed) with the current monotonic time in milliseconds,
// and carries out what it asks for (send these bytes to that endpoint). Tests drive it with a
// fake clock and an in-memory "network" (tests/unit/gossip/).
//
// Protocol (docs/wire-protocol.md): every message is one self-describing frame that names its
// sender (node id, advertised endpoint). A node keeps links to a bounded set of neighbours
// (its seeds plus `fanout` live members chosen at random, re-chosen over time), so clusters of
// hundreds of nodes need no full mesh:
//  - on (re)joining a neighbour, both sides exchange digests (origin, epoch, version,
//    heartbeat) of everything they know, and each sends the other the full summaries it
//    lacks or holds newer;
//  - each gossip interval, a node sends its own deltas (and those it received from others,
//    relayed once) to its neighbours; a receiver that sees a gap in an origin's versions asks
//    for a full summary and never guesses (the sender may answer with the missing deltas).
//    Duplicates prune links per origin, so each origin's deltas settle on a relay tree
//    (docs/gossip.md);
//  - periodic anti-entropy (digest exchange with a random neighbour) repairs anything missed;
//  - heartbeats ride on digests: a member whose heartbeat has not advanced within the
//    failure timeout, directly or through gossip, is dead: it disappears from who-has answers,
//    and comes back when a newer heartbeat is heard. A higher epoch from the same node id
//    (a restart) replaces what is known of the old one; its old summary keeps answering
//    who-has until the new epoch's full summary replaces it (docs/gossip.md, "Restarts").
//
// Thread-safety: none; the daemon's single event loop owns it.
#ifndef PEERBLOOM_GOSSIP_H_
#define PEERBLOOM_GOSSIP_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "peerbloom/hash.h"
#include "peerbloom/key_scheme.h"
#include "peerbloom/origin_sig.h"
#include "peerbloom/peer_match.h"
#include "peerbloom/status.h"
#include "peerbloom/summary.h"
#include "peerbloom/summary_bounds.h"
#include "peerbloom/wire.h"

namespace peerbloom {

// A peer to join through. The public key is its CurveZMQ server key (Z85, 40 chars), empty
// when the cluster runs without CURVE.
struct Seed {
  std::string endpoint;
  std::string public_key;
  bool operator==(const Seed&) const = default;
};

// Addition: a node of the allow-list (authorized_keys): the node id, the CURVE keys that
// speak for it and, when given, the only endpoint it is dialled at.
struct ListedNode {
  std::string node_id;
  std::vector<std::string> public_keys;  // Z85; several during a key rotation
  std::string endpoint;                  // "" when not given
  bool operator==(const ListedNode&) const = default;
};

// How members are judged alive (docs/gossip.md, "Probe failure detection").
enum class FailureDetector : uint8_t {
  // Every node's heartbeat advances periodically and is relayed in digests on every link; a
  // member whose heartbeat has not advanced within the failure timeout is dead. The cost per
  // node grows with the cluster.
  kHeartbeat = 0,
  // Each node probes one linked member per probe interval (directly, then through
  // `indirect_probes` others); a member that answers neither is suspected, the suspicion
  // spreads, and a member that does not refute it within the suspicion timeout is dead.
  // Digests carry only changes. Members that do not probe (older versions, kHeartbeat) are
  // still judged by heartbeats, and this node keeps beating while any is alive.
  kProbe = 1,
};

struct GossipOptions {
  std::string node_id;      // REQUIRES: IsValidNodeId
  std::string endpoint;     // this node's advertised peer endpoint, e.g. "tcp://127.0.0.1:7401"
  std::string public_key;   // this node's CURVE public key (Z85), advertised to members
  std::vector<Seed> seeds;  // peers to join through
  KeyScheme key_scheme = KeyScheme::kSquidMd5;
  // Default: 1000. Deltas go out at this period when something changed.
  int64_t gossip_interval_ms = 1000;
  // Default: 10000. A member not heard from within this is dead.
  int64_t failure_timeout_ms = 10000;
  // Default: 5000. Digest exchange with one random neighbour.
  int64_t anti_entropy_interval_ms = 5000;
  // Default: 4. Live members linked to, picked at random (seeds are only joined through).
  unsigned fanout = 4;
  // Default: 30000. How often the random part of the neighbour set is re-chosen.
  int64_t neighbour_shuffle_ms = 30000;
  // Default: 0 (forever). Dead members are forgotten after this, 0 keeps them listed as dead.
  int64_t forget_dead_after_ms = 0;
  DecodeLimits limits;

  // Additions (docs/gossip.md).
  // Default: 0. ClusterTag(cluster secret): frames carrying another tag are refused.
  uint64_t cluster_tag = 0;
  // Default: 0. Seeds the engine's random choices (neighbours, anti-entropy partner), mixed
  // with the node id. Tests fix it; the daemon should pass a random value.
  uint64_t rng_seed = 0;
  // Default: 0, meaning failure_timeout_ms / 4. How often this node's heartbeat advances (and
  // so how often every member's heartbeat is gossiped). Must be below failure_timeout_ms / 2.
  int64_t heartbeat_interval_ms = 0;
  // Default: 64 MiB. Bytes queued for one endpoint between TakeOutgoing() calls; frames that
  // do not fit are dropped and counted (receivers repair: a lost delta is a gap -> resync).
  size_t max_pending_bytes_per_endpoint = size_t{64} << 20;
  // Default: 1024. Members known at most (this node excluded); more are ignored and counted.
  size_t max_members = 1024;
  // Default: 256 KiB. Recent deltas kept per origin (encoded) to answer a neighbour that
  // missed some with those deltas instead of a full summary; the oldest go first.
  size_t recent_delta_bytes = size_t{256} << 10;
  // Default: 64 MiB. Encoded full summaries of members kept (as received, or as encoded for a
  // push) so a burst of joiners costs one encoding per summary; beyond it, encode each time.
  size_t encoded_cache_bytes = size_t{64} << 20;
  WireLimits wire_limits;
  // Default: none. Geometry members' full summaries may have, checked on the header before
  // the bits are decoded; others are refused (summaries_out_of_bounds).
  SummaryBounds summary_bounds;
  // Default: 64. Imports one importer may have held here; a frame adding more is refused
  // (imports_over_quota).
  size_t max_imports_per_importer = 64;
  // Default: 64 MiB. Digest bytes one importer's imports may hold here, likewise.
  size_t max_import_bytes_per_importer = size_t{64} << 20;

  // Additions: signed origins (docs/security.md, "Signed origins").
  // Default: null. This node's Ed25519 signer: its summaries, deltas and epoch certificate
  // carry its signature. Without one it sends them unsigned.
  std::shared_ptr<const OriginSigner> signer;
  // Default: null (no keys). The sign keys of the members. Summaries, deltas and relayed
  // epochs of an origin that has keys here are taken only with a valid signature by one of
  // them; those of an origin without keys are taken unsigned unless require_signatures.
  std::shared_ptr<const SignKeyRing> sign_keys;
  // Default: false. Refuse summaries, deltas and relayed epochs of origins without a sign key
  // (a cluster where every node signs). REQUIRES: a signer.
  bool require_signatures = false;
  // Addition: membership from the allow-list (docs/gossip.md, "Who may be a member").
  // Default: false. When true only `listed` node ids become members, contacts are checked
  // against `listed` and frames name their link's node (OnMessage's link_node_id).
  bool listed_only = false;
  std::vector<ListedNode> listed;
  // Default: 0 (no plausibility checks). When positive, epochs more than this ahead of the
  // wall clock (SetWallClock) and heartbeats advancing faster than possible are refused.
  int64_t max_clock_skew_ms = 0;
  // Additions: the failure detector (docs/gossip.md, "Probe failure detection").
  // Default: kHeartbeat.
  FailureDetector failure_detector = FailureDetector::kHeartbeat;
  // Default: 3. kProbe: members asked to probe a member that did not answer a direct probe.
  unsigned indirect_probes = 3;
  // Default: 0, meaning twice gossip_interval_ms. kProbe: the protocol period: one member is
  // probed per period (a ping and its ack: one frame sent and one answered per node and
  // period at rest), indirectly after half of it, and suspected at its end.
  int64_t probe_interval_ms = 0;
  // Default: 0, meaning failure_timeout_ms less 2.5 probe intervals (at least one probe
  // interval). kProbe: a suspected member that does not refute the suspicion within this is
  // dead. With the wait for a probe and the probe that raised it, a killed node is dead about
  // when heartbeats would have said so (the failure timeout, median).
  int64_t suspicion_timeout_ms = 0;
  // Default: kWireVersion. For tests of mixed clusters only: an older version makes the engine
  // act as that release on the wire. 6: relayed versions on probes skipped; 5: the NO_PUSH flag
  // skipped too; 4: summary frames not numbered, resend frames refused as unknown; 3 (heartbeat
  // detector): it also refuses probe frames and checksum digests as unknown, and ignores the
  // entries' detector flags, as a version 3 reader skips them.
  uint8_t wire_version = kWireVersion;
};

// The probe interval and suspicion timeout `options` give (their 0 defaults resolved).
int64_t ProbeIntervalMs(const GossipOptions& options) noexcept;
int64_t SuspicionTimeoutMs(const GossipOptions& options) noexcept;

// InvalidArgument naming the first bad field of `options`, Ok otherwise. The GossipEngine
// constructor REQUIRES options that pass.
Status ValidateGossipOptions(const GossipOptions& options);

struct Outgoing {
  std::string endpoint;    // where to send
  std::string public_key;  // the endpoint's CURVE server key as learned (may be empty)
  std::string payload;     // one frame
};

struct PeerInfo {
  std::string node_id;
  std::string endpoint;
  std::string public_key;
  bool alive = false;
  bool neighbour = false;  // currently linked directly (either side chose the link)
  bool chosen = false;     // in this node's own neighbour set (a seed or a random pick)
  bool imported = false;
  uint64_t epoch = 0;
  uint64_t version = 0;  // of the summary held, in summary_epoch
  uint64_t heartbeat = 0;
  uint64_t estimated_items = 0;
  // Addition: the epoch of the summary held (0 without one). Below `epoch` while a restarted
  // member's new summary is awaited: its old summary still answers who-has meanwhile.
  uint64_t summary_epoch = 0;
  unsigned k = 0;
  unsigned log2_bits = 0;
  unsigned multiplier = 0;          // Addition: the summary has multiplier * 2^log2_bits bits
  int64_t last_heard_ms = 0;        // local time its heartbeat last advanced
  int64_t summary_received_ms = 0;  // local time its current summary version arrived
  // Additions, for imported digests (imported = true): `endpoint` is the url fetched,
  // `version` the import version, `estimated_items` the digest's entry count.
  std::string imported_by;  // node id of the daemon that fetches it
  uint64_t digest_capacity = 0;
  double digest_fill = 0.0;  // fraction of mask bits on
  double digest_fpr = 0.0;   // estimated false positive rate, fill^4
};

// Addition: a Squid Cache Digest this daemon fetched (docs/gossip.md, "Imported digests").
struct DigestImport {
  std::string source;        // the Squid node's "host:port"; named ImportedNodeId(source)
  std::string source_url;    // the url fetched (IsValidEndpoint)
  std::string digest_bytes;  // the body as served (CacheDigest::Parse must accept it)
  // Default: 0. Time until the digest's Expires as the fetcher computed it (its next fetch).
  // Every node lists the import for valid_for_ms + failure_timeout_ms after it arrives,
  // unless a newer fetch replaces it.
  int64_t valid_for_ms = 0;
  // Default: 0. Wall clock of the fetch; versions follow it, so a restarted importer's
  // fetches replace what it gossiped before.
  uint64_t fetched_unix_ms = 0;
};

// "squid:" + source, e.g. "squid:127.0.0.2:3128". Not a valid node id (IsValidNodeId) when
// the source is empty, too long or holds characters node ids may not.
std::string ImportedNodeId(std::string_view source);

struct GossipStats {
  uint64_t messages_in = 0;
  uint64_t messages_out = 0;
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  uint64_t malformed_in = 0;  // refused by OnMessage
  uint64_t full_summaries_in = 0;
  uint64_t full_summaries_out = 0;
  uint64_t deltas_in = 0;
  uint64_t deltas_out = 0;
  uint64_t resyncs_requested = 0;  // gaps or digest mismatches that asked for a full summary
  uint64_t stale_dropped = 0;      // older versions or epochs than held
  // Additions.
  uint64_t deltas_relayed = 0;  // received deltas forwarded to neighbours
  uint64_t digests_in = 0;
  uint64_t digests_out = 0;
  uint64_t requests_in = 0;    // request-full frames received
  uint64_t queue_dropped = 0;  // frames dropped by the per-endpoint byte cap
  uint64_t queue_dropped_bytes = 0;
  uint64_t members_refused = 0;        // new members ignored at max_members
  uint64_t local_publish_refused = 0;  // PublishDelta calls that did not fit the held summary
  uint64_t prunes = 0;  // links told to stop pushing deltas (a duplicate came through)
  uint64_t grafts = 0;  // pruned links asked to push again (a version was missed)
  // Version 6: frames telling a linked member that this node stopped pushing deltas to it.
  uint64_t cuts_told = 0;
  // Links deltas come on that fell quiet while the others still brought theirs: their origins
  // were grafted elsewhere before any suspicion of the member arrived.
  uint64_t links_quiet = 0;
  uint64_t deltas_served = 0;    // recent deltas sent in answer to a request
  uint64_t imports_in = 0;       // imported digest entries received that were newer
  uint64_t imports_out = 0;      // imported digest frames sent
  uint64_t imports_refused = 0;  // frames refused for a digest the Squid decoder refused
  uint64_t imports_expired = 0;  // imports dropped for want of a refresh
  // Full summaries refused for a geometry beyond summary_bounds, and import frames refused
  // for their importer's quota or an importer that is not a known member.
  uint64_t summaries_out_of_bounds = 0;
  uint64_t imports_over_quota = 0;
  // Signed origins.
  uint64_t signatures_verified = 0;  // origin signatures checked and found valid
  uint64_t signatures_refused = 0;   // summaries and deltas refused: unsigned or bad signature
  uint64_t epochs_refused = 0;       // relayed epochs refused: no valid epoch certificate
  uint64_t beats_refused = 0;        // relayed heartbeats refused: a beat signature not valid
  // Additions (docs/gossip.md, "Who may be a member").
  uint64_t sender_mismatch = 0;   // frames naming a sender other than their link's node
  uint64_t members_unlisted = 0;  // entries or senders naming a node id not listed
  // Unsigned claims, from others than the node itself, beyond the clock bounds.
  uint64_t implausible_epochs = 0;      // epochs too far ahead of the wall clock
  uint64_t implausible_heartbeats = 0;  // heartbeats beyond what the epoch's age allows
  uint64_t claims_corrected = 0;        // a node's own frame overrode what others claimed of it
  uint64_t contacts_refused = 0;        // endpoints or keys not bound to the node id
  uint64_t members_revoked = 0;         // members dropped when the allow-list lost them
  // Additions: the probe failure detector.
  uint64_t probes = 0;           // direct probes (pings) sent, confirmations included
  uint64_t probes_indirect = 0;  // ping-reqs sent: a probe went unanswered
  uint64_t suspicions = 0;       // members this node suspected (its probe went unanswered)
  uint64_t refutations = 0;      // times this node beat to refute a suspicion of itself
  uint64_t declared_dead = 0;    // suspicions that ran out here: the member is dead
  // Additions: lost frames on a link (docs/gossip.md, "Lost frames on a link").
  uint64_t link_gaps = 0;      // frames found missing from a sender's numbered stream
  uint64_t resends_asked = 0;  // resend frames sent (first asks and retries)
  uint64_t frames_resent = 0;  // kept numbered frames sent again at a receiver's ask
  uint64_t tail_marks = 0;     // tail marks sent: a link's last frame went with none after it
};

class GossipEngine {
 public:
  explicit GossipEngine(GossipOptions options);
  ~GossipEngine();
  GossipEngine(const GossipEngine&) = delete;
  GossipEngine& operator=(const GossipEngine&) = delete;

  // The local node's summary changed. Full: at start and whenever its geometry changes.
  // Delta: otherwise, base_version must be the previous published version. A delta that does
  // not fit the held summary (origin, epoch, base, geometry or result digest) is not applied,
  // counts in stats().local_publish_refused and returns false: the caller should PublishFull
  // then. Both return whether the summary was taken.
  bool PublishFull(const Summary& summary, int64_t now_ms);
  bool PublishDelta(const SummaryDelta& delta, int64_t now_ms);
  // Sends pending local deltas at once instead of waiting for the gossip interval (the
  // daemon calls this when more than a threshold of the filter changed).
  void FlushNow(int64_t now_ms);

  // One frame received on the peer endpoint. A non-OK status means the bytes were refused
  // (malformed, oversized, wrong cluster, unknown type); nothing was changed.
  Status OnMessage(std::string_view payload, int64_t now_ms);
  // Addition: one frame from a link authenticated as `link_node_id` (the node id the
  // allow-list binds to the link's CURVE key). A frame naming another sender is refused and
  // counted (sender_mismatch); one that matches is the node speaking for itself: its epoch,
  // heartbeat and contact override what others claimed of it. Empty: as OnMessage above.
  Status OnMessage(std::string_view payload, int64_t now_ms, std::string_view link_node_id);
  // Addition: the wall clock (Unix ms) at monotonic `now_ms`, for the epoch plausibility
  // check (epochs are the wall clock at a node's start).
  void SetWallClock(int64_t wall_ms, int64_t now_ms);
  // Addition: replaces the allow-list (SIGHUP). Members no longer listed are forgotten at
  // once (members_revoked) and their links dropped (TakeDropped).
  void SetListed(std::vector<ListedNode> listed, int64_t now_ms);
  // Addition: replaces the members' sign keys (SIGHUP re-reads authorized_keys), so a node's
  // new sign key is accepted without restarting the nodes that check it.
  void SetSignKeys(std::shared_ptr<const SignKeyRing> keys);
  // Time passed: heartbeats, gossip rounds, anti-entropy, failure detection.
  void OnTick(int64_t now_ms);
  // The earliest time OnTick has work to do.
  int64_t NextDeadline() const;

  // Replaces the seed list (SIGHUP).
  void SetSeeds(std::vector<Seed> seeds, int64_t now_ms);

  // Messages to send, in order. Moves them out.
  std::vector<Outgoing> TakeOutgoing();
  // Endpoints the engine no longer needs links to (the transport may close them).
  std::vector<std::string> TakeDropped();

  // Addition: imports (or refreshes) a Squid Cache Digest fetched by this daemon and spreads
  // it to every daemon. InvalidArgument unless the cluster's key scheme is squid-md5 and the
  // source and url are valid; the Squid decoder's status for a digest it refuses. Nothing
  // changes on an error.
  Status ImportDigest(const DigestImport& import, int64_t now_ms);
  // Stops importing a source: the import leaves who-has here at once and, through gossip,
  // everywhere else. No-op for a source not imported by this daemon.
  void ForgetImport(std::string_view source, int64_t now_ms);

  // Live peers (not this node) whose summary may contain the key. `key_bytes` are the key
  // scheme's bytes (needed for imported digests, which hash differently); `hash` their
  // IndexHasher hash. Appends to *out. Imported digests match on the 16-byte MD5 store key
  // (key_bytes under squid-md5) and come with imported = true.
  void WhoHas(std::string_view key_bytes, const KeyHash& hash, int64_t now_ms,
              std::vector<PeerMatch>* out) const;
  // Starts loading the peer index rows WhoHas will read for `hash` (WhoHasBatch's
  // PeerPrefetch), so the misses of several keys overlap.
  void PrefetchWhoHas(const KeyHash& hash) const noexcept;

  // Every known member except this node, alive or dead, sorted by node id.
  std::vector<PeerInfo> Peers(int64_t now_ms) const;
  const GossipStats& stats() const;
  // Addition: an epoch of this node that a peer named, proven by this node's signature (a
  // node without a signer never has one), above the epoch it runs; 0 when none. The
  // node restarted below an earlier incarnation (its epoch file lost while its clock was
  // behind), so its peers would take its frames for the old incarnation's: the caller should
  // publish a full summary in an epoch above it.
  uint64_t SupersededEpoch() const;
  // The latest summary held for a node (for `summary dump`). NotFound if none.
  Status GetSummary(std::string_view node_id, Summary* out) const;
  // Whether `node_id` is this node or a member known, alive or dead.
  bool IsMember(std::string_view node_id) const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace peerbloom

#endif  // PEERBLOOM_GOSSIP_H_
