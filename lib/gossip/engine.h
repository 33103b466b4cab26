// GossipEngine::Impl: the state machine behind peerbloom/gossip.h, composed of parts that
// each own their state (docs/architecture.md, "The gossip engine"):
//  local_node.*     this node: heartbeat, own summary, what neighbours were told
//  outbox.*         frames out: headers, encoding, per-endpoint byte caps
//  membership.*     members, failure detection, seeds, the neighbour set
//  prober.*         the probe failure detector's pings, acks and ping-reqs
//  peer_summaries.* summaries held of peers (the PeerIndex), recent deltas, encoded bytes
//  dissemination.*, relay_tree.cc  digests, full summaries, deltas, requests, relay trees,
//                   repair
//  imports.*        imported Squid Cache Digests
// The engine itself only decodes frames and hands them to the parts (receive.cc), runs the
// clocks (rounds.cc) and answers queries over the parts (gossip_engine.cc). docs/gossip.md
// describes the protocol.
#ifndef PEERBLOOM_LIB_GOSSIP_ENGINE_H_
#define PEERBLOOM_LIB_GOSSIP_ENGINE_H_

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "lib/gossip/dissemination.h"
#include "lib/gossip/imports.h"
#include "lib/gossip/local_node.h"
#include "lib/gossip/membership.h"
#include "lib/gossip/origin_sigs.h"
#include "lib/gossip/outbox.h"
#include "lib/gossip/peer_summaries.h"
#include "lib/gossip/prober.h"
#include "peerbloom/gossip.h"
#include "peerbloom/squid_digest.h"
#include "peerbloom/summary.h"
#include "peerbloom/wire.h"

namespace peerbloom {

// The heartbeat interval in force: heartbeat_interval_ms, or failure_timeout_ms / 4 for 0.
int64_t EffectiveHeartbeatMs(const GossipOptions& options);

class GossipEngine::Impl {
 public:
  explicit Impl(GossipOptions options);
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // The time of the call being handled (every public entry point sets it): what frames sent
  // from deep inside it are judged against (Outbox's push lookup).
  void SetClock(int64_t now_ms) { clock_ms_ = now_ms; }
  // rounds.cc
  bool PublishFull(const Summary& summary, int64_t now_ms);
  bool PublishDelta(const SummaryDelta& delta, int64_t now_ms);
  void FlushNow(int64_t now_ms);
  void OnTick(int64_t now_ms);
  int64_t NextDeadline() const;
  Status ImportDigest(const DigestImport& import, int64_t now_ms);
  void ForgetImport(std::string_view source, int64_t now_ms);
  // receive.cc
  Status OnMessage(std::string_view payload, int64_t now_ms, std::string_view link_node_id);
  void SetWallClock(int64_t wall_ms, int64_t now_ms) { membership_.SetWallClock(wall_ms, now_ms); }
  // gossip_engine.cc
  void SetListed(std::vector<ListedNode> listed, int64_t now_ms);
  void SetSignKeys(std::shared_ptr<const SignKeyRing> keys) { sigs_.SetKeys(std::move(keys)); }
  // gossip_engine.cc
  void SetSeeds(std::vector<Seed> seeds, int64_t now_ms);
  void WhoHas(std::string_view key_bytes, const KeyHash& hash, int64_t now_ms,
              std::vector<PeerMatch>* out) const;
  void PrefetchWhoHas(const KeyHash& hash) const noexcept { summaries_.index().Prefetch(hash); }
  std::vector<PeerInfo> Peers(int64_t now_ms) const;
  Status GetSummary(std::string_view node_id, Summary* out) const;
  bool IsMember(std::string_view node_id) const {
    return node_id == opt_.node_id || membership_.Find(node_id) != nullptr;
  }
  std::vector<Outgoing> TakeOutgoing() { return outbox_.TakeOutgoing(); }
  std::vector<std::string> TakeDropped() { return outbox_.TakeDropped(); }
  const GossipStats& stats() const { return stats_; }
  uint64_t SupersededEpoch() const {
    return own_epoch_seen_ > local_.epoch() ? own_epoch_seen_ : 0;
  }

 private:
  // A frame's body, decoded and checked before anything changes.
  struct Body {
    Summary summary;
    SummaryDelta delta;
    std::vector<CacheDigest> digests;
  };

