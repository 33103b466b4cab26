// GossipEngine::Impl: the state behind peerbloom/gossip.h, split over
//  gossip_engine.cc  public entry points, options validation
//  membership.cc     members, liveness, neighbour choice, who-has, peers
//  receive.cc        OnMessage: digests, full summaries, deltas, requests
//  rounds.cc         OnTick: heartbeats, gossip rounds, anti-entropy, local publications
//  outbox.cc         frames out, per-endpoint byte caps
//  imports.cc        imported Squid Cache Digests: store, spread, announce, expire
// docs/gossip.md describes the protocol these implement.
#ifndef PEERBLOOM_LIB_GOSSIP_ENGINE_H_
#define PEERBLOOM_LIB_GOSSIP_ENGINE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "peerbloom/gossip.h"
#include "peerbloom/peer_index.h"
#include "peerbloom/squid_digest.h"
#include "peerbloom/summary.h"
#include "peerbloom/wire.h"

namespace peerbloom {

inline constexpr int64_t kNeverMs = INT64_MIN / 4;

// One delta of an origin as it travelled (summary codec bytes).
struct CachedDelta {
  uint64_t base_version = 0;
  uint64_t version = 0;
  std::string bytes;
};

// Recent contiguous deltas of one origin, oldest first, bounded in bytes.
class DeltaCache {
 public:
  void Add(uint64_t base, uint64_t version, std::string_view bytes, size_t cap);
  void Clear() {
    deltas_.clear();
    bytes_ = 0;
  }
  // The deltas from `have` up to `current`, or none when the chain does not reach back.
  std::vector<const CachedDelta*> From(uint64_t have, uint64_t current) const;

 private:
  std::deque<CachedDelta> deltas_;
  size_t bytes_ = 0;
};

// What this node knows of another.
struct Member {
  std::string id;
  std::string endpoint;  // empty until learned
  std::string public_key;
  uint64_t epoch = 0;
  uint64_t heartbeat = 0;
  int64_t last_heard_ms = kNeverMs;  // local time (epoch, heartbeat) last advanced
  int64_t created_ms = 0;            // local time it was first learned
  bool was_alive = false;            // liveness at the last round, to see transitions
  bool fresh = false;                // advanced since the last round: gossip it
  bool contact_fresh = false;        // contact changed since the last round: gossip it
  // The held summary; its bits live in the index.
  bool has_summary = false;
  // The epoch the held summary belongs to. Below `epoch` after the member restarted and until
  // its new epoch's full summary arrives: the old one is a stand-in (docs/gossip.md, "Members,
  // epochs and heartbeats").
  uint64_t summary_epoch = 0;
  uint64_t version = 0;  // of the held summary, in summary_epoch
  uint64_t estimated_items = 0;
  KeyScheme key_scheme = KeyScheme::kRaw;
  PeerIndex::Slot slot = PeerIndex::kNoSlot;
  int64_t summary_received_ms = 0;
  int64_t full_requested_ms = kNeverMs;  // last resync request, to ask once per window
  DeltaCache recent;
  std::string encoded_full;  // codec bytes of the held version; empty when not cached
  std::string last_from;     // who delivered the current version (network duplicates are not
                             // evidence of a second path)
  // A newer version announced by a digest: repaired if no delta brings it in time.
  uint64_t announced_version = 0;
  std::string announced_by;
  int64_t announced_ms = kNeverMs;
  // Links.
  bool chosen = false;                  // picked at random into the neighbour set
  int64_t inbound_until_ms = kNeverMs;  // it chose us: keep the reverse link until then
  // Relay trees, one per origin (docs/gossip.md): origins whose deltas it asked us not to
  // push on this link, origins we asked it not to push, and our prunes not yet sent.
  std::set<std::string, std::less<>> no_push;
  std::set<std::string, std::less<>> pruned_here;
  std::vector<std::string> prune_pending;
  uint64_t rank = 0;  // orders inbound links when only some may carry deltas

  // A summary of the member's current epoch is held: deltas and versions of that epoch build
  // on it, digests announce it and it may be served. A stand-in only answers who-has.
  bool HoldsCurrent() const { return has_summary && summary_epoch == epoch; }
};

// An imported Squid Cache Digest as this node holds it (docs/gossip.md).
struct Import {
  std::string id;
  std::string importer;
  std::string source_url;
  uint64_t version = 0;
  uint64_t fetched_unix_ms = 0;
  int64_t received_ms = 0;
  int64_t expires_ms = 0;  // local time it leaves who-has unless refreshed
  bool withdrawn = false;  // a tombstone kept until expires_ms so older copies stay out
  std::string bytes;       // the digest as served, to pass on; empty when withdrawn
  CacheDigestHeader header;
  double fill = 0.0;
  double fpr = 0.0;
  PeerIndex::Slot slot = PeerIndex::kNoSlot;
  int64_t requested_ms = kNeverMs;  // last request for a newer version
};

struct SeedState {
  Seed seed;
  std::string member_id;  // resolved when a frame from its endpoint arrives
  int64_t next_join_ms = 0;
};

// A destination of round traffic.
struct LinkTarget {
  std::string endpoint;
  std::string public_key;
  std::string member_id;
  bool chosen = false;  // frames carry kWireFlagNeighbour
  bool push = false;    // deltas may go on it (chosen, or one of the capped inbound links)
};

class GossipEngine::Impl {
 public:
  explicit Impl(GossipOptions options);

