// Broadcast relay: a state machine (events + now -> actions) that passes broadcast messages
// over a mesh of relay links without loops, with each message delivered to local subscribers
// exactly once. No sockets, threads or clocks: the caller feeds packets, ticks and the time,
// and takes the packets to send and the deliveries. docs/relay.md describes the protocol.
//
// The protocol is Plumtree ("epidemic broadcast trees", Leitao, Pereira, Rodrigues 2007):
// payloads are pushed eagerly on a spanning tree that forms by itself (a duplicate payload
// prunes its link to lazy), other links carry IHAVE announcements, and a node that hears of
// a message it lacks asks for it with a GRAFT, which also puts the link back on the tree.
// Each DATA packet carries a Bloom filter of the nodes it visited: a relay adds itself and
// does not push the payload to a neighbour the filter names (it announces it instead), so a
// false positive costs an announcement and a repair round trip, never a delivery.
//
// Thread-safety: none; one owner drives it.
#ifndef PEERBLOOM_RELAY_H_
#define PEERBLOOM_RELAY_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "peerbloom/hash.h"
#include "peerbloom/origin_sig.h"
#include "peerbloom/relay_message.h"
#include "peerbloom/status.h"

namespace peerbloom {

// Remembers which messages (origin, id) this node has seen, exactly: a Bloom filter here
// would turn each false positive into a lost delivery. Entries expire `ttl_ms` after they
// were first seen; then every id of that origin up to the expired one reads as seen (ids grow
// per origin), so a copy that arrives later than the window is refused as stale, never
// delivered twice.
class SeenSet {
 public:
  // Default ttl: 60 s; capacity: 1 << 20 entries (the oldest expires early when full).
  explicit SeenSet(uint64_t ttl_ms = 60000, size_t capacity = size_t{1} << 20);
  // Whether (origin, id) has been seen or is below the origin's expired floor.
  bool Contains(std::string_view origin, uint64_t id) const;
  // Records it; false if it was already seen.
  bool Insert(std::string_view origin, uint64_t id, uint64_t now_ms);
  void Expire(uint64_t now_ms);
  size_t size() const noexcept { return order_.size(); }
  uint64_t evicted_early() const noexcept { return evicted_early_; }

  // What the set reads as seen, per origin, for keeping across a restart: the floor and the
  // inclusive ranges of ids above it, ascending and disjoint.
  struct SavedOrigin {
    std::string origin;
    uint64_t floor = 0;
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
  };
  std::vector<SavedOrigin> Save() const;
  // Makes what Save returned read as seen again (a restarted node must not deliver a message
  // twice). The restored ranges stay until the origin's floor passes them.
  void Restore(const std::vector<SavedOrigin>& saved);
  // Inserts and restores so far: a caller that keeps Save's result writes it when this moved.
  uint64_t changes() const noexcept { return changes_; }

 private:
  struct Origin {
    uint64_t floor = 0;                          // every id <= floor reads as seen; 0: none
    std::unordered_map<uint64_t, uint64_t> ids;  // id -> first seen
    std::vector<std::pair<uint64_t, uint64_t>> restored;  // ranges read back, above floor
    bool InRestored(uint64_t id) const;
  };
  struct Entry {
    std::string origin;
    uint64_t id;
    uint64_t seen_ms;
  };
  void PopOldest();

