// Membership: who is in the cluster, who is alive, and which members this node links to.
//
// Members are learned from frame headers (heard directly) and from digest entries (heard
// through gossip). A member is alive while its (epoch, heartbeat) advanced within the failure
// timeout; a higher epoch is a restart. The neighbour set is `fanout` live members chosen at
// random and re-chosen every shuffle (seeds only answer joins: they are members like any
// other once known); members that chose this node keep a reverse link while their frames say
// so (docs/gossip.md).
//
// Pure state: nothing is sent from here. Calls that change links return whom to contact.
#ifndef PEERBLOOM_LIB_GOSSIP_MEMBERSHIP_H_
#define PEERBLOOM_LIB_GOSSIP_MEMBERSHIP_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lib/gossip/outbox.h"
#include "lib/util/string_hash.h"
#include "peerbloom/gossip.h"
#include "peerbloom/hash.h"
#include "peerbloom/wire.h"

namespace peerbloom {

inline constexpr int64_t kNeverMs = INT64_MIN / 4;

// What this node knows of another, apart from its summary.
struct Member {
  std::string id;
  std::string endpoint;  // empty until learned
  std::string public_key;
  uint64_t epoch = 0;
  uint64_t heartbeat = 0;
  int64_t last_heard_ms = kNeverMs;     // local time (epoch, heartbeat) last advanced
  int64_t created_ms = 0;               // local time it was first learned
  bool was_alive = false;               // liveness at the last round, to see transitions
  bool fresh = false;                   // advanced since the last round: gossip it
  bool contact_fresh = false;           // contact changed since the last round: gossip it
  bool chosen = false;                  // picked at random into the neighbour set
  int64_t inbound_until_ms = kNeverMs;  // it chose us: keep the reverse link until then
  uint64_t rank = 0;                    // orders inbound links when only some may carry deltas
  // Its frames on its own link, in its current epoch: the wire version they showed, and
  // whether it pushes deltas to this node (a version 6 frame without NO_PUSH); a member of an
  // older version is taken to push on every link.
  uint8_t wire_version = 0;
  bool pushes_here = true;
  // Additions: what the node said of itself on its own authenticated link.
  int64_t direct_until_ms = kNeverMs;  // heard on its own link: others may not move its epoch
  uint64_t direct_epoch = 0;           // the highest epoch it named on its own link
  bool contact_first_hand = false;     // the endpoint came from the node or the allow-list
  // Signed beats (docs/gossip.md, "Who speaks for a node's liveness"): once a valid beat
  // signature of the node was seen, `heartbeat` is the highest heartbeat it signed (with
  // `beat_sig`, relayed as it came) and unsigned claims of its heartbeat no longer count.
  bool beats_signed = false;
  std::string beat_sig;  // of (epoch, heartbeat), empty when not signed
  // The probe failure detector (docs/gossip.md, "Probe failure detection"). `probes`: it runs
  // it, so it is judged by probes and suspicions, not by heartbeat progress. A suspicion
  // holds for the member's current (epoch, heartbeat): any advance clears it, and so does a
  // frame of its own.
  bool probes = false;
  // Its own frame, or an entry saying it probes, told how it is judged. Until then (a member
  // known only from a summary relayed by others) a probing node waits longer before holding
  // it dead by its heartbeat: HeartbeatTimeoutMs.
  bool detector_heard = false;
  bool suspect = false;
  bool dead = false;  // the suspicion ran out here
  int64_t suspect_until_ms = kNeverMs;
};

// How a digest entry's heartbeat may be taken (GossipEngine decides from the sign keys).
enum class BeatClaim {
  kUnsigned,  // the origin does not sign its beats (yet): taken within the clock bounds
  kSigned,    // carries the origin's valid signature: taken as the origin's own word
  kNotTaken,  // the origin signs its beats and this one is unsigned, forged or not newer
};

struct SeedState {
  Seed seed;
  std::string member_id;  // resolved when a frame from its endpoint arrives
  int64_t next_join_ms = 0;
};

class Membership {
 public:
  using MemberMap = StringMap<Member>;
  // Called with a member's id when its epoch advances (it restarted): what described the old
  // incarnation's versions and links is void.
  using EpochListener = std::function<void(const std::string& id)>;

  // Uses node_id, endpoint, failure_timeout_ms, fanout, neighbour_shuffle_ms,
  // anti_entropy_interval_ms, forget_dead_after_ms, max_members and rng_seed of `options`.
  // `stats` (members_refused) must outlive it.
  Membership(const GossipOptions& options, GossipStats* stats, EpochListener on_new_epoch);
  Membership(const Membership&) = delete;
  Membership& operator=(const Membership&) = delete;