  // gossip_engine.cc / rounds.cc
  void PublishFull(const Summary& summary, int64_t now_ms);
  void PublishDelta(const SummaryDelta& delta, int64_t now_ms);
  void FlushNow(int64_t now_ms);
  void OnTick(int64_t now_ms);
  int64_t NextDeadline() const;
  void SetSeeds(std::vector<Seed> seeds, int64_t now_ms);
  // receive.cc
  Status OnMessage(std::string_view payload, int64_t now_ms);
  // membership.cc
  void WhoHas(std::string_view key_bytes, const KeyHash& hash, int64_t now_ms,
              std::vector<PeerMatch>* out) const;
  std::vector<PeerInfo> Peers(int64_t now_ms) const;
  Status GetSummary(std::string_view node_id, Summary* out) const;
  // outbox.cc
  std::vector<Outgoing> TakeOutgoing();
  std::vector<std::string> TakeDropped();

  const GossipStats& stats() const { return stats_; }
  // imports.cc
  Status ImportDigest(const DigestImport& import, int64_t now_ms);
  void ForgetImport(std::string_view source, int64_t now_ms);

 private:
  // imports.cc
  bool ImportLive(const Import& imp, int64_t now_ms) const;
  // Parses every digest of a kImportedDigest frame before anything changes.
  Status CheckImports(const WireFrame& frame, std::vector<CacheDigest>* digests);
  void OnImports(const WireFrame& frame, std::vector<CacheDigest>* digests, Member* sender,
                 int64_t now_ms);
  void ApplyImport(const ImportedDigestEntry& e, CacheDigest* digest, Member* sender,
                   int64_t now_ms);
  void StoreImport(const ImportedDigestEntry& e, CacheDigest digest, int64_t now_ms);
  void DropImportSlot(Import* imp);
  ImportedDigestEntry EntryOf(const Import& imp, bool with_digest, int64_t now_ms) const;
  // Sends an import to every live linked member but `skip_a` and `skip_b`.
  void SpreadImport(const Import& imp, std::string_view skip_a, std::string_view skip_b,
                    int64_t now_ms);
  void SendImports(const std::string& endpoint, const std::string& public_key, bool chosen,
                   const std::vector<ImportedDigestEntry>& entries);
  // Anti-entropy: (origin, version) of every import held, without the bytes.
  void AnnounceImports(const std::string& endpoint, const std::string& public_key, bool chosen,
                       int64_t now_ms);
  // True when `q` names an import (answered if held); false for members.
  bool ServeImport(const Member& to, const FullRequest& q, int64_t now_ms);
  void ExpireImports(int64_t now_ms);
  void AddImportPeers(int64_t now_ms, std::vector<PeerInfo>* out) const;
  const Import* FindImportBySlot(PeerIndex::Slot slot) const;

  // membership.cc
  bool Alive(const Member& m, int64_t now_ms) const;
  Member* Find(std::string_view id);
  const Member* Find(std::string_view id) const;
  Member* FindOrAdd(std::string_view id, int64_t now_ms);
  // Records (epoch, heartbeat) of a member; returns true when it advanced.
  bool Observe(Member* m, uint64_t epoch, uint64_t heartbeat, int64_t now_ms);
  void DropSummary(Member* m);
  // A restarted member that fell silent before its new summary came: its stand-in goes.
  void DropSilentStandIns(int64_t now_ms);
  void Forget(const std::string& id);
  bool IsSeed(const Member& m) const;
  bool IsLinked(const Member& m, int64_t now_ms) const;
  void RefreshNeighbours(int64_t now_ms);
  std::vector<LinkTarget> Targets(int64_t now_ms) const;
  void ResolveSeeds(const Member& m);