  uint64_t ttl_ms_;
  size_t capacity_;
  std::unordered_map<std::string, Origin> origins_;
  std::deque<Entry> order_;  // first-seen order, which is time order
  uint64_t evicted_early_ = 0;
  uint64_t changes_ = 0;
};

// Per-origin flow control: counts messages per origin over a sliding window and says when an
// origin exceeds its rate. The counts live in a counting Bloom filter keyed by origin (a
// count-min sketch with conservative update): `buckets` generations of `counters` 16-bit
// counters, each generation covering window_ms / buckets; an origin's count is the smallest
// of its k counters summed over the live generations. Collisions only overcount, so a quiet
// origin is throttled only if all k of its counters are shared with noisy ones. The 4-bit
// counters of lib/filter's CountingBloomFilter saturate at 15, too low for a rate, so the
// counters here are 16 bits wide.
struct FlowOptions {
  uint32_t max_per_window = 1000;  // Default: 1000 messages per origin per window; 0: no limit
  uint64_t window_ms = 1000;       // Default: 1 s
  unsigned buckets = 10;           // Default: 10 generations (the window slides in tenths)
  unsigned log2_counters = 12;     // Default: 4096 counters per generation
  unsigned k = 3;                  // Default: 3 counters per origin
};
Status ValidateFlowOptions(const FlowOptions& options);

class OriginMeter {
 public:
  // REQUIRES: ValidateFlowOptions(options).ok().
  OriginMeter(const FlowOptions& options, const SipKey& key);
  // Counts one message of `origin` at `now_ms` when the origin is under its rate and returns
  // true; returns false (and counts nothing) when it is over.
  bool Admit(std::string_view origin, uint64_t now_ms);
  // The origin's count over the window (an upper bound of the true count).
  uint32_t Estimate(std::string_view origin, uint64_t now_ms);

 private:
  void Advance(uint64_t now_ms);

