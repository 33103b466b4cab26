// Time-driven work: heartbeats, gossip rounds, anti-entropy, joins, and the local node's own
// summary (published by the daemon, announced to neighbours at the next round).
#include <algorithm>
#include <cmath>

#include "lib/gossip/engine.h"

namespace peerbloom {

void GossipEngine::Impl::Start(int64_t now_ms) {
  started_ = true;
  local_.Start();
  next_round_ms_ = now_ms;
  next_heartbeat_ms_ = now_ms + heartbeat_interval_ms_;
  next_anti_entropy_ms_ = now_ms + opt_.anti_entropy_interval_ms;
  next_announce_ms_ = now_ms + AnnounceMs();
  membership_.Start(now_ms);
}

bool GossipEngine::Impl::BeatsDue(int64_t now_ms) const {
  return !membership_.probe_mode() || membership_.AnyHeartbeatMember(now_ms);
}

int64_t GossipEngine::Impl::AntiEntropyMs() const { return membership_.AntiEntropyMs(); }

void GossipEngine::Impl::Detect(int64_t now_ms) {
  if (!membership_.probe_mode()) return;
  membership_.SuspicionTimeouts(now_ms);
  if (refute_due_ && now_ms >= next_refute_ms_) {
    refute_due_ = false;
    next_refute_ms_ = now_ms + opt_.gossip_interval_ms;
    local_.Beat();
    ++stats_.refutations;
    dissemination_.AnnounceSelf();
  }
  for (const std::string& id : membership_.TakeChanged()) dissemination_.AnnounceMember(id);
}

void GossipEngine::Impl::OnTick(int64_t now_ms) {
  if (!started_) Start(now_ms);
  if (now_ms >= next_round_ms_) {
    Round(now_ms);
    next_round_ms_ = now_ms + opt_.gossip_interval_ms;
  }
  if (now_ms >= next_anti_entropy_ms_) {
    AntiEntropy(now_ms);
    next_anti_entropy_ms_ = now_ms + AntiEntropyMs();
  }
  if (membership_.probe_mode()) prober_.OnTick(now_ms);
  Detect(now_ms);
  // At most one announcement per tenth of an interval; the first after a quiet spell at once.
  if (now_ms >= next_announce_ms_ && dissemination_.AnnouncementsPending()) {
    dissemination_.SendAnnouncements(now_ms);
    next_announce_ms_ = now_ms + AnnounceMs();
  }
  if (now_ms >= dissemination_.NextRepairMs()) dissemination_.Repair(now_ms);
  if (now_ms >= outbox_.NextMarkMs()) outbox_.MarkTails(membership_.Targets(now_ms));
}

int64_t GossipEngine::Impl::NextDeadline() const {
  if (!started_) return 0;
  const int64_t announce = dissemination_.AnnouncementsPending() ? next_announce_ms_ : INT64_MAX;
  int64_t next = std::min({next_round_ms_, next_anti_entropy_ms_, announce,
                           dissemination_.NextRepairMs(), outbox_.NextMarkMs()});
  if (membership_.probe_mode()) {
    next = std::min({next, prober_.NextDeadline(), membership_.NextSuspicionMs(),
                     refute_due_ ? next_refute_ms_ : INT64_MAX});
  }
  return next;
}

// The order matters: links are settled before anything is pushed on them, and members are
// forgotten only after this round's frames to them are queued.
void GossipEngine::Impl::Round(int64_t now_ms) {
  // One beat per heartbeat interval on average, though beats happen only at rounds; after a
  // stall, one beat and the schedule restarts (beats never come in a burst).
  if (now_ms >= next_heartbeat_ms_ && BeatsDue(now_ms)) {
    local_.Beat();
    next_heartbeat_ms_ = std::max(next_heartbeat_ms_ + heartbeat_interval_ms_, now_ms);
  }
  RelinkNeighbours(now_ms);
  const std::vector<LinkTarget> targets = membership_.Targets(now_ms);
  dissemination_.NoteQuietLinks(now_ms);
  dissemination_.GraftLostLinks(targets);
  SayCuts(targets, now_ms);
  for (const Seed& s : membership_.JoinsDue(now_ms)) {
    SendJoinDigest(s.endpoint, s.public_key, false, now_ms);  // a seed is not a neighbour
  }
  dissemination_.Repair(now_ms);
  dissemination_.RequestLacking(now_ms);
  dissemination_.SendOwnUpdates(now_ms);
  const bool self_fresh = local_.TakeFresh();
  dissemination_.SendHeartbeats(self_fresh, membership_.TakeFresh(), now_ms);
  dissemination_.SendPrunes();
  dissemination_.DropSilentStandIns(now_ms);
  ForgetDead(now_ms);
  imports_.Expire(now_ms);
}

// An unlink frame goes out at the round of the unlink and at the next two.
constexpr int kUnlinkRepeats = 3;

// A linked member that came back (or restarted), and a newly chosen one, get a fresh exchange
// of everything; one no longer linked either way is told so, three rounds running, and its
// link is dropped after the last (closing it at each would reopen it, with a new handshake,
// for the next).
void GossipEngine::Impl::RelinkNeighbours(int64_t now_ms) {
  for (const Member* m : membership_.Revived(now_ms)) {
    SendJoinDigest(m->endpoint, m->public_key, true, now_ms);
  }
  const Membership::NeighbourChange change = membership_.RefreshNeighbours(now_ms);
  // With probes, a member picked at a shuffle learns that it is linked from the next frame
  // on the link (a probe within one turn over the links, or a delta), both with the
  // neighbour flag: this node's view is kept in sync by the anti-entropy exchanges, and a
  // complete exchange per new pick would cost as much as the heartbeats it replaces.
  if (!membership_.probe_mode() || !change.shuffled) {
    for (const Member* m : change.joined) SendJoinDigest(m->endpoint, m->public_key, true, now_ms);
  }
  for (auto it = unlink_repeats_.begin(); it != unlink_repeats_.end();) {
    const Member* m = membership_.Find(it->first);
    if (m == nullptr || m->endpoint.empty() || m->chosen || membership_.IsLinked(*m, now_ms)) {
      it = unlink_repeats_.erase(it);  // gone, or linked again
      continue;
    }
    outbox_.SendUnlink(m->endpoint, m->public_key);
    if (--it->second > 0) {
      ++it;
      continue;
    }
    outbox_.NoteDropped(m->endpoint);  // after the last UNLINK, which still goes out
    it = unlink_repeats_.erase(it);
  }
  for (const Member* m : change.unlinked) {
    outbox_.SendUnlink(m->endpoint, m->public_key);
    unlink_repeats_[m->id] = kUnlinkRepeats - 1;
  }
}

// Version 6: a member this node stopped pushing deltas to while still linked (it fell out of the
// cap on inbound links that carry deltas) counts on them. It is told at once and at the next
// round (a lost frame would leave it waiting for a repair); every later frame to it says so
// too.
void GossipEngine::Impl::SayCuts(const std::vector<LinkTarget>& targets, int64_t now_ms) {
  if (opt_.wire_version < 6) return;
  std::set<std::string> pushed;
  for (const LinkTarget& t : targets) {
    if (t.push) pushed.insert(t.member_id);
  }
  for (const std::string& id : pushed_to_) {
    if (pushed.count(id) == 0) cut_repeats_[id] = 2;
  }
  pushed_to_ = std::move(pushed);
  for (auto it = cut_repeats_.begin(); it != cut_repeats_.end();) {
    const Member* m = membership_.Find(it->first);
    // A member that unlinked (or was unlinked) no longer counts on the link.
    if (m == nullptr || m->endpoint.empty() || m->wire_version < 6 ||
        pushed_to_.count(it->first) != 0 || !membership_.Alive(*m, now_ms) ||
        !membership_.IsLinked(*m, now_ms)) {
      it = cut_repeats_.erase(it);
      continue;
    }
    outbox_.SendLinkState(m->endpoint, m->public_key);
    ++stats_.cuts_told;
    it = --it->second <= 0 ? cut_repeats_.erase(it) : std::next(it);
  }
}

void GossipEngine::Impl::ForgetDead(int64_t now_ms) {
  for (const std::string& id : membership_.ForgettableDead(now_ms)) {
    dissemination_.Forget(id);
    outbox_.NoteDropped(membership_.Forget(id));
  }
}

// With probes, a member that probes (it runs version 4) is sent the checksum of the table
// first: at rest the exchange is one small frame.
void GossipEngine::Impl::AntiEntropy(int64_t now_ms) {
  std::optional<LinkTarget> t = membership_.RandomTarget(now_ms);
  if (!t) return;
  const Member* m = membership_.Find(t->member_id);
  if (membership_.probe_mode() && m != nullptr && m->probes) {
    outbox_.SendDigest(t->endpoint, t->public_key, t->chosen,
                       dissemination_.ChecksumDigest(kDigestReplyWanted));
    imports_.Announce(t->endpoint, t->public_key, t->chosen, now_ms);
    return;
  }
  SendJoinDigest(t->endpoint, t->public_key, t->chosen, now_ms);
}

void GossipEngine::Impl::SendJoinDigest(const std::string& endpoint, const std::string& public_key,
                                        bool chosen, int64_t now_ms) {
  outbox_.SendDigest(endpoint, public_key, chosen,
                     dissemination_.CompleteDigest(kDigestComplete | kDigestReplyWanted, now_ms));
  imports_.Announce(endpoint, public_key, chosen, now_ms);
}

void GossipEngine::Impl::FlushNow(int64_t now_ms) {
  if (!started_) Start(now_ms);
  dissemination_.SendOwnUpdates(now_ms);
}

bool GossipEngine::Impl::PublishFull(const Summary& summary, int64_t now_ms) {
  if (!started_) Start(now_ms);
  if (local_.PublishFull(summary)) return true;
  ++stats_.local_publish_refused;
  return false;
}

bool GossipEngine::Impl::PublishDelta(const SummaryDelta& delta, int64_t now_ms) {
  if (!started_) Start(now_ms);
  if (local_.PublishDelta(delta)) return true;
  ++stats_.local_publish_refused;
  return false;
}

Status GossipEngine::Impl::ImportDigest(const DigestImport& import, int64_t now_ms) {
  if (!started_) Start(now_ms);
  return imports_.Import(import, now_ms);
}

void GossipEngine::Impl::ForgetImport(std::string_view source, int64_t now_ms) {
  imports_.Forget(source, now_ms);
}

}  // namespace peerbloom
