// Relay trees and repair (docs/gossip.md). Deltas are pushed on every delta link at first; a
// delta that arrives twice prunes the later link for its origin (Plumtree's prune, per origin:
// each origin's deltas settle on their own tree). A version that a digest announced but no
// delta brought was lost on a pruned path: the announcer is grafted and asked for it.
#include <algorithm>
#include <map>
#include <utility>

#include "lib/gossip/dissemination.h"

namespace peerbloom {

// A copy from the node that delivered the original is a network duplicate, not a second path.
void Dissemination::NoteDuplicate(const Member& sender, const Member& origin) {
  OriginState* o = MutableState(origin.id);
  if (o != nullptr && o->last_from == sender.id) return;
  // The copy held came off the links deltas come on (a repair, or a push from a member no
  // longer linked): the first link to bring a copy is the path, not a second one.
  if (o != nullptr && push_links_.count(o->last_from) == 0 && push_links_.count(sender.id) != 0) {
    o->last_from = sender.id;
    return;
  }
  // Pruned before and still pushed: the member no longer holds the prune (it lost the link
  // and cleared it, or restarted), so it is sent again.
  OriginState& link = state_[sender.id];
  link.pruned_here.insert(origin.id);
  std::vector<std::string>& pending = link.prune_pending;
  if (std::find(pending.begin(), pending.end(), origin.id) == pending.end()) {
    pending.push_back(origin.id);
  }
}

// A prune not sent yet goes too: sent after the graft, it would prune the link again at the far
// side while this node counts on it.
bool Dissemination::Unprune(OriginState* link, const std::string& origin) {
  if (link == nullptr || link->pruned_here.erase(origin) == 0) return false;
  std::vector<std::string>& pending = link->prune_pending;
  pending.erase(std::remove(pending.begin(), pending.end(), origin), pending.end());
  return true;
}

// The copy came first on a link pruned here: pushed before the prune reached the far side, or
// still pushed since. It is the origin's path now (Plumtree's eager link), so the prune is taken
// back; otherwise the copies of the other links would prune them too, and in the end no link
// would push the origin here.
void Dissemination::TakePath(const std::string& origin, const std::string& from) {
  OriginState* link = MutableState(from);
  if (Unprune(link, origin)) link->graft_pending.push_back(origin);
}

void Dissemination::RestorePath(const std::string& origin, const std::string& from) {
  if (push_links_.count(from) != 0) return;  // it came on a link deltas come on
  for (const std::string& id : push_links_) {
    OriginState* link = MutableState(id);
    if (Unprune(link, origin)) link->graft_pending.push_back(origin);
  }
}

bool Dissemination::Pushes(const LinkTarget& t, std::string_view origin) const {
  if (!t.push) return false;
  const OriginState* link = Find(t.member_id);
  return link == nullptr || link->no_push.count(origin) == 0;
}

void Dissemination::OnPrune(const Member& sender, const std::vector<std::string>& origins) {
  if (origins.empty()) return;  // a tail mark (Outbox): only its number counts
  OriginState& link = state_[sender.id];
  for (const std::string& origin : origins) link.no_push.insert(origin);
}

void Dissemination::OnGraft(const Member& sender, const std::vector<std::string>& origins) {
  for (const std::string& origin : origins) Graft(sender, origin);
}

void Dissemination::Graft(const Member& sender, const std::string& origin) {
  if (OriginState* link = MutableState(sender.id)) link->no_push.erase(origin);
}

void Dissemination::Relay(const WireFrame& frame, const std::string& from,
                          const std::string& origin, int64_t now_ms) {
  bool relayed = false;
  for (const LinkTarget& t : members_.Targets(now_ms)) {
    if (t.member_id == from || t.member_id == origin || !Pushes(t, origin)) continue;
    outbox_->SendSummaryBytes(t.endpoint, t.public_key, t.chosen, WireType::kDelta,
                              frame.summary_bytes, frame.state_sig, frame.delta_sig);
    relayed = true;
  }
  if (relayed) ++stats_->deltas_relayed;
}

void Dissemination::RelayFull(std::string_view bytes, std::string_view state_sig,
                              const std::string& from, const std::string& origin, int64_t now_ms) {
  for (const LinkTarget& t : members_.Targets(now_ms)) {
    if (t.member_id == from || t.member_id == origin || !Pushes(t, origin)) continue;
    outbox_->SendSummaryBytes(t.endpoint, t.public_key, t.chosen, WireType::kFullSummary, bytes,
                              state_sig);
  }
}

void Dissemination::SendPrunes() {
  for (auto& [id, st] : state_) {
    if (st.prune_pending.empty() && st.graft_pending.empty()) continue;
    const Member* m = members_.Find(id);
    const bool linked = m != nullptr && !m->endpoint.empty();
    if (linked && !st.prune_pending.empty() &&
        outbox_->SendOrigins(m->endpoint, m->public_key, false, WireType::kPrune,
                             st.prune_pending)) {
      ++stats_->prunes;
    }
    if (linked && !st.graft_pending.empty() &&
        outbox_->SendOrigins(m->endpoint, m->public_key, false, WireType::kGraft,
                             st.graft_pending)) {
      ++stats_->grafts;
    }
    st.prune_pending.clear();
    st.graft_pending.clear();
  }
}

// Origins whose last delta came over a link that no longer carries deltas (the member is
// suspected or died, was shuffled out, unlinked, or restarted and so forgot the link) may
// have no path left: the remaining links that were pruned for them are grafted back at once
// rather than after a repair, and the first two remaining links, pruned or not, are asked for
// anything newer than what is held (the versions the lost link would have brought meanwhile;
// an origin already current costs nothing). Deltas may come on every link, not only on those this
// node pushes on: an inbound link outside this node's cap still pushes here (its member chose us).
// A link whose member says it no longer pushes here (version 6, NO_PUSH) is lost too.
void Dissemination::GraftLostLinks(const std::vector<LinkTarget>& targets) {
  std::set<std::string> now_links;
  for (const LinkTarget& t : targets) {
    const Member* m = members_.Find(t.member_id);
    const OriginState* link = Find(t.member_id);
    if (link != nullptr && link->quiet) continue;
    if (m == nullptr || members_.DeltasFrom(*m)) now_links.insert(t.member_id);
  }
  std::vector<std::string> lost_links = std::move(restarted_links_);
  restarted_links_.clear();
  for (const std::string& id : push_links_) {
    if (now_links.count(id) == 0) lost_links.push_back(id);
  }
  std::vector<std::string> orphans;
  for (const std::string& lost : lost_links) {
    // What it asked us not to push is void (if it comes back, duplicates prune again). What
    // we asked it not to push stays: it still holds that, and forgetting it would make the
    // link look like a path it is not if the member comes back (a refuted suspicion, a
    // shuffle back); a restart clears both (OnNewEpoch).
    // A quiet link may only be slow: it keeps what it asked, and is pushed to as before.
    OriginState* link = MutableState(lost);
    if (link != nullptr && !link->quiet) link->no_push.clear();
    for (const auto& [id, st] : state_) {
      if (st.last_from == lost) orphans.push_back(id);
    }
  }
  // A link counted on afresh starts its watch afresh: copies it brought off the links (a
  // repair) say nothing of its rate.
  for (const std::string& id : now_links) {
    if (push_links_.count(id) != 0) continue;
    if (OriginState* link = MutableState(id)) {
      link->delivered = 0;
      link->delivered_per_round = 0;
      link->silent_rounds = 0;
    }
  }
  push_links_ = std::move(now_links);
  if (orphans.empty()) return;
  StringMap<int> asked;  // two links are asked, in case one ask or answer is lost
  for (const LinkTarget& t : targets) {
    OriginState* link = push_links_.count(t.member_id) != 0 ? MutableState(t.member_id) : nullptr;
    if (link == nullptr) continue;
    std::vector<std::string> graft;
    std::vector<FullRequest> catch_up;
    for (const std::string& origin : orphans) {
      // A link that never pruned the origin (a new one, after a relink) needs no graft, but
      // is asked all the same: what the lost link would have brought meanwhile is missing.
      if (Unprune(link, origin)) graft.push_back(origin);
      const Member* m = members_.Find(origin);
      if (m != nullptr && HoldsCurrent(*m) && ++asked[origin] <= 2) {
        catch_up.push_back(FullRequest{origin, m->epoch, HeldVersion(origin)});
      }
    }
    if (!graft.empty() &&
        outbox_->SendOrigins(t.endpoint, t.public_key, t.chosen, WireType::kGraft, graft)) {
      ++stats_->grafts;
    }
    outbox_->SendRequests(t.endpoint, t.public_key, catch_up);
  }
}

// A member's suspicion takes seconds to reach every node, and until it does the origins whose
// deltas came on its link have no path here. A busy link that falls silent says the same
// sooner: silence is measured against the link's own rate of first copies, so that a link
// carrying few origins never looks quiet; and only while other links still bring first copies
// (at least one, and half of what they usually bring), so that a cluster at rest, this node's
// own loss of the network, or every origin going quiet at once is not taken for the death of
// its links. A false alarm costs grafts and duplicates that prune again, never a miss.
void Dissemination::NoteQuietLinks(int64_t now_ms) {
  double expected = 0, delivered = 0;
  for (const std::string& id : push_links_) {
    if (const OriginState* link = Find(id)) {
      expected += link->delivered_per_round;
      delivered += link->delivered;
    }
  }
  constexpr double kKeep = 0.75;  // the moving average's weight of the rounds before
  for (const std::string& id : push_links_) {
    OriginState* link = MutableState(id);
    if (link == nullptr) continue;
    if (link->delivered > 0) {
      for (int i = 0; i < link->silent_rounds; ++i) link->delivered_per_round *= kKeep;
      link->delivered_per_round = kKeep * link->delivered_per_round + (1 - kKeep) * link->delivered;
      link->silent_rounds = 0;
      link->delivered = 0;
      continue;
    }
    ++link->silent_rounds;
    // Others that bring nothing either (at rest, or this node cut off) are not busy, whatever
    // their rates were: at rest every link is silent.
    const bool others_busy =
        delivered > 0 && delivered >= (expected - link->delivered_per_round) / 2;
    if (others_busy && link->silent_rounds * link->delivered_per_round >= kQuietFrames) {
      link->quiet = true;
      ++stats_->links_quiet;
    }
  }
}

void Dissemination::OnHeard(const std::string& id) {
  auto it = state_.find(id);
  if (it == state_.end() || !it->second.quiet) return;
  OriginState& link = it->second;
  link.quiet = false;
  link.silent_rounds = 0;
  link.delivered_per_round = 0;
  link.delivered = 0;
}

// The announcer pushes to us again once asked, and answers with its recent deltas or a full
// summary. An announcement leaves after the delta it names was relayed (relays take
// milliseconds): a tenth of an interval of grace, then a retry every quarter interval.
void Dissemination::Repair(int64_t now_ms) {
  std::map<std::string, std::vector<FullRequest>> by_announcer;
  const int64_t grace = RepairGraceMs();
  next_repair_ms_ = INT64_MAX;
  for (auto it = awaited_.begin(); it != awaited_.end();) {
    auto found = state_.find(*it);
    if (found == state_.end() || found->second.announced_ms == kNeverMs) {
      it = awaited_.erase(it);
      continue;
    }
    const std::string& id = *it++;
    OriginState& st = found->second;
    if (now_ms - st.announced_ms < grace) {
      next_repair_ms_ = std::min(next_repair_ms_, st.announced_ms + grace);
      continue;
    }
    st.announced_ms = now_ms + RepairRetryMs() - grace;  // retried unless it comes
    next_repair_ms_ = std::min(next_repair_ms_, now_ms + RepairRetryMs());
    const Member* m = members_.Find(id);
    const Member* announcer = members_.Find(st.announced_by);
    if (m == nullptr || announcer == nullptr || announcer->endpoint.empty() ||
        !members_.Alive(*announcer, now_ms)) {
      continue;
    }
    OriginState* link = MutableState(announcer->id);
    if (Unprune(link, id)) ++stats_->grafts;  // the request grafts it there
    WantFull(*m, &by_announcer[announcer->id], now_ms);
  }
  for (const auto& [announcer, requests] : by_announcer) {
    if (!requests.empty()) ++stats_->resyncs_requested;
    SendRequests(*members_.Find(announcer), requests);
  }
  // Frames lost on a link: the sender still keeps them.
  for (const auto& [sender, seqs] : links_in_.TakeDue(now_ms)) {
    const Member* m = members_.Find(sender);
    if (m != nullptr && !m->endpoint.empty()) outbox_->SendResend(m->endpoint, m->public_key, seqs);
  }
  next_repair_ms_ = std::min(next_repair_ms_, links_in_.NextDueMs());
}

void Dissemination::SendOwnUpdates(int64_t now_ms) {
  WireType type = WireType::kDelta;
  std::string bytes;
  if (!self_->PendingUpdate(&type, &bytes)) return;
  const UpdateSigs sigs = self_->SignPending(type, bytes);
  for (const LinkTarget& t : members_.Targets(now_ms)) {
    if (type == WireType::kDelta && !Pushes(t, node_id_)) continue;
    outbox_->SendSummaryBytes(t.endpoint, t.public_key, t.chosen, type, bytes, sigs.state,
                              sigs.delta);
  }
  self_->MarkAnnounced(type, bytes, now_ms, sigs);
  self_advanced_ = true;
}

// On every link: a node that no other node chose hears heartbeats and versions too. An entry
// whose only news is its heartbeat leaves the version out (the version entries of the members
// that advanced say it); a member's contact and epoch certificate go only when they changed.
void Dissemination::SendHeartbeats(bool self_fresh,
                                   const std::vector<std::pair<const Member*, bool>>& fresh,
                                   int64_t now_ms) {
  DigestBody body;
  if (self_fresh && !self_advanced_) body.entries.push_back(self_->Entry());
  for (const auto& [m, with_contact] : fresh) {
    if (!Provable(*m)) continue;
    const bool advanced = advanced_.erase(m->id) != 0;
    body.entries.push_back(EntryOf(*m, with_contact, now_ms, advanced || with_contact));
  }
  TakeAnnouncements(&body, now_ms);
  for (auto it = cert_rounds_.begin(); it != cert_rounds_.end();) {
    it = --it->second <= 0 ? cert_rounds_.erase(it) : std::next(it);
  }
  if (!body.entries.empty()) SendToLinks(body, now_ms);
}

void Dissemination::SendAnnouncements(int64_t now_ms) {
  DigestBody body;
  TakeAnnouncements(&body, now_ms);
  if (!body.entries.empty()) SendToLinks(body, now_ms);
}

void Dissemination::TakeAnnouncements(DigestBody* body, int64_t now_ms) {
  const bool self_event = std::exchange(self_event_, false);
  if (piggyback_versions_) {
    // Versions ride on probes; only membership news goes on every link.
    if (std::exchange(self_advanced_, false) && self_->has_summary() && !self_->full_pending()) {
      const DigestEntry e = self_->Entry();
      QueuePiggyback({e.origin, e.epoch, e.version, e.filter_digest});
    }
    for (const std::string& id : advanced_) {
      const Member* m = members_.Find(id);
      if (m != nullptr && HoldsCurrent(*m)) {
        QueuePiggyback({id, m->epoch, HeldVersion(id), summaries_->digest(id)});
      }
    }
    advanced_.clear();
  } else if (std::exchange(self_advanced_, false) && !self_event) {
    body->entries.push_back(self_->Entry());
  }
  if (self_event) body->entries.push_back(self_->Entry());
  for (StringSet* set : {&advanced_, &events_}) {
    for (auto it = set->begin(); it != set->end();) {
      const Member* m = members_.Find(*it);
      if (m != nullptr && !Provable(*m)) {
        ++it;  // announced once its epoch can be proven
        continue;
      }
      const bool listed = std::any_of(body->entries.begin(), body->entries.end(),
                                      [&](const DigestEntry& e) { return e.origin == *it; });
      if (m != nullptr && !listed) body->entries.push_back(EntryOf(*m, false, now_ms));
      it = set->erase(it);
    }
  }
}

// Each origin once in the queue, at its latest version.
void Dissemination::QueuePiggyback(VersionAnnouncement v) {
  for (Piggyback& p : piggyback_) {
    if (p.version.origin == v.origin) {
      p.version = std::move(v);
      p.sends = kPiggybackSends;
      return;
    }
  }
  piggyback_.push_back(Piggyback{std::move(v), kPiggybackSends});
}

// A version goes only where it tells something: not to its origin, nor to the member that
// brought it here, nor to a link this node relays the origin's deltas on (that copy is on its
// way, and a lost one is asked for again on the link). Those skipped wait for another frame.
std::vector<VersionAnnouncement> Dissemination::TakePiggyback(size_t max, const Member& to,
                                                              int64_t now_ms) {
  const bool pushes = members_.PushesTo(to.endpoint, now_ms);
  const OriginState* link = Find(to.id);
  auto known_there = [&](const VersionAnnouncement& v) {
    if (v.origin == to.id) return true;
    const OriginState* o = Find(v.origin);
    if (o != nullptr && o->last_from == to.id) return true;
    return pushes && (link == nullptr || link->no_push.count(v.origin) == 0);
  };
  std::vector<VersionAnnouncement> out;
  std::vector<Piggyback> sent, kept;
  kept.reserve(piggyback_.size());
  for (Piggyback& p : piggyback_) {
    if (out.size() >= max || known_there(p.version)) {
      kept.push_back(std::move(p));
      continue;
    }
    out.push_back(p.version);
    if (--p.sends > 0) sent.push_back(std::move(p));
  }
  // The ones sent go to the back, so the next frame carries the others first.
  for (Piggyback& p : sent) kept.push_back(std::move(p));
  piggyback_ = std::move(kept);
  return out;
}

void Dissemination::OnPiggyback(const std::vector<VersionAnnouncement>& versions,
                                const Member& sender, int64_t now_ms) {
  if (versions.empty()) return;
  DigestBody body;
  for (const VersionAnnouncement& v : versions) {
    if (v.origin == node_id_) continue;
    DigestEntry e;
    e.origin = v.origin;
    e.epoch = v.epoch;
    e.has_summary = true;
    e.version = v.version;
    e.filter_digest = v.filter_digest;
    body.entries.push_back(std::move(e));
  }
  RequestAnnounced(body, sender, now_ms);
}

void Dissemination::SendToLinks(const DigestBody& body, int64_t now_ms) {
  for (const LinkTarget& t : members_.Targets(now_ms)) {
    if (t.chosen || t.push) outbox_->SendDigest(t.endpoint, t.public_key, t.chosen, body);
  }
}

}  // namespace peerbloom