  FlowOptions options_;
  IndexHasher hasher_;
  uint64_t bucket_ms_;
  uint64_t current_bucket_ = 0;                     // now_ms / bucket_ms_ of the newest generation
  std::vector<std::vector<uint16_t>> generations_;  // ring, current_bucket_ % buckets
};

struct RelayOptions {
  std::string node_id;  // IsValidNodeId
  SipKey key{};         // the cluster's index key (DeriveIndexKey): filter salts and meter
  // Default: 16. Links a message may travel; the visited filter is sized from it.
  uint32_t hop_limit = 16;
  // Default: 0.01. The visited filter's false-positive rate at a full path.
  double filter_fp_rate = 0.01;
  RelayLimits limits;
  // Default: 150 ms. How long a node that heard an IHAVE waits for the payload before it
  // sends a GRAFT (the eager copy is usually on its way), and between GRAFT attempts.
  uint64_t graft_timeout_ms = 150;
  // Default: 40 ms. Added to the first wait per hop the announced copy travelled: the node
  // nearest a lost payload repairs first and its subtree gets the payload from it.
  uint64_t graft_hop_delay_ms = 40;
  // Default: 10. GRAFT attempts (over the announcers, fewest hops first) before giving up.
  unsigned max_graft_attempts = 10;
  // Default: 6. Announcement rounds per message and link: a link that has not shown it holds
  // the message (by sending it, announcing it or asking for it) is announced to again after
  // 1, 2, 4, ... ticks, so a lost payload or announcement is repaired.
  unsigned announce_rounds = 6;
  // Default: 30 s. How long a message stays cached for GRAFTs and announcements.
  uint64_t cache_ttl_ms = 30000;
  size_t max_cached = 65536;  // Default: 65536 messages; the oldest goes first when full
  // Default: 64 MiB. Bytes of cached messages (payload and forwarded packet) at most; the
  // oldest go first. A message no longer cached is still delivered and forwarded when it
  // arrives, only a late GRAFT for it is not served.
  size_t max_cached_bytes = size_t{64} << 20;
  // Default: 8 MiB. Bytes one origin's cached messages may take: an origin that sends many
  // large messages evicts its own oldest, not other origins'.
  size_t max_cached_bytes_per_origin = size_t{8} << 20;
  // Default: 4096. Announced messages awaited at once (GRAFTs pending); announcements beyond
  // are ignored (ihave_dropped). One link may hold at most a quarter of them.
  size_t max_missing = 4096;
  uint64_t seen_ttl_ms = 120000;  // Default: 2 min (>= cache_ttl_ms)
  FlowOptions flow;
  // Default: 1. The id of this node's first message; a daemon passes a value above any id it
  // used before a restart (for example its wall clock in ms shifted left by 16).
  uint64_t first_id = 1;
  // Default: the index key. Keys the per-origin rate meter. A daemon passes a random key:
  // keyed by anything a member knows, a member could pick origin names that share another
  // origin's counters and throttle that origin.
  std::optional<SipKey> meter_key;
  // Default: none. Signs this node's own messages (sets the SIGNED flag and the signature);
  // a failure fails the Broadcast.
  std::function<Status(RelayData* data)> sign;
  // Default: none (every message passes). Whether a message seen for the first time may be
  // delivered and forwarded. Asked once per (origin, id) that passes: copies of a message
  // already seen are not asked again. A refused copy is not remembered as seen, so a forged
  // copy cannot keep the genuine message out.
  std::function<bool(const RelayData& data)> verify;
};
Status ValidateRelayOptions(const RelayOptions& options);

struct RelaySend {
  std::string to;      // a link's peer id
  RelayKind kind;      // what the packet is (for counting)
  std::string packet;  // EncodeRelayPacket bytes
};

struct RelayDelivery {
  std::string origin;
  uint64_t id = 0;
  uint32_t hops = 0;  // links it travelled to get here (0 at the origin)
  std::string payload;
};

struct RelayStats {
  uint64_t delivered = 0;
  uint64_t duplicates = 0;     // payloads of messages already delivered
  uint64_t stale = 0;          // payloads older than the seen window
  uint64_t throttled = 0;      // messages dropped by flow control
  uint64_t malformed = 0;      // packets that did not decode
  uint64_t unknown_link = 0;   // packets from a peer that is not a link
  uint64_t filter_skips = 0;   // eager pushes replaced by an announcement (filter hit)
  uint64_t filter_resets = 0;  // filters cleared because the path outgrew them
  uint64_t shortened = 0;      // messages whose hop count a shorter way lowered
  uint64_t hop_limited = 0;    // messages received at the hop limit (not forwarded)
  uint64_t grafts_sent = 0;
  uint64_t grafts_served = 0;
  uint64_t grafts_missed = 0;  // GRAFTs for messages no longer cached
  uint64_t gave_up = 0;        // announced messages never obtained
  uint64_t prunes_sent = 0;
  uint64_t payloads_sent = 0;
  uint64_t announcements_sent = 0;    // IHAVE entries
  uint64_t control_packets_sent = 0;  // IHAVE, GRAFT and PRUNE packets
  // Messages RelayOptions::verify refused (unsigned or badly signed).
  uint64_t signatures_refused = 0;
  uint64_t cache_evicted = 0;  // cached messages dropped to keep within the byte bounds
  uint64_t ihave_dropped = 0;  // announcements not awaited: max_missing reached
};

// Origin signatures of broadcasts (docs/relay.md, "Origin signatures"): kind kBroadcast,
// origin and version = the message id, body hash = SHA-256 of RelaySignedBytes (every field
// but hops and the visited filter, which relays change). The claim views data.origin.
OriginClaim RelayClaim(const RelayData& data);
// Sets the SIGNED flag and the signature of `data`. NotSupported when OpenSSL fails,
// InvalidArgument for a message that does not encode.
Status SignRelayData(const OriginSigner& signer, uint64_t cluster_tag, RelayData* data);
// The verdict on the signature of `data` (kNoKey when the origin has no sign key).
SigVerdict VerifyRelayData(const SignKeyRing& keys, uint64_t cluster_tag, const RelayData& data);

class RelayNode {
 public:
  // REQUIRES: ValidateRelayOptions(options).ok().
  explicit RelayNode(const RelayOptions& options);
  ~RelayNode();
  RelayNode(const RelayNode&) = delete;
  RelayNode& operator=(const RelayNode&) = delete;

  // The relay links (peer ids). A new link starts eager; a dropped link forgets its state.
  void SetLinks(const std::vector<std::string>& peers);
  // A link's transport state: nothing is sent on a link that is down.
  void SetLinkUp(std::string_view peer, bool up);

  // Originates a message: delivered here at once, pushed to the links. ResourceExhausted
  // when this node is over its own rate, InvalidArgument for a payload over the limit.
  Status Broadcast(std::string_view payload, uint64_t now_ms, uint64_t* id = nullptr);
  // One packet from link `from`. Bad packets are counted and dropped.
  void OnPacket(std::string_view from, std::string_view packet, uint64_t now_ms);
  // Sends due announcements and GRAFTs, expires caches. Call every tick (for example 50 ms).
  void OnTick(uint64_t now_ms);