  // Failure detection: heard from within the failure timeout; for a member that probes, when
  // this node runs the probe detector: heard of and not declared dead.
  bool Alive(const Member& m, int64_t now_ms) const;
  bool probe_mode() const { return probe_mode_; }
  // How long a member judged by its heartbeat may go without one: failure_timeout; under the
  // probe detector, for a member whose detector is not known yet, two anti-entropy periods if
  // longer (within them a complete exchange brings its entry, and with it how it is judged).
  int64_t HeartbeatTimeoutMs(const Member& m) const;
  // The push-pull period: anti_entropy_interval, under the probe detector times
  // ceil(log2(N / 2)) (at least 1).
  int64_t AntiEntropyMs() const;

  // The probe detector. A member runs it (an entry or a probe said so).
  void NoteProbes(std::string_view id, bool probes);
  // Suspects a member that probes at its current (epoch, heartbeat) unless already suspected
  // or dead; true when the suspicion is new here (it is then announced: TakeChanged).
  bool Suspect(std::string_view id, uint64_t epoch, uint64_t heartbeat, int64_t now_ms);
  // Suspicions that ran out: those members are dead here.
  void SuspicionTimeouts(int64_t now_ms);
  int64_t NextSuspicionMs() const;
  // Members whose suspicion began here since the last call (to announce).
  std::vector<std::string> TakeChanged() { return std::exchange(changed_, {}); }
  // A live member that does not probe: this node keeps beating for it.
  bool AnyHeartbeatMember(int64_t now_ms) const;
  const Member* Find(std::string_view id) const;
  const MemberMap& members() const { return members_; }
  size_t size() const { return members_.size(); }

  // A frame arrived: the sender's contact, liveness and link come from its header. Null when
  // the member table is full.
  // `verified`: the frame came on the sender's own authenticated link (it speaks for itself).
  const Member* AcceptSender(const WireHeader& h, int64_t now_ms, bool verified = false);
  // Ok, or why a frame's sender is refused before anything changes: a node id the allow-list
  // does not name (members_unlisted); for a frame not on an authenticated link (`verified`
  // false), an epoch or heartbeat beyond the clock bounds (counted). A node's frames on its
  // own link are never refused for what they say of it.
  Status CheckSender(const WireHeader& h, int64_t now_ms, bool verified = false);
  // Replaces the allow-list; returns the ids of members it no longer names (the caller
  // forgets them). Keys and endpoints of listed members follow the new list.
  std::vector<std::string> SetListed(std::vector<ListedNode> listed);
  // Endpoints members moved away from since the last call (their links may be closed).
  std::vector<std::string> TakeMovedFrom() { return std::exchange(moved_from_, {}); }
  // The clock bounds use the highest wall clock seen: a clock stepped back never tightens them.
  void SetWallClock(int64_t wall_ms, int64_t now_ms) {
    wall_offset_ms_ = wall_known_ ? std::max(wall_offset_ms_, wall_ms - now_ms) : wall_ms - now_ms;
    wall_known_ = true;
  }
  // A digest entry about another node. `own`: the entry is the sender's own, on its
  // authenticated link. `beat`: how its heartbeat may be taken.
  // `proven`: the origin's own signature proves the entry's epoch (a certificate or a beat of
  // it), so a newer epoch is taken even while the node was heard on its own link lately.
  void Merge(const DigestEntry& e, int64_t now_ms, bool own = false,
             BeatClaim beat = BeatClaim::kUnsigned, bool proven = false);
  // A summary or delta of `id` in `epoch` arrived: learns the member and a newer epoch (heard
  // now). Null when the member is refused or the epoch is older than known. `own_word`: the
  // node signed it or sent it on its own link; otherwise a newer epoch must pass the clock
  // bounds.
  const Member* AdvanceEpoch(std::string_view id, uint64_t epoch, int64_t now_ms,
                             bool own_word = false);

  // The clock bounds on an unsigned claim that does not come from the node itself: its epoch
  // at most max_clock_skew ahead of this node's clock, its heartbeat at most what the epoch's
  // age allows (docs/gossip.md); counts the refusal. Always true with max_clock_skew_ms = 0.
  bool Plausible(uint64_t epoch, uint64_t heartbeat, int64_t now_ms);

