// Members, liveness, the neighbour set, who-has and peer listings.
#include <algorithm>

#include "lib/gossip/engine.h"

namespace peerbloom {

bool GossipEngine::Impl::Alive(const Member& m, int64_t now_ms) const {
  return m.last_heard_ms != kNeverMs && now_ms - m.last_heard_ms <= opt_.failure_timeout_ms;
}

Member* GossipEngine::Impl::Find(std::string_view id) {
  auto it = members_.find(id);
  return it == members_.end() ? nullptr : &it->second;
}

const Member* GossipEngine::Impl::Find(std::string_view id) const {
  auto it = members_.find(id);
  return it == members_.end() ? nullptr : &it->second;
}

Member* GossipEngine::Impl::FindOrAdd(std::string_view id, int64_t now_ms) {
  if (Member* m = Find(id)) return m;
  if (id == opt_.node_id) return nullptr;
  if (members_.size() >= opt_.max_members) {
    ++stats_.members_refused;
    return nullptr;
  }
  Member& m = members_[std::string(id)];
  m.id = std::string(id);
  m.created_ms = now_ms;
  m.rank = SipHash64(1, 3, rank_key_, id.data(), id.size());
  return &m;
}

bool GossipEngine::Impl::Observe(Member* m, uint64_t epoch, uint64_t heartbeat, int64_t now_ms) {
  if (epoch < m->epoch ||
      (epoch == m->epoch && heartbeat <= m->heartbeat && m->last_heard_ms != kNeverMs)) {
    return false;
  }
  if (epoch > m->epoch) {
    // A new incarnation. What described the old one's version sequence and links goes, but
    // its summary stays in the index as a stand-in: a restarted node restores its filter, so
    // dropping the summary now would hide what it still holds until the new epoch's full
    // summary arrives. StoreFull swaps that one in; nothing else ever changes the stand-in,
    // and DropSilentStandIns drops it if the member falls silent first.
    ClearEncoded(m);
    m->recent.Clear();
    m->full_requested_ms = kNeverMs;
    m->announced_version = 0;
    m->announced_by.clear();
    m->announced_ms = kNeverMs;
    m->no_push.clear();
    m->pruned_here.clear();
    m->prune_pending.clear();
    m->epoch = epoch;
    m->contact_fresh = true;
  }
  m->heartbeat = heartbeat;
  m->last_heard_ms = now_ms;
  m->fresh = true;
  return true;
}

void GossipEngine::Impl::DropSummary(Member* m) {
  if (m->slot != PeerIndex::kNoSlot) {
    index_.Erase(m->slot);
    slot_owner_[m->slot].clear();
  }
  m->slot = PeerIndex::kNoSlot;
  ClearEncoded(m);
  m->has_summary = false;
  m->summary_epoch = 0;
  m->version = 0;
  m->estimated_items = 0;
  m->full_requested_ms = kNeverMs;
}

// Judged each round: between the failure timeout and the round, WhoHas already leaves the
// member out (Alive is judged at the query).
void GossipEngine::Impl::DropSilentStandIns(int64_t now_ms) {
  for (auto& [id, m] : members_) {
    if (m.has_summary && !m.HoldsCurrent() && !Alive(m, now_ms)) DropSummary(&m);
  }
}

void GossipEngine::Impl::Forget(const std::string& id) {
  Member* m = Find(id);
  if (m == nullptr) return;
  DropSummary(m);
  if (!m->endpoint.empty() && IsLinked(*m, INT64_MAX / 2)) NoteDropped(m->endpoint);
  for (SeedState& s : seeds_) {
    if (s.member_id == id) s.member_id.clear();
  }
  members_.erase(id);
}

bool GossipEngine::Impl::IsSeed(const Member& m) const {
  for (const SeedState& s : seeds_) {
    if (s.member_id == m.id || (!m.endpoint.empty() && s.seed.endpoint == m.endpoint)) {
      return true;
    }
  }
  return false;
}

bool GossipEngine::Impl::IsLinked(const Member& m, int64_t now_ms) const {
  return m.chosen || IsSeed(m) || m.inbound_until_ms >= now_ms;
}

void GossipEngine::Impl::ResolveSeeds(const Member& m) {
  for (SeedState& s : seeds_) {
    if (s.seed.endpoint == m.endpoint) s.member_id = m.id;
  }
}

void GossipEngine::Impl::SetSeeds(std::vector<Seed> seeds, int64_t now_ms) {
  std::vector<SeedState> next;
  for (Seed& seed : seeds) {
    if (seed.endpoint == opt_.endpoint) continue;  // never a seed of itself
    SeedState s;
    s.seed = std::move(seed);
    s.next_join_ms = now_ms;
    for (const SeedState& old : seeds_) {
      if (old.seed.endpoint == s.seed.endpoint) s.member_id = old.member_id;
    }
    next.push_back(std::move(s));
  }
  for (const SeedState& old : seeds_) {
    const bool kept = std::any_of(next.begin(), next.end(), [&](const SeedState& s) {
      return s.seed.endpoint == old.seed.endpoint;
    });
    if (!kept) NoteDropped(old.seed.endpoint);
  }
  seeds_ = std::move(next);
}

// Keeps `fanout` live, reachable, non-seed members chosen; re-picks them all at each shuffle.
void GossipEngine::Impl::RefreshNeighbours(int64_t now_ms) {
  const bool shuffle = now_ms >= next_shuffle_ms_;
  if (shuffle) next_shuffle_ms_ = now_ms + opt_.neighbour_shuffle_ms;
  std::vector<Member*> candidates;
  size_t chosen = 0;
  std::vector<std::string> unchosen;
  for (auto& [id, m] : members_) {
    const bool usable = Alive(m, now_ms) && !m.endpoint.empty() && !IsSeed(m);
    if (m.chosen && (!usable || shuffle)) {
      m.chosen = false;
      unchosen.push_back(id);
    }
    if (m.chosen) {
      ++chosen;
    } else if (usable) {
      candidates.push_back(&m);
    }
  }
  while (chosen < opt_.fanout && !candidates.empty()) {
    std::uniform_int_distribution<size_t> pick(0, candidates.size() - 1);
    const size_t i = pick(rng_);
    Member* m = candidates[i];
    candidates[i] = candidates.back();
    candidates.pop_back();
    m->chosen = true;
    ++chosen;
    const bool was_unchosen = std::find(unchosen.begin(), unchosen.end(), m->id) != unchosen.end();
    if (!was_unchosen) SendJoinDigest(m->endpoint, m->public_key, true, now_ms);
  }
  for (const std::string& id : unchosen) {
    const Member* m = Find(id);
    if (m == nullptr || m->chosen || IsLinked(*m, now_ms)) continue;
    NoteDropped(m->endpoint);
    WireHeader h = Header(false, false);
    h.flags |= kWireFlagUnlink;
    std::string payload;
    if (EncodeDigestFrame(h, DigestBody(), &payload).ok()) {
      Send(m->endpoint, m->public_key, std::move(payload), WireType::kDigest);
    }
  }
}

// Live linked members. Deltas go on the links this node chose and on at most 2 x fanout of
// the links others chose (the lowest ranks, a stable pick): a seed that hundreds of nodes
// link to would otherwise push every delta to all of them.
std::vector<LinkTarget> GossipEngine::Impl::Targets(int64_t now_ms) const {
  std::vector<LinkTarget> out;
  std::vector<std::pair<uint64_t, size_t>> inbound;
  for (const auto& [id, m] : members_) {
    if (m.endpoint.empty() || !Alive(m, now_ms)) continue;
    const bool chosen = m.chosen || IsSeed(m);
    if (!chosen && m.inbound_until_ms < now_ms) continue;
    if (!chosen) inbound.emplace_back(m.rank, out.size());
    out.push_back(LinkTarget{m.endpoint, m.public_key, id, chosen, chosen});
  }
  const size_t cap = std::min<size_t>(inbound.size(), 2 * opt_.fanout);
  std::partial_sort(inbound.begin(), inbound.begin() + cap, inbound.end());
  for (size_t i = 0; i < cap; ++i) out[inbound[i].second].push = true;
  return out;
}

void GossipEngine::Impl::WhoHas(std::string_view key_bytes, const KeyHash& hash, int64_t now_ms,
                                std::vector<PeerMatch>* out) const {
  std::vector<PeerIndex::Slot> slots;
  index_.QueryKey(key_bytes, hash, &slots);
  for (PeerIndex::Slot slot : slots) {
    const Member* m = slot < slot_owner_.size() ? Find(slot_owner_[slot]) : nullptr;
    if (m == nullptr) {
      const Import* imp = FindImportBySlot(slot);
      if (imp != nullptr && ImportLive(*imp, now_ms)) {
        out->push_back(PeerMatch{imp->id, imp->source_url, now_ms - imp->received_ms, true});
      }
      continue;
    }
    if (!Alive(*m, now_ms)) continue;
    out->push_back(PeerMatch{m->id, m->endpoint, now_ms - m->summary_received_ms, false});
  }
}

std::vector<PeerInfo> GossipEngine::Impl::Peers(int64_t now_ms) const {
  std::vector<PeerInfo> out;
  for (const auto& [id, m] : members_) {
    PeerInfo p;
    p.node_id = id;
    p.endpoint = m.endpoint;
    p.public_key = m.public_key;
    p.alive = Alive(m, now_ms);
    p.chosen = m.chosen || IsSeed(m);
    p.neighbour = p.alive && IsLinked(m, now_ms);
    p.epoch = m.epoch;
    p.summary_epoch = m.has_summary ? m.summary_epoch : 0;
    p.version = m.version;
    p.heartbeat = m.heartbeat;
    p.estimated_items = m.estimated_items;
    p.k = m.has_summary ? index_.k(m.slot) : 0;
    p.log2_bits = m.has_summary ? index_.log2_bits(m.slot) : 0;
    p.last_heard_ms = m.last_heard_ms == kNeverMs ? 0 : m.last_heard_ms;
    p.summary_received_ms = m.summary_received_ms;
    out.push_back(std::move(p));
  }
  if (!imports_.empty()) {
    AddImportPeers(now_ms, &out);
    std::sort(out.begin(), out.end(),
              [](const PeerInfo& a, const PeerInfo& b) { return a.node_id < b.node_id; });
  }
  return out;
}

Status GossipEngine::Impl::GetSummary(std::string_view node_id, Summary* out) const {
  if (node_id == opt_.node_id) {
    if (!has_own_) return Status::NotFound("no summary published yet");
    *out = own_;
    return Status::Ok();
  }
  const Member* m = Find(node_id);
  if (m == nullptr || !m->has_summary) {
    return Status::NotFound("no summary of node '" + std::string(node_id) + "'");
  }
  out->origin = m->id;
  out->epoch = m->summary_epoch;  // a stand-in keeps its own epoch: never relabelled
  out->version = m->version;
  out->key_scheme = m->key_scheme;
  out->hash_scheme = HashScheme::kSipHash13x2;
  out->estimated_items = m->estimated_items;
  return index_.Extract(m->slot, &out->filter);
}

}  // namespace peerbloom