  std::vector<RelaySend> TakeSends();
  std::vector<RelayDelivery> TakeDeliveries();
  const RelayStats& stats() const noexcept { return stats_; }
  // Bytes of the messages cached now (within RelayOptions::max_cached_bytes).
  size_t cached_bytes() const noexcept { return cached_bytes_; }
  // Links currently pushing payloads (eager), for tests and the status view.
  std::vector<std::string> EagerLinks() const;
  const std::string& node_id() const noexcept { return options_.node_id; }
  // No announcement rounds or GRAFTs pending: ticks would only expire caches.
  bool Idle() const noexcept { return announcing_.empty() && missing_.empty(); }
  // The visited filter this node puts on its own messages.
  VisitedFilterSize filter_size() const noexcept { return filter_size_; }
  // The messages this node has seen, kept by the caller across a restart (SeenSet::Save).
  const SeenSet& seen() const noexcept { return seen_; }
  void RestoreSeen(const std::vector<SeenSet::SavedOrigin>& saved) { seen_.Restore(saved); }

 private:
  struct Link;
  struct Cached;
  struct Missing;

  Link* FindLink(std::string_view peer);
  int LinkIndex(std::string_view peer) const;
  void OnData(int from, RelayData data, uint64_t now_ms);
  void OnIHave(int from, const std::vector<RelayRef>& refs, uint64_t now_ms);
  void OnGraft(int from, const std::vector<RelayRef>& refs, uint64_t now_ms);
  void OnDuplicate(int from, uint32_t hops, Cached* msg);
  void Accept(int from, RelayData data, uint64_t now_ms);
  void Forward(int from, Cached* msg, uint64_t now_ms);
  void PrepareForward(Cached* msg);
  void Shorten(int from, Cached* msg, uint32_t hops, uint64_t now_ms);
  void SendData(int link, const Cached& msg);
  void SendControl(int link, RelayKind kind, std::vector<RelayRef> refs);
  void QueueAnnouncement(int link, const Cached& msg);
  void FlushAnnouncements();
  void AnnounceDue(uint64_t now_ms);
  void GraftDue(uint64_t now_ms);
  void ExpireCache(uint64_t now_ms);
  void MarkHas(Cached* msg, int link);
  void SizeLinkState(Cached* msg) const;
  void Keep(size_t* kept, size_t j);
  static double FilterFpRate(std::string_view filter, unsigned k);
  static std::string Key(std::string_view origin, uint64_t id);

  // Drops cached messages, oldest first, until the origin's and the total bytes fit.
  void EvictOverBytes(const std::string& origin);
  void EraseMissing(std::map<std::string, Missing>::iterator it);
  void Uncache(const std::string& key);

  RelayOptions options_;
  KeyHash self_hash_;
  VisitedFilterSize filter_size_;
  uint64_t next_id_;
  uint64_t tick_ = 0;  // OnTick calls so far: announcement rounds count in ticks
  std::vector<Link> links_;
  std::unordered_map<std::string, std::unique_ptr<Cached>> cache_;
  std::deque<std::string> cache_order_;
  size_t cached_bytes_ = 0;
  struct OriginCache {
    size_t bytes = 0;
    std::deque<std::string> keys;  // in caching order, some perhaps evicted already
  };
  std::unordered_map<std::string, OriginCache> cache_by_origin_;
  std::unordered_map<int, size_t> missing_by_link_;  // first announcer -> entries
  std::vector<std::string> announcing_;  // cached messages with announcement rounds left
  std::map<std::string, Missing> missing_;
  SeenSet seen_;
  OriginMeter meter_;
  std::vector<RelaySend> sends_;
  std::vector<RelayDelivery> deliveries_;
  RelayStats stats_;
};

}  // namespace peerbloom

#endif  // PEERBLOOM_RELAY_H_
