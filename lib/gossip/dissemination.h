// Dissemination: how summaries travel. Complete digests on joins and anti-entropy, full
// summaries pushed to whoever lacks them, deltas relayed once along per-origin relay trees
// (a duplicate prunes a link for that origin, a missed version grafts it back), repair of
// versions a digest announced but no delta brought, and requests answered from the recent
// deltas or with a full summary (docs/gossip.md).
//
// It reads membership (a const view: who is alive and linked), writes the summaries held and
// sends through the outbox. Member records are created by Membership before frames about them
// reach this class.
#ifndef PEERBLOOM_LIB_GOSSIP_DISSEMINATION_H_
#define PEERBLOOM_LIB_GOSSIP_DISSEMINATION_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lib/gossip/link_streams.h"
#include "lib/gossip/local_node.h"
#include "lib/gossip/membership.h"
#include "lib/gossip/origin_sigs.h"
#include "lib/gossip/outbox.h"
#include "lib/gossip/peer_summaries.h"
#include "lib/util/string_hash.h"
#include "peerbloom/gossip.h"
#include "peerbloom/wire.h"

namespace peerbloom {

// Dissemination state of one member: as an origin (requests, repair) and as a link (relay
// trees).
struct OriginState {
  int64_t full_requested_ms = kNeverMs;  // last resync request, to ask once per window
  std::string last_from;  // who delivered the current version (network duplicates are not
                          // evidence of a second path)
  // A newer version announced by a digest: repaired if no delta brings it in time.
  uint64_t announced_version = 0;
  std::string announced_by;
  int64_t announced_ms = kNeverMs;
  // Relay trees, one per origin: origins whose deltas it asked us not to push on this link,
  // origins we asked it not to push, and our prunes not yet sent.
  StringSet no_push;
  StringSet pruned_here;
  std::vector<std::string> prune_pending;
  // Origins pruned here to graft back on this link at the next round (RestorePath).
  std::vector<std::string> graft_pending;
  // As a link deltas come on (NoteQuietLinks): the first copies it brought since the last
  // round, their moving average per round, the rounds since it last brought one, and whether
  // it fell quiet (not counted on until a frame of its comes).
  uint32_t delivered = 0;
  double delivered_per_round = 0;
  int silent_rounds = 0;
  bool quiet = false;
};

class Dissemination {
 public:
  // How many probe frames carry each version taken (the probe detector). One send saves a
  // fifth of the membership and version bytes at 1,000 nodes but leaves more nodes waiting for
  // a version (docs/gossip.md, "Large clusters under churn and loss").
  static constexpr int kPiggybackSends = 2;
  // Uses node_id, gossip_interval_ms of `options`. Everything else must outlive it.
  // `sigs` supplies the epoch certificates digests carry.
  Dissemination(const GossipOptions& options, const Membership& members, LocalNode* self,
                PeerSummaries* summaries, Outbox* outbox, GossipStats* stats,
                const OriginSigs* sigs);
  Dissemination(const Dissemination&) = delete;
  Dissemination& operator=(const Dissemination&) = delete;

  // Membership events: a member restarted (its versions and links are void), or is gone.
  void OnNewEpoch(const std::string& id);
  void Forget(const std::string& id);

  // A summary of the member's current epoch is held: deltas and versions of that epoch build
  // on it, digests announce it and it may be served. A stand-in only answers who-has.
  bool HoldsCurrent(const Member& m) const;
  // This node and every member, as a digest.
  DigestBody CompleteDigest(uint8_t flags, int64_t now_ms) const;
  // This node's entry and the checksum of the table (kDigestChecksum): the anti-entropy
  // exchange of the probe detector, complete only when the receiver's checksum differs.
  DigestBody ChecksumDigest(uint8_t flags) const;
  // A hash of (origin, epoch, heartbeat, version and FilterDigest of the summary held in that
  // epoch) of this node and every member, independent of their order. Two nodes that agree
  // on every member agree on it; liveness and contacts are left out.
  uint64_t TableChecksum() const;

