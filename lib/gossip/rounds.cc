// Time-driven work: heartbeats, gossip rounds, anti-entropy, joins, and the local node's own
// summary (published by the daemon, announced to neighbours at the next round).
#include <algorithm>

#include "lib/gossip/engine.h"

namespace peerbloom {
namespace {

// The positions flipped an odd number of times: a run of deltas collapsed into one.
std::vector<uint64_t> NetFlips(std::vector<uint64_t> flips) {
  std::sort(flips.begin(), flips.end());
  std::vector<uint64_t> out;
  for (size_t i = 0; i < flips.size();) {
    size_t j = i;
    while (j < flips.size() && flips[j] == flips[i]) ++j;
    if ((j - i) % 2 == 1) out.push_back(flips[i]);
    i = j;
  }
  return out;
}

}  // namespace

void GossipEngine::Impl::Start(int64_t now_ms) {
  started_ = true;
  heartbeat_ = std::max<uint64_t>(heartbeat_, 1);
  next_round_ms_ = now_ms;
  next_heartbeat_ms_ = now_ms + heartbeat_interval_ms_;
  next_anti_entropy_ms_ = now_ms + opt_.anti_entropy_interval_ms;
  next_shuffle_ms_ = now_ms + opt_.neighbour_shuffle_ms;
  for (SeedState& s : seeds_) s.next_join_ms = now_ms;
}

void GossipEngine::Impl::OnTick(int64_t now_ms) {
  if (!started_) Start(now_ms);
  if (now_ms >= next_round_ms_) {
    Round(now_ms);
    next_round_ms_ = now_ms + opt_.gossip_interval_ms;
  }
  if (now_ms >= next_anti_entropy_ms_) {
    AntiEntropy(now_ms);
    next_anti_entropy_ms_ = now_ms + opt_.anti_entropy_interval_ms;
  }
}

int64_t GossipEngine::Impl::NextDeadline() const {
  if (!started_) return 0;
  return std::min(next_round_ms_, next_anti_entropy_ms_);
}

void GossipEngine::Impl::Round(int64_t now_ms) {
  if (now_ms >= next_heartbeat_ms_) {
    ++heartbeat_;
    self_fresh_ = true;
    next_heartbeat_ms_ = now_ms + heartbeat_interval_ms_;
  }
  for (auto& [id, m] : members_) {
    const bool alive = Alive(m, now_ms);
    // A linked member that came back (or restarted) gets a fresh exchange of everything.
    if (alive && !m.was_alive && !m.endpoint.empty() && (m.chosen || IsSeed(m))) {
      SendJoinDigest(m.endpoint, m.public_key, true, now_ms);
    }
    m.was_alive = alive;
  }
  RefreshNeighbours(now_ms);
  GraftLostLinks(Targets(now_ms));
  RetryJoins(now_ms);
  Repair(now_ms);
  SendOwnUpdates(now_ms);
  SendHeartbeatDigests(now_ms);
  SendPrunes();
  DropSilentStandIns(now_ms);
  ForgetDead(now_ms);
  ExpireImports(now_ms);
}

// A version announced by a neighbour's digest that no delta brought within an interval was
// lost on a pruned path: graft the announcer (it pushes to us again) and ask it for what is
// missing; it answers with its recent deltas, or a full summary.
void GossipEngine::Impl::Repair(int64_t now_ms) {
  std::map<std::string, std::vector<FullRequest>> by_announcer;
  for (auto& [id, m] : members_) {
    if (m.announced_ms == kNeverMs || now_ms - m.announced_ms < opt_.gossip_interval_ms) continue;
    m.announced_ms = now_ms;  // retried an interval later if still missing
    Member* announcer = Find(m.announced_by);
    if (announcer == nullptr || announcer->endpoint.empty() || !Alive(*announcer, now_ms)) {
      continue;
    }
    if (announcer->pruned_here.erase(id) != 0) ++stats_.grafts;  // the request grafts it
    WantFull(&m, &by_announcer[announcer->id], now_ms);
  }
  for (const auto& [announcer, requests] : by_announcer) {
    if (!requests.empty()) ++stats_.resyncs_requested;
    SendRequests(*Find(announcer), requests);
  }
}

// Origins whose last delta came over a link that no longer carries deltas (the member died,
// was shuffled out, or fell out of the inbound cap) may have no path left: the remaining delta
// links that were pruned for them are grafted back at once rather than after a repair.
void GossipEngine::Impl::GraftLostLinks(const std::vector<LinkTarget>& targets) {
  std::set<std::string> now_links;
  for (const LinkTarget& t : targets) {
    if (t.push) now_links.insert(t.member_id);
  }
  std::vector<std::string> orphans;
  for (const std::string& lost : push_links_) {
    if (now_links.count(lost) != 0) continue;
    if (Member* m = Find(lost)) {
      m->no_push.clear();
      m->pruned_here.clear();
    }
    for (auto& [id, m] : members_) {
      if (m.last_from == lost) orphans.push_back(id);
    }
  }
  push_links_ = std::move(now_links);
  if (orphans.empty()) return;
  for (const LinkTarget& t : targets) {
    Member* m = t.push ? Find(t.member_id) : nullptr;
    if (m == nullptr) continue;
    std::vector<std::string> graft;
    for (const std::string& origin : orphans) {
      if (origin != m->id && m->pruned_here.erase(origin) != 0) graft.push_back(origin);
    }
    std::string payload;
    if (graft.empty() ||
        !EncodeOriginsFrame(Header(t.chosen, false), WireType::kGraft, graft, &payload).ok()) {
      continue;
    }
    ++stats_.grafts;
    Send(t.endpoint, t.public_key, std::move(payload), WireType::kGraft);
  }
}

// Seeds not heard from (or dead) get a join digest every anti-entropy interval.
void GossipEngine::Impl::RetryJoins(int64_t now_ms) {
  for (SeedState& s : seeds_) {
    const Member* m = s.member_id.empty() ? nullptr : Find(s.member_id);
    if ((m != nullptr && Alive(*m, now_ms)) || now_ms < s.next_join_ms) continue;
    s.next_join_ms = now_ms + opt_.anti_entropy_interval_ms;
    SendJoinDigest(s.seed.endpoint, s.seed.public_key, true, now_ms);
  }
}

void GossipEngine::Impl::AntiEntropy(int64_t now_ms) {
  const std::vector<LinkTarget> targets = Targets(now_ms);
  if (targets.empty()) return;
  std::uniform_int_distribution<size_t> pick(0, targets.size() - 1);
  const LinkTarget& t = targets[pick(rng_)];
  SendJoinDigest(t.endpoint, t.public_key, t.chosen, now_ms);
}

void GossipEngine::Impl::SendJoinDigest(const std::string& endpoint, const std::string& public_key,
                                        bool chosen, int64_t now_ms) {
  SendDigest(endpoint, public_key, chosen,
             CompleteDigest(kDigestComplete | kDigestReplyWanted, now_ms));
  AnnounceImports(endpoint, public_key, chosen, now_ms);
}

void GossipEngine::Impl::FlushNow(int64_t now_ms) {
  if (!started_) Start(now_ms);
  SendOwnUpdates(now_ms);
}

void GossipEngine::Impl::SendOwnUpdates(int64_t now_ms) {
  if (!has_own_) return;
  std::string bytes;
  WireType type = WireType::kDelta;
  if (own_full_pending_) {
    if (!EncodeHeld(opt_.node_id, &bytes)) return;
    type = WireType::kFullSummary;
  } else if (own_.version > announced_version_) {
    SummaryDelta d;
    d.origin = own_.origin;
    d.epoch = own_.epoch;
    d.base_version = announced_version_;
    d.version = own_.version;
    d.key_scheme = own_.key_scheme;
    d.hash_scheme = own_.hash_scheme;
    d.k = own_.filter.k();
    d.log2_bits = own_.filter.log2_bits();
    d.estimated_items = own_.estimated_items;
    d.flipped = NetFlips(std::move(pending_flips_));
    d.result_digest = own_digest_;
    if (!EncodeDelta(d, &bytes).ok()) {
      // Cannot happen for a delta built from our own state; a full summary still works.
      if (!EncodeHeld(opt_.node_id, &bytes)) return;
      type = WireType::kFullSummary;
    }
  } else {
    return;
  }
  for (const LinkTarget& t : Targets(now_ms)) {
    if (type == WireType::kDelta && !Pushes(t, opt_.node_id)) continue;
    SendSummaryBytes(t.endpoint, t.public_key, t.chosen, type, bytes);
  }
  if (type == WireType::kDelta) {
    own_recent_.Add(announced_version_, own_.version, bytes, opt_.recent_delta_bytes);
  } else {
    own_recent_.Clear();
  }
  own_full_pending_ = false;
  pending_flips_.clear();
  announced_version_ = own_.version;
  announced_digest_ = own_digest_;
  announced_ms_ = now_ms;
}

void GossipEngine::Impl::SendHeartbeatDigests(int64_t now_ms) {
  DigestBody body;
  if (self_fresh_) body.entries.push_back(SelfEntry());
  for (auto& [id, m] : members_) {
    if (m.fresh || m.contact_fresh) {
      body.entries.push_back(EntryOf(m, m.contact_fresh && !m.endpoint.empty(), now_ms));
    }
    m.fresh = false;
    m.contact_fresh = false;
  }
  self_fresh_ = false;
  if (body.entries.empty()) return;
  // Only on links this node chose: a seed with hundreds of inbound links does not send each of
  // them every heartbeat; they hear it through their own choices and anti-entropy.
  for (const LinkTarget& t : Targets(now_ms)) {
    if (t.chosen) SendDigest(t.endpoint, t.public_key, t.chosen, body);
  }
}

void GossipEngine::Impl::ForgetDead(int64_t now_ms) {
  if (opt_.forget_dead_after_ms <= 0) return;
  std::vector<std::string> gone;
  for (const auto& [id, m] : members_) {
    const int64_t since = m.last_heard_ms == kNeverMs ? m.created_ms : m.last_heard_ms;
    if (now_ms - since > opt_.failure_timeout_ms + opt_.forget_dead_after_ms) {
      gone.push_back(id);
    }
  }
  for (const std::string& id : gone) Forget(id);
}

DigestEntry GossipEngine::Impl::SelfEntry() const {
  DigestEntry e;
  e.origin = opt_.node_id;
  e.epoch = own_.epoch;
  e.heartbeat = heartbeat_;
  e.alive = true;
  e.has_summary = has_own_ && !own_full_pending_;
  e.version = e.has_summary ? announced_version_ : 0;
  e.filter_digest = e.has_summary ? announced_digest_ : 0;
  e.has_contact = true;
  e.endpoint = opt_.endpoint;
  e.public_key = opt_.public_key;
  return e;
}

DigestEntry GossipEngine::Impl::EntryOf(const Member& m, bool with_contact, int64_t now_ms) const {
  DigestEntry e;
  e.origin = m.id;
  e.epoch = m.epoch;
  e.heartbeat = m.heartbeat;
  e.alive = Alive(m, now_ms);
  // A stand-in is not announced: the entry's epoch is the member's, and peers must not take
  // the old epoch's version for one of the new.
  e.has_summary = m.HoldsCurrent();
  e.version = e.has_summary ? m.version : 0;
  e.filter_digest = e.has_summary ? index_.digest(m.slot) : 0;
  e.has_contact = with_contact && !m.endpoint.empty();
  if (e.has_contact) {
    e.endpoint = m.endpoint;
    e.public_key = m.public_key;
  }
  return e;
}

DigestBody GossipEngine::Impl::CompleteDigest(uint8_t flags, int64_t now_ms) const {
  DigestBody body;
  body.flags = flags;
  body.entries.reserve(members_.size() + 1);
  body.entries.push_back(SelfEntry());
  for (const auto& [id, m] : members_) body.entries.push_back(EntryOf(m, true, now_ms));
  return body;
}

void GossipEngine::Impl::PublishFull(const Summary& summary, int64_t now_ms) {
  if (!started_) Start(now_ms);
  if (summary.origin != opt_.node_id || summary.key_scheme != opt_.key_scheme) {
    ++stats_.local_publish_refused;
    return;
  }
  own_ = summary;
  own_digest_ = FilterDigest(own_.filter);
  has_own_ = true;
  own_full_pending_ = true;
  pending_flips_.clear();
  own_encoded_.clear();
  self_fresh_ = true;
}

void GossipEngine::Impl::PublishDelta(const SummaryDelta& d, int64_t now_ms) {
  if (!started_) Start(now_ms);
  BloomFilter& f = own_.filter;
  bool fits = has_own_ && d.origin == own_.origin && d.epoch == own_.epoch &&
              d.base_version == own_.version && d.version > d.base_version && d.k == f.k() &&
              d.log2_bits == f.log2_bits();
  for (size_t i = 0; fits && i < d.flipped.size(); ++i) fits = d.flipped[i] <= f.mask();
  if (!fits) {
    ++stats_.local_publish_refused;
    return;
  }
  uint64_t digest = own_digest_;
  for (uint64_t p : d.flipped) digest ^= PositionDigest(p);
  if (digest != d.result_digest) {
    ++stats_.local_publish_refused;
    return;
  }
  for (uint64_t p : d.flipped) f.FlipBit(p);
  own_digest_ = digest;
  own_.version = d.version;
  own_.estimated_items = d.estimated_items;
  pending_flips_.insert(pending_flips_.end(), d.flipped.begin(), d.flipped.end());
  own_encoded_.clear();
}

}  // namespace peerbloom