  // Starts the shuffle and join clocks.
  void Start(int64_t now_ms);
  // Records liveness for this round; returns the linked members that came back to life.
  std::vector<const Member*> Revived(int64_t now_ms);
  struct NeighbourChange {
    std::vector<const Member*> joined;    // newly chosen: exchange everything with them
    std::vector<const Member*> unlinked;  // no longer linked either way: tell them
    bool shuffled = false;                // the picks were made at a shuffle
  };
  // Keeps `fanout` live, reachable members chosen; re-picks them all at a shuffle.
  NeighbourChange RefreshNeighbours(int64_t now_ms);
  // The seed due a join digest, if any: one of those not heard from (or dead), at random;
  // each at most once per anti-entropy interval.
  std::vector<Seed> JoinsDue(int64_t now_ms);
  // Live linked members. Deltas go on the links this node chose and on at most 2 x fanout
  // of the links others chose (the lowest ranks, a stable pick).
  std::vector<LinkTarget> Targets(int64_t now_ms) const;
  // Whether this node pushes deltas to the member at `endpoint` now (it is in Targets() with
  // push set): the NO_PUSH flag of frames to it is the negation. Looks at the linked members
  // only.
  bool PushesTo(const std::string& endpoint, int64_t now_ms) const;
  // Whether the member's deltas may come here: it is not suspected, and it pushes to this
  // node as far as its frames say (Member::pushes_here).
  bool DeltasFrom(const Member& m) const {
    return !m.suspect && (m.wire_version < 6 || m.pushes_here);
  }
  // One of Targets() at random, for anti-entropy.
  std::optional<LinkTarget> RandomTarget(int64_t now_ms);
  // Members whose entry changed since the last call, with whether their contact did.
  std::vector<std::pair<const Member*, bool>> TakeFresh();
  // Members silent for failure timeout + forget_dead_after_ms (none when that is 0).
  std::vector<std::string> ForgettableDead(int64_t now_ms) const;
  // Removes a member. Returns its endpoint when a link to it may be open, else "".
  std::string Forget(const std::string& id);

  // Replaces the seeds; returns the endpoints of seeds no longer listed.
  std::vector<std::string> SetSeeds(std::vector<Seed> seeds, int64_t now_ms);
  bool IsSeed(const Member& m) const;
  // In this node's own neighbour set (a random pick).
  bool Chosen(const Member& m) const { return m.chosen; }
  // Whether a member this node chose as a neighbour is at `endpoint` (looks at the linked
  // members only).
  bool ChoseEndpoint(const std::string& endpoint) const;
  bool IsLinked(const Member& m, int64_t now_ms) const;

 private:
  Member* Mutable(std::string_view id);
  Member* FindOrAdd(std::string_view id, int64_t now_ms);
  // Records (epoch, heartbeat) of an unsigned claim; returns true when it advanced.
  bool Observe(Member* m, uint64_t epoch, uint64_t heartbeat, int64_t now_ms);
  // Records a heartbeat the node signed; returns true when it advanced (or was the first
  // signed one: it replaces whatever unsigned claims said).
  bool ObserveSigned(Member* m, uint64_t epoch, uint64_t heartbeat, const std::string& sig,
                     int64_t now_ms);
  // A newer epoch without a heartbeat (a summary, a delta or a certificate of it): heard now.
  void NewEpoch(Member* m, uint64_t epoch, int64_t now_ms);
  void SetContact(Member* m, const std::string& endpoint, const std::string& public_key);
  // SetContact when the allow-list allows it: the key must be one of the node's, the endpoint
  // the one it lists (if any); one not heard first-hand changes no endpoint already known.
  void OfferContact(Member* m, const std::string& endpoint, const std::string& public_key,
                    bool first_hand, uint64_t epoch);
  const ListedNode* Listed(std::string_view id) const;
  // The member advanced or spoke for itself: no suspicion of it stands.
  void ClearSuspicion(Member* m);
  // How long a reverse link lasts after the frame that set it.
  int64_t InboundLeaseMs() const;
  // A live member that chose this node, within its lease, at a known endpoint: one of the
  // links that compete for the 2 x fanout inbound places (Targets, PushesTo).
  bool InboundLink(const Member& m, int64_t now_ms) const;

  const std::string node_id_;
  const std::string endpoint_;
  const int64_t failure_timeout_ms_;
  const unsigned fanout_;
  const int64_t shuffle_ms_;
  const int64_t join_retry_ms_;
  const int64_t anti_entropy_ms_;
  const int64_t forget_dead_after_ms_;
  const size_t max_members_;
  GossipStats* const stats_;
  const EpochListener on_new_epoch_;
  std::mt19937_64 rng_;
  SipKey rank_key_;
  int64_t next_shuffle_ms_ = 0;
  MemberMap members_;
  // Ids of members chosen or with an inbound link, some perhaps lapsed (pruned each round).
  StringSet maybe_linked_;
  std::vector<SeedState> seeds_;
  const bool listed_only_;
  const int64_t max_skew_ms_;
  const int64_t heartbeat_ms_;
  StringMap<ListedNode> listed_;
  std::vector<std::string> moved_from_;
  bool wall_known_ = false;
  int64_t wall_offset_ms_ = 0;
  const bool probe_mode_;
  const int64_t suspicion_ms_;
  StringSet suspects_;  // members with a suspicion running
  std::vector<std::string> changed_;
};

}  // namespace peerbloom

#endif  // PEERBLOOM_LIB_GOSSIP_MEMBERSHIP_H_