  // receive.cc
  Status Dispatch(const WireFrame& frame, int64_t now_ms);
  Member* AcceptSender(const WireHeader& h, int64_t now_ms);
  void OnDigest(const WireFrame& frame, Member* sender, int64_t now_ms);
  void MergeEntry(const DigestEntry& e, int64_t now_ms);
  void PushMissing(const WireFrame& frame, Member* sender, int64_t now_ms);
  void OnFull(const Summary& summary, std::string_view bytes, Member* sender, int64_t now_ms);
  void SetEncoded(Member* m, std::string_view bytes);
  void ClearEncoded(Member* m);
  void OnDelta(const WireFrame& frame, const SummaryDelta& delta, Member* sender, int64_t now_ms);
  void StoreFull(const Summary& summary, Member* m, int64_t now_ms);
  void OnRequests(const WireFrame& frame, Member* sender, int64_t now_ms);
  // Adds (origin, epoch) to *requests unless one was asked for within the retry window.
  // bits_trusted: our copy is right up to its version, so deltas from it may answer.
  void WantFull(Member* m, std::vector<FullRequest>* requests, int64_t now_ms,
                bool bits_trusted = true);
  void Resync(Member* sender, Member* m, int64_t now_ms, bool bits_trusted);
  void SendRequests(const Member& sender, const std::vector<FullRequest>& requests);
  void NoteAnnounced(Member* m, const DigestEntry& e, const Member& sender, int64_t now_ms);
  void NoteDuplicate(Member* sender, const Member& origin);
  // Whether deltas of `origin` go to the member at this target.
  bool Pushes(const LinkTarget& t, std::string_view origin) const;
  void SendPrunes();
  // Links that stopped carrying deltas leave origins without a path: graft them elsewhere.
  void GraftLostLinks(const std::vector<LinkTarget>& targets);
  void Repair(int64_t now_ms);
  bool ServeDeltas(const Member& to, const FullRequest& q);
  void Relay(const WireFrame& frame, const std::string& from, const std::string& origin,
             int64_t now_ms);

  // rounds.cc
  void Start(int64_t now_ms);
  void Round(int64_t now_ms);
  void AntiEntropy(int64_t now_ms);
  void RetryJoins(int64_t now_ms);
  void SendOwnUpdates(int64_t now_ms);
  void SendHeartbeatDigests(int64_t now_ms);
  void ForgetDead(int64_t now_ms);
  void SendJoinDigest(const std::string& endpoint, const std::string& public_key, bool chosen,
                      int64_t now_ms);
  DigestEntry SelfEntry() const;
  DigestEntry EntryOf(const Member& m, bool with_contact, int64_t now_ms) const;
  DigestBody CompleteDigest(uint8_t flags, int64_t now_ms) const;

  // outbox.cc
  // The header of a frame to `endpoint`: neighbour, prune and contact flags.
  WireHeader Header(bool chosen, bool contact) const;
  void Send(const std::string& endpoint, const std::string& public_key, std::string payload,
            WireType type);
  void SendDigest(const std::string& endpoint, const std::string& public_key, bool chosen,
                  const DigestBody& body);
  void SendSummaryBytes(const std::string& endpoint, const std::string& public_key, bool chosen,
                        WireType type, std::string_view codec_bytes);
  // Encodes a held summary (this node's or a member's); false when none is held.
  bool EncodeHeld(const std::string& origin, std::string* codec_bytes);
  void NoteDropped(const std::string& endpoint);
  bool QueueFull(const std::string& endpoint) const;

  GossipOptions opt_;
  int64_t heartbeat_interval_ms_;
  std::mt19937_64 rng_;
  SipKey rank_key_;
  bool started_ = false;
  int64_t next_round_ms_ = 0;
  int64_t next_heartbeat_ms_ = 0;
  int64_t next_anti_entropy_ms_ = 0;
  int64_t next_shuffle_ms_ = 0;

  // This node.
  uint64_t heartbeat_ = 0;
  bool self_fresh_ = false;
  bool has_own_ = false;
  Summary own_;
  uint64_t own_digest_ = 0;
  uint64_t announced_version_ = 0;  // what neighbours were last sent
  uint64_t announced_digest_ = 0;
  int64_t announced_ms_ = 0;
  bool own_full_pending_ = false;
  std::vector<uint64_t> pending_flips_;  // since the announced version, unsorted
  DeltaCache own_recent_;
  std::string own_encoded_;  // cache of EncodeSummary(own_), empty when stale

  std::map<std::string, Member, std::less<>> members_;
  std::map<std::string, Import, std::less<>> imports_;
  std::vector<SeedState> seeds_;
  PeerIndex index_;
  std::vector<std::string> slot_owner_;  // PeerIndex slot -> member id

  size_t encoded_bytes_ = 0;          // sum of members' encoded_full
  std::set<std::string> push_links_;  // member ids of the delta links at the last round
  std::vector<Outgoing> outgoing_;
  std::unordered_map<std::string, size_t> pending_bytes_;
  std::vector<std::string> dropped_;
  GossipStats stats_;
};

}  // namespace peerbloom

#endif  // PEERBLOOM_LIB_GOSSIP_ENGINE_H_