  // Receiving. `origin` is the member a summary or delta is about (null: refused or stale).
  // Sends the sender of a complete digest the full summaries it lacks or holds older.
  void PushMissing(const DigestBody& digest, const Member& sender, int64_t now_ms);
  // Asks the sender of a digest for what it announced and we cannot build on.
  void RequestAnnounced(const DigestBody& digest, const Member& sender, int64_t now_ms);
  // `state_sig`: the origin's signature that came with it (checked by the caller).
  void OnFull(const Summary& summary, std::string_view bytes, const Member* origin,
              const Member& sender, int64_t now_ms, std::string_view state_sig = {});
  // `again`: the frame came before on its link or fills a gap there (OnLinkSeq), so a copy
  // already held is no second path to prune.
  void OnDelta(const WireFrame& frame, const SummaryDelta& delta, const Member* origin,
               const Member& sender, int64_t now_ms, bool again = false);
  // A numbered frame (wire version 5) from `sender`: gaps in its stream are asked for again
  // by Repair. Returns LinkStreams::Note's answer.
  bool OnLinkSeq(const Member& sender, uint64_t sender_epoch, uint64_t seq, int64_t now_ms);
  void OnPrune(const Member& sender, const std::vector<std::string>& origins);
  void OnGraft(const Member& sender, const std::vector<std::string>& origins);
  // A request for `q.origin` grafts it: the requester missed something.
  void Graft(const Member& sender, const std::string& origin);
  // Answers one request with deltas or a full summary. False when the requester's queue is
  // full: the rest would be dropped anyway.
  bool Serve(const Member& to, const FullRequest& q);

  // Round work.
  // Links that stopped carrying deltas (or whose member is suspected) leave origins without a
  // path: graft them elsewhere and ask there for what the lost link would have brought.
  void GraftLostLinks(const std::vector<LinkTarget>& targets);
  // A link deltas come on that brought first copies every round and brought none for a
  // while, though other links still bring theirs (at least kQuietFrames of them were due), is
  // taken for gone before its suspicion arrives: the next GraftLostLinks grafts its origins
  // elsewhere. It is counted on again once a frame of its comes (OnHeard).
  void NoteQuietLinks(int64_t now_ms);
  // Any frame from `id` arrived: a link that fell quiet is alive.
  void OnHeard(const std::string& id);
  static constexpr double kQuietFrames = 12;
  // Whether `id` was among the links deltas come on at the last GraftLostLinks.
  bool CountsOn(const std::string& id) const { return push_links_.count(id) != 0; }
  // Versions announced but not delivered within a tenth of an interval: graft and ask the
  // announcer (again an interval later while still missing).
  void Repair(int64_t now_ms);
  // Live members whose current summary this node has lacked for two rounds with none
  // announced (a copy lost with nothing after it on its link): asked of the member itself.
  void RequestLacking(int64_t now_ms);
  // When Repair has work next (INT64_MAX: none).
  int64_t NextRepairMs() const { return next_repair_ms_; }
  // This node's pending update to its delta links (or a full summary to every link).
  void SendOwnUpdates(int64_t now_ms);
  // Entries that changed since the last round, on every link (chosen, and inbound links that
  // carry deltas).
  void SendHeartbeats(bool self_fresh, const std::vector<std::pair<const Member*, bool>>& fresh,
                      int64_t now_ms);
  // The versions taken since the last announcement, on the same links: between rounds, every
  // announce_interval, so that a node whose copy of a delta was lost hears of it promptly.
  void SendAnnouncements(int64_t now_ms);
  bool AnnouncementsPending() const {
    return self_advanced_ || !advanced_.empty() || self_event_ || !events_.empty();
  }
  // The probe detector: a member's suspicion (or this node's refutation) goes out with the
  // next announcements, on every link.
  void AnnounceMember(const std::string& id) { events_.insert(id); }
  void AnnounceSelf() { self_event_ = true; }
  // The probe detector: versions taken ride on probes instead of digests on every link. Up to
  // `max` of them for the next probe frame to `to`, each sent kPiggybackSends times.
  std::vector<VersionAnnouncement> TakePiggyback(size_t max, const Member& to, int64_t now_ms);
  // A probe's versions: those not held are awaited and repaired like a digest's.
  void OnPiggyback(const std::vector<VersionAnnouncement>& versions, const Member& sender,
                   int64_t now_ms);
  // Prunes and grafts noted while handling frames, one frame of each per link.
  void SendPrunes();
  // A restarted member that fell silent before its new summary came: its stand-in goes.
  void DropSilentStandIns(int64_t now_ms);

  const OriginState* Find(std::string_view id) const;
  // A digest of one entry: what this node holds of `m`, with the proof of its epoch.
  DigestBody KnownAs(const Member& m, int64_t now_ms) const;