  // receive.cc
  Status Dispatch(const WireFrame& frame, bool verified, int64_t now_ms);
  Status AsOlderReader(WireFrame* frame) const;
  Status DecodeBody(const WireFrame& frame, Body* body);
  // bounds_check.cc: opt_.summary_bounds on a full summary's header, before decoding.
  Status CheckBounds(std::string_view summary_bytes);
  void Deliver(const WireFrame& frame, Body* body, const Member& sender, bool verified,
               int64_t now_ms);
  bool OwnWord(std::string_view origin, const Member& sender, bool verified) const;
  void OnDigest(const WireFrame& frame, const Member& sender, bool verified, int64_t now_ms);
  void NoteOwnEpoch(const DigestEntry& e, int* bad_certs);
  // How the entry's heartbeat may be taken: the origin's signature checked when it must sign.
  BeatClaim CheckBeat(const DigestEntry& e, int* bad_beats);
  // Whether the entry's epoch may be merged: not newer than the one known, certified, or
  // vouched for by a valid beat signature (`beat_signed`).
  bool AdmitEpoch(const DigestEntry& e, bool beat_signed, int* bad_certs);
  void OnRequests(const WireFrame& frame, const Member& sender, int64_t now_ms);
  // The probe detector's part of a digest entry: whether the member probes, its suspicion.
  void OnEntryDetector(const DigestEntry& e, bool own, int64_t now_ms);
  void OnProbe(const WireFrame& frame, const Member& sender, int64_t now_ms);

  // rounds.cc
  void Start(int64_t now_ms);
  void Round(int64_t now_ms);
  void SayCuts(const std::vector<LinkTarget>& targets, int64_t now_ms);
  void RelinkNeighbours(int64_t now_ms);
  void ForgetDead(int64_t now_ms);
  void AntiEntropy(int64_t now_ms);
  // The probe detector: suspicions that ran out, a refutation due, new suspicions announced.
  void Detect(int64_t now_ms);
  // Whether this node's heartbeat advances periodically: always with heartbeats; with probes
  // only while a live member is judged by heartbeats.
  bool BeatsDue(int64_t now_ms) const;
  // The anti-entropy interval: with probes it grows with log2 of the cluster (digests carry
  // only changes, so this exchange is what repairs a lost one).
  int64_t AntiEntropyMs() const;
  // A complete digest that asks for one back, and the imports held.
  void SendJoinDigest(const std::string& endpoint, const std::string& public_key, bool chosen,
                      int64_t now_ms);

  PeerInfo MemberInfo(const Member& m, int64_t now_ms) const;
  int64_t AnnounceMs() const { return std::max<int64_t>(1, opt_.gossip_interval_ms / 10); }

  const GossipOptions opt_;
  const int64_t heartbeat_interval_ms_;
  bool started_ = false;
  int64_t next_round_ms_ = 0;
  int64_t next_heartbeat_ms_ = 0;
  int64_t next_anti_entropy_ms_ = 0;
  int64_t next_announce_ms_ = 0;  // versions taken between rounds, every tenth of an interval
  GossipStats stats_;
  OriginSigs sigs_;
  std::string last_bad_cert_;    // skips re-verifying a refused certificate digest after digest
  uint64_t own_epoch_seen_ = 0;  // the highest epoch of this node peers proved (NoteOwnEpoch)
  // The probe detector: a peer suspects this node at its current heartbeat; it refutes by
  // beating, at most once per gossip interval.
  bool refute_due_ = false;
  // Members this node unlinked lately: the unlink frame goes again at the next rounds (a lost
  // one would leave the member counting on deltas that no longer come), by member id.
  StringMap<int> unlink_repeats_;
  int64_t next_refute_ms_ = 0;
  int64_t clock_ms_ = 0;  // SetClock
  // Version 6: the members this node pushed deltas to at the last round, and those it stopped
  // pushing to lately, told so (a NO_PUSH frame) at this round and the next, by member id.
  std::set<std::string> pushed_to_;
  StringMap<int> cut_repeats_;

  // Declared in dependency order: each part refers only to those above it, but for the
  // epoch listener that Membership calls into Dissemination (set up, not called, here).
  LocalNode local_;
  Outbox outbox_;
  PeerSummaries summaries_;
  Membership membership_;
  Dissemination dissemination_;
  Prober prober_;
  Imports imports_;
  // WhoHas's scratch, kept so that a query does not allocate.
  mutable std::vector<PeerIndex::Slot> who_has_slots_;
};

}  // namespace peerbloom

#endif  // PEERBLOOM_LIB_GOSSIP_ENGINE_H_