 private:
  // with_summary: the held version and FilterDigest (a heartbeat alone leaves them out).
  DigestEntry EntryOf(const Member& m, bool with_contact, int64_t now_ms,
                      bool with_summary = true) const;
  // Whether this node holds the proof of the member's epoch that an entry about it needs.
  bool Provable(const Member& m) const;
  // The links heartbeat and version digests go on.
  void SendToLinks(const DigestBody& body, int64_t now_ms);
  // Moves the versions taken since the last announcement (this node's included) into *body.
  void TakeAnnouncements(DigestBody* body, int64_t now_ms);
  void NoteAnnounced(const Member& m, const DigestEntry& e, const Member& sender, int64_t now_ms);
  void NoteDuplicate(const Member& sender, const Member& origin);
  // A version of `origin` that came from `from`, off the delta links (a repair answered by an
  // announcer or by the origin): the relay tree has no path here for it, so the delta links
  // that pruned it are grafted back at the next round.
  void RestorePath(const std::string& origin, const std::string& from);
  // The link that brought the copy of `origin` held here stays unpruned for it.
  void TakePath(const std::string& origin, const std::string& from);
  // Forgets that `link` was pruned for `origin` (the caller grafts it). False if it was not.
  static bool Unprune(OriginState* link, const std::string& origin);
  bool Pushes(const LinkTarget& t, std::string_view origin) const;
  void Relay(const WireFrame& frame, const std::string& from, const std::string& origin,
             int64_t now_ms);
  // A full summary that replaced an older version of the same epoch goes down the origin's
  // tree as its deltas do.
  void RelayFull(std::string_view bytes, std::string_view state_sig, const std::string& from,
                 const std::string& origin, int64_t now_ms);
  bool ServeDeltas(const Member& to, const FullRequest& q);
  // Adds (origin, epoch) to *requests unless one was asked for within the retry window.
  // bits_trusted: our copy is right up to its version, so deltas from it may answer.
  void WantFull(const Member& m, std::vector<FullRequest>* requests, int64_t now_ms,
                bool bits_trusted = true);
  void Resync(const Member& sender, const Member& m, int64_t now_ms, bool bits_trusted);
  void SendRequests(const Member& to, const std::vector<FullRequest>& requests);
  // Encodes a held summary (this node's or a member's); false when none is held.
  bool EncodeHeld(const std::string& origin, std::string* codec_bytes);
  // Sends the held summary of `origin` with its state signature.
  void SendFull(const Member& to, const std::string& origin, const std::string& codec_bytes);
  OriginState* MutableState(std::string_view id);
  int64_t RepairGraceMs() const { return std::max<int64_t>(1, gossip_interval_ms_ / 10); }
  // A repair request not answered by then is sent again (to the latest announcer).
  int64_t RepairRetryMs() const { return std::max<int64_t>(1, gossip_interval_ms_ / 4); }
  uint64_t HeldVersion(std::string_view id) const;

  const std::string node_id_;
  const int64_t gossip_interval_ms_;
  const bool detector_flags_;      // entries may carry them (version 4)
  const bool piggyback_versions_;  // the probe detector: versions ride on probes
  const Membership& members_;
  LocalNode* const self_;
  PeerSummaries* const summaries_;
  Outbox* const outbox_;
  GossipStats* const stats_;
  const OriginSigs* const sigs_;
  StringMap<OriginState> state_;
  // Member ids of the links deltas may come on (every live link: chosen ones, and inbound
  // ones, whose members chose this node), at the last round.
  std::set<std::string> push_links_;
  // Links whose member restarted since the last round: it forgot the link, so what came on
  // it has no path until it relinks (GraftLostLinks treats them as lost).
  std::vector<std::string> restarted_links_;
  // Origins whose held version advanced since the last round (and this node's own): the next
  // heartbeat digest announces them, so a node whose copy of the delta was lost repairs it
  // within about an interval instead of waiting for the origin's next heartbeat.
  StringSet advanced_;
  bool self_advanced_ = false;
  // The probe detector: membership news (suspicions, refutations) flooded on every link, and
  // versions to ride on probes (one per origin, the latest; `sends` left).
  StringSet events_;
  bool self_event_ = false;
  struct Piggyback {
    VersionAnnouncement version;
    int sends = 0;
  };
  std::vector<Piggyback> piggyback_;
  void QueuePiggyback(VersionAnnouncement v);
  // Members whose epoch changed lately: their entries carry the epoch certificate for this
  // many more heartbeat digests (complete digests always carry it).
  StringMap<int> cert_rounds_;
  // Members with a version announced and not yet received (announced_ms set): what Repair
  // looks at, instead of every member each time.
  StringSet awaited_;
  int64_t next_repair_ms_ = INT64_MAX;
  // Members seen lacking a current summary at a round, since when (RequestLacking).
  StringMap<int64_t> lacking_since_;
  // Numbered streams from the members: frames lost on a link, asked for again.
  LinkStreams links_in_;
};

}  // namespace peerbloom

#endif  // PEERBLOOM_LIB_GOSSIP_DISSEMINATION_H_
