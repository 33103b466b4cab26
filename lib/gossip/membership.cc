// Members, failure detection and the neighbour set.
#include "lib/gossip/membership.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace peerbloom {

Membership::Membership(const GossipOptions& options, GossipStats* stats, EpochListener on_new_epoch)
    : node_id_(options.node_id),
      endpoint_(options.endpoint),
      failure_timeout_ms_(options.failure_timeout_ms),
      fanout_(options.fanout),
      shuffle_ms_(options.neighbour_shuffle_ms),
      join_retry_ms_(options.anti_entropy_interval_ms),
      anti_entropy_ms_(options.anti_entropy_interval_ms),
      forget_dead_after_ms_(options.forget_dead_after_ms),
      max_members_(options.max_members),
      stats_(stats),
      on_new_epoch_(std::move(on_new_epoch)),
      rank_key_(DeriveIndexKey("link rank " + options.node_id)),
      listed_only_(options.listed_only),
      max_skew_ms_(options.max_clock_skew_ms),
      heartbeat_ms_(std::max<int64_t>(1, options.heartbeat_interval_ms > 0
                                             ? options.heartbeat_interval_ms
                                             : options.failure_timeout_ms / 4)),
      probe_mode_(options.failure_detector == FailureDetector::kProbe),
      suspicion_ms_(SuspicionTimeoutMs(options)) {
  // Distinct nodes given the same seed still choose differently.
  const uint64_t id_mix =
      SipHash64(1, 3, DeriveIndexKey("gossip rng"), node_id_.data(), node_id_.size());
  rng_.seed(options.rng_seed ^ id_mix);
}

bool Membership::Alive(const Member& m, int64_t now_ms) const {
  if (probe_mode_ && m.probes) return m.last_heard_ms != kNeverMs && !m.dead;
  return m.last_heard_ms != kNeverMs && now_ms - m.last_heard_ms <= HeartbeatTimeoutMs(m);
}

int64_t Membership::HeartbeatTimeoutMs(const Member& m) const {
  if (!probe_mode_ || m.detector_heard) return failure_timeout_ms_;
  return std::max(failure_timeout_ms_, 2 * AntiEntropyMs());
}

// memberlist's push-pull interval grows with log N beyond 32 nodes; here the exchange also
// repairs versions missed, so it starts at the configured interval and grows from 4 nodes:
// N = 4: 1x, 8: 2x, 16: 3x, 32: 4x, 1,000: 9x.
int64_t Membership::AntiEntropyMs() const {
  if (!probe_mode_) return anti_entropy_ms_;
  const double n = static_cast<double>(members_.size() + 1);
  const double scale = std::max(1.0, std::ceil(std::log2(n / 2.0)));
  return static_cast<int64_t>(static_cast<double>(anti_entropy_ms_) * scale);
}

void Membership::NoteProbes(std::string_view id, bool probes) {
  Member* m = Mutable(id);
  if (m != nullptr) m->detector_heard = true;
  if (m == nullptr || m->probes == probes) return;
  m->probes = probes;
  if (!probes) ClearSuspicion(m);
}

bool Membership::Suspect(std::string_view id, uint64_t epoch, uint64_t heartbeat, int64_t now_ms) {
  Member* m = Mutable(id);
  if (!probe_mode_ || m == nullptr || !m->probes || m->suspect || m->dead ||
      m->last_heard_ms == kNeverMs || epoch != m->epoch || heartbeat != m->heartbeat) {
    return false;
  }
  m->suspect = true;
  m->suspect_until_ms = now_ms + suspicion_ms_;
  suspects_.insert(m->id);
  changed_.push_back(m->id);
  return true;
}

void Membership::ClearSuspicion(Member* m) {
  m->suspect = false;
  m->dead = false;
  m->suspect_until_ms = kNeverMs;
  suspects_.erase(m->id);
}

void Membership::SuspicionTimeouts(int64_t now_ms) {
  for (auto it = suspects_.begin(); it != suspects_.end();) {
    Member* m = Mutable(*it);
    if (m != nullptr && m->suspect && now_ms < m->suspect_until_ms) {
      ++it;
      continue;
    }
    if (m != nullptr && m->suspect) {
      m->suspect = false;
      m->dead = true;
      ++stats_->declared_dead;
    }
    it = suspects_.erase(it);
  }
}

int64_t Membership::NextSuspicionMs() const {
  int64_t next = INT64_MAX;
  for (std::string_view id : suspects_) {
    if (const Member* m = Find(id)) next = std::min(next, m->suspect_until_ms);
  }
  return next;
}

bool Membership::AnyHeartbeatMember(int64_t now_ms) const {
  for (const auto& [id, m] : members_) {
    // failure_timeout, not HeartbeatTimeoutMs: a member whose detector is not known yet keeps
    // this node beating no longer than any other member that does not probe.
    if (!m.probes && m.last_heard_ms != kNeverMs && now_ms - m.last_heard_ms <= failure_timeout_ms_)
      return true;
  }
  return false;
}

// A node that probes sends frames on its chosen links only when something changes or a
// probe is due, so its reverse links last until it unlinks, re-picks or dies.
int64_t Membership::InboundLeaseMs() const {
  return probe_mode_ ? failure_timeout_ms_ + shuffle_ms_ : failure_timeout_ms_;
}

const Member* Membership::Find(std::string_view id) const {
  auto it = members_.find(id);
  return it == members_.end() ? nullptr : &it->second;
}

Member* Membership::Mutable(std::string_view id) {
  auto it = members_.find(id);
  return it == members_.end() ? nullptr : &it->second;
}

const ListedNode* Membership::Listed(std::string_view id) const {
  auto it = listed_.find(id);
  return it == listed_.end() ? nullptr : &it->second;
}

Member* Membership::FindOrAdd(std::string_view id, int64_t now_ms) {
  if (Member* m = Mutable(id)) return m;
  if (id == node_id_) return nullptr;
  const ListedNode* listed = Listed(id);
  if (listed_only_ && listed == nullptr) {
    ++stats_->members_unlisted;
    return nullptr;
  }
  if (members_.size() >= max_members_) {
    ++stats_->members_refused;
    return nullptr;
  }
  Member& m = members_[std::string(id)];
  m.id = std::string(id);
  m.created_ms = now_ms;
  m.rank = SipHash64(1, 3, rank_key_, id.data(), id.size());
  if (listed != nullptr && !listed->endpoint.empty() && !listed->public_keys.empty()) {
    m.endpoint = listed->endpoint;
    m.public_key = listed->public_keys.front();
    m.contact_first_hand = true;
  }
  return &m;
}

// Only for unsigned claims that do not come from the node itself (docs/gossip.md, "Who speaks
// for a node's liveness"). Epochs are the wall clock (Unix ms) when a node started, or one
// more than its last epoch: one far ahead of this node's clock would make the real node's
// relayed claims look stale. A heartbeat advances once per heartbeat interval from 1 at the
// start of its epoch, so at wall time W it is at most (W - epoch) / interval + 1; the bound
// allows clocks max_clock_skew apart and intervals 4 x shorter than this node's. It depends
// on the epoch and the clock only, never on an earlier claim, so a stale or missing earlier
// claim (a summary installs an epoch before any heartbeat is heard) cannot tighten it.
bool Membership::Plausible(uint64_t epoch, uint64_t heartbeat, int64_t now_ms) {
  if (max_skew_ms_ <= 0 || !wall_known_) return true;
  const int64_t wall = std::max<int64_t>(now_ms + wall_offset_ms_, 0);
  if (epoch > static_cast<uint64_t>(wall + max_skew_ms_)) {
    ++stats_->implausible_epochs;
    return false;
  }
  const int64_t age = wall + max_skew_ms_ - static_cast<int64_t>(epoch);
  const uint64_t bound = 4 * static_cast<uint64_t>(age / heartbeat_ms_) + 16;
  if (heartbeat > bound) {
    ++stats_->implausible_heartbeats;
    return false;
  }
  return true;
}

Status Membership::CheckSender(const WireHeader& h, int64_t now_ms, bool verified) {
  if (listed_only_ && Listed(h.sender_id) == nullptr) {
    ++stats_->members_unlisted;
    return Status::InvalidArgument("frame from '" + h.sender_id +
                                   "', a node id the allow-list does not name");
  }
  if (verified) return Status::Ok();  // the node speaks for itself
  const Member* m = Find(h.sender_id);
  // An older incarnation's frame is stale, not a lie: Dispatch drops it.
  if (m != nullptr && h.sender_epoch < m->epoch) return Status::Ok();
  if (!Plausible(h.sender_epoch, h.sender_heartbeat, now_ms)) {
    return Status::InvalidArgument("frame from '" + h.sender_id + "' with implausible epoch '" +
                                   std::to_string(h.sender_epoch) + "' or heartbeat '" +
                                   std::to_string(h.sender_heartbeat) + "'");
  }
  return Status::Ok();
}

std::vector<std::string> Membership::SetListed(std::vector<ListedNode> listed) {
  listed_.clear();
  for (ListedNode& n : listed) {
    ListedNode& slot = listed_[n.node_id];
    slot.node_id = n.node_id;
    for (std::string& k : n.public_keys) slot.public_keys.push_back(std::move(k));
    if (!n.endpoint.empty()) slot.endpoint = n.endpoint;
  }
  std::vector<std::string> gone;
  if (!listed_only_) return gone;
  for (auto& [id, m] : members_) {
    const ListedNode* l = Listed(id);
    if (l == nullptr) {
      gone.push_back(id);
      continue;
    }
    const bool key_listed = std::find(l->public_keys.begin(), l->public_keys.end(), m.public_key) !=
                            l->public_keys.end();
    if (!l->endpoint.empty() && l->endpoint != m.endpoint && !l->public_keys.empty()) {
      SetContact(&m, l->endpoint, key_listed ? m.public_key : l->public_keys.front());
    } else if (!key_listed && !m.endpoint.empty() && !l->public_keys.empty()) {
      SetContact(&m, m.endpoint, l->public_keys.back());
    }
  }
  return gone;
}

void Membership::OfferContact(Member* m, const std::string& endpoint, const std::string& public_key,
                              bool first_hand, uint64_t epoch) {
  if (m->endpoint == endpoint && m->public_key == public_key) return;
  if (listed_only_) {
    const ListedNode* l = Listed(m->id);
    const bool key_listed = l != nullptr && std::find(l->public_keys.begin(), l->public_keys.end(),
                                                      public_key) != l->public_keys.end();
    const std::string& bound = l != nullptr ? l->endpoint : endpoint;
    if (!key_listed || (!bound.empty() && endpoint != bound)) {
      ++stats_->contacts_refused;
      return;
    }
    // Only the node itself moves a known endpoint, and only when it restarts (a newer
    // epoch); others may tell a new key for it (a restart after a key rotation) in a newer
    // epoch. No two members share an endpoint.
    const bool moves = !m->endpoint.empty() && endpoint != m->endpoint;
    bool taken = false;
    for (const auto& [id, other] : members_) taken |= &other != m && other.endpoint == endpoint;
    const bool refused = first_hand ? moves && m->contact_first_hand && epoch <= m->epoch
                                    : moves || (!m->endpoint.empty() && epoch <= m->epoch);
    if (refused || taken || endpoint == endpoint_) {
      ++stats_->contacts_refused;
      return;
    }
  }
  // The link to the old endpoint is no longer needed.
  if (!m->endpoint.empty() && m->endpoint != endpoint) moved_from_.push_back(m->endpoint);
  SetContact(m, endpoint, public_key);
  m->contact_first_hand = first_hand || m->contact_first_hand;
}

bool Membership::Observe(Member* m, uint64_t epoch, uint64_t heartbeat, int64_t now_ms) {
  if (epoch < m->epoch ||
      (epoch == m->epoch && heartbeat <= m->heartbeat && m->last_heard_ms != kNeverMs)) {
    return false;
  }
  if (epoch > m->epoch) {
    on_new_epoch_(m->id);
    m->epoch = epoch;
    m->contact_fresh = true;
  }
  m->heartbeat = heartbeat;
  m->beat_sig.clear();
  m->last_heard_ms = now_ms;
  m->fresh = true;
  ClearSuspicion(m);
  return true;
}

bool Membership::ObserveSigned(Member* m, uint64_t epoch, uint64_t heartbeat,
                               const std::string& sig, int64_t now_ms) {
  if (epoch < m->epoch) return false;
  if (m->beats_signed && epoch == m->epoch && heartbeat <= m->heartbeat &&
      !(heartbeat == m->heartbeat && m->beat_sig.empty())) {
    return false;
  }
  if (epoch > m->epoch) {
    on_new_epoch_(m->id);
    m->epoch = epoch;
    m->contact_fresh = true;
  }
  m->beats_signed = true;
  m->heartbeat = heartbeat;
  m->beat_sig = sig;
  m->last_heard_ms = now_ms;
  m->fresh = true;
  ClearSuspicion(m);
  return true;
}

void Membership::NewEpoch(Member* m, uint64_t epoch, int64_t now_ms) {
  if (epoch <= m->epoch) return;
  on_new_epoch_(m->id);
  m->epoch = epoch;
  m->heartbeat = 0;
  m->beat_sig.clear();
  m->contact_fresh = true;
  m->last_heard_ms = now_ms;
  m->fresh = true;
  ClearSuspicion(m);
}

void Membership::SetContact(Member* m, const std::string& endpoint, const std::string& public_key) {
  m->endpoint = endpoint;
  m->public_key = public_key;
  m->contact_fresh = true;
  for (SeedState& s : seeds_) {
    if (s.seed.endpoint == m->endpoint) s.member_id = m->id;
  }
}

const Member* Membership::AcceptSender(const WireHeader& h, int64_t now_ms, bool verified) {
  Member* m = FindOrAdd(h.sender_id, now_ms);
  if (m == nullptr) return m;
  if (verified) {
    // The node speaks for itself: what others claimed of it yields to its own word, unless
    // this frame is from an older incarnation than it already named itself.
    if (h.sender_epoch < m->direct_epoch) return m;
    m->direct_epoch = h.sender_epoch;
    m->direct_until_ms = now_ms + failure_timeout_ms_;
    if (h.sender_epoch < m->epoch) {
      ++stats_->claims_corrected;
      on_new_epoch_(m->id);
      m->epoch = h.sender_epoch;
      m->heartbeat = h.sender_heartbeat;
      m->beat_sig.clear();
      m->contact_fresh = true;
    }
  }
  if (h.sender_epoch < m->epoch) return m;
  const bool contact = (h.flags & kWireFlagContact) != 0;
  if (contact && (m->endpoint != h.sender_endpoint || m->public_key != h.sender_public_key)) {
    OfferContact(m, h.sender_endpoint, h.sender_public_key, verified, h.sender_epoch);
  }
  if (m->beats_signed) {
    // The header's heartbeat is not signed: only the node's signed beats (in its digests)
    // are relayed. Its frame still says it is alive.
    NewEpoch(m, h.sender_epoch, now_ms);
  } else if (!Observe(m, h.sender_epoch, h.sender_heartbeat, now_ms) && verified &&
             h.sender_epoch == m->epoch && m->heartbeat > h.sender_heartbeat + 16) {
    // Its own word replaces a heartbeat others claimed for it beyond what reordering explains.
    ++stats_->claims_corrected;
    m->heartbeat = h.sender_heartbeat;
  }
  // Heard on its link. In a cluster without CURVE no frame is authenticated, and a member
  // that probes beats only to refute: any frame of it is what says it was heard.
  const bool unauthenticated_prober = !listed_only_ && probe_mode_ && m->probes;
  if ((verified || unauthenticated_prober) && h.sender_epoch == m->epoch) {
    m->last_heard_ms = now_ms;
  }
  // Its own frame (on its own link, or any frame in a cluster without CURVE) ends a
  // suspicion: it is alive now.
  if (h.sender_epoch == m->epoch && (verified || !listed_only_)) ClearSuspicion(m);
  if ((h.flags & kWireFlagNeighbour) != 0) {
    m->inbound_until_ms = now_ms + InboundLeaseMs();
    maybe_linked_.insert(m->id);
  }
  if ((h.flags & kWireFlagUnlink) != 0) m->inbound_until_ms = kNeverMs;
  if (h.sender_epoch == m->epoch) {
    m->wire_version = h.version;
    m->pushes_here = (h.flags & kWireFlagNoPush) == 0;
  }
  return m;
}

void Membership::Merge(const DigestEntry& e, int64_t now_ms, bool own, BeatClaim beat,
                       bool proven) {
  const Member* found = Find(e.origin);
  const bool known = found != nullptr;
  // Heard on its own link lately: it says itself which epoch it runs. Others still relay its
  // heartbeats: when its link goes quiet they keep it alive without a gap. A newer epoch the
  // node itself signed is its own word too (it restarted: kill -9 and back within the window),
  // and so is any claim once this node holds it suspect or dead (its link is not speaking).
  const bool restarted = proven && known && e.epoch > found->epoch;
  const bool silent = known && (found->suspect || found->dead);
  if (!own && known && found->direct_until_ms >= now_ms && e.epoch != found->epoch && !restarted &&
      !silent) {
    return;
  }
  if (!own && beat == BeatClaim::kUnsigned && (!known || e.epoch >= found->epoch) &&
      !Plausible(e.epoch, e.heartbeat, now_ms)) {
    return;
  }
  Member* m = FindOrAdd(e.origin, now_ms);
  if (m == nullptr) return;
  if (e.has_contact && (m->endpoint.empty() || e.epoch > m->epoch)) {
    OfferContact(m, e.endpoint, e.public_key, own, e.epoch);
  }
  if (!known && !e.alive) {
    // Learned as dead: remember it without calling it alive.
    m->epoch = e.epoch;
    if (beat != BeatClaim::kNotTaken) m->heartbeat = e.heartbeat;
    if (beat == BeatClaim::kSigned) {
      m->beats_signed = true;
      m->beat_sig = e.beat_sig;
    }
    return;
  }
  switch (beat) {
    case BeatClaim::kSigned:
      ObserveSigned(m, e.epoch, e.heartbeat, e.beat_sig, now_ms);
      return;
    case BeatClaim::kUnsigned:
      if (!m->beats_signed) {
        Observe(m, e.epoch, e.heartbeat, now_ms);
        return;
      }
      [[fallthrough]];
    case BeatClaim::kNotTaken:
      // The epoch was certified (GossipEngine::AdmitEpoch); the heartbeat is not taken.
      NewEpoch(m, e.epoch, now_ms);
      return;
  }
}

const Member* Membership::AdvanceEpoch(std::string_view id, uint64_t epoch, int64_t now_ms,
                                       bool own_word) {
  const Member* known = Find(id);
  if (!own_word && (known == nullptr || epoch > known->epoch) && !Plausible(epoch, 0, now_ms)) {
    return nullptr;
  }
  Member* m = FindOrAdd(id, now_ms);
  if (m == nullptr || epoch < m->epoch) return nullptr;
  NewEpoch(m, epoch, now_ms);
  return m;
}

void Membership::Start(int64_t now_ms) {
  next_shuffle_ms_ = now_ms + shuffle_ms_;
  for (SeedState& s : seeds_) s.next_join_ms = now_ms;
}

std::vector<const Member*> Membership::Revived(int64_t now_ms) {
  std::vector<const Member*> out;
  for (auto& [id, m] : members_) {
    const bool alive = Alive(m, now_ms);
    if (alive && !m.was_alive && !m.endpoint.empty() && Chosen(m)) out.push_back(&m);
    m.was_alive = alive;
    if (!m.chosen && m.inbound_until_ms < now_ms) maybe_linked_.erase(id);
  }
  return out;
}

bool Membership::ChoseEndpoint(const std::string& endpoint) const {
  for (std::string_view id : maybe_linked_) {
    const Member* m = Find(id);
    if (m != nullptr && m->chosen && m->endpoint == endpoint) return true;
  }
  return false;
}

Membership::NeighbourChange Membership::RefreshNeighbours(int64_t now_ms) {
  const bool shuffle = now_ms >= next_shuffle_ms_;
  if (shuffle) next_shuffle_ms_ = now_ms + shuffle_ms_;
  std::vector<Member*> candidates;
  size_t chosen = 0;
  std::vector<std::string> unchosen;
  for (auto& [id, m] : members_) {
    const bool usable = Alive(m, now_ms) && !m.endpoint.empty();
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
  NeighbourChange change;
  change.shuffled = shuffle;
  while (chosen < fanout_ && !candidates.empty()) {
    std::uniform_int_distribution<size_t> pick(0, candidates.size() - 1);
    const size_t i = pick(rng_);
    Member* m = candidates[i];
    candidates[i] = candidates.back();
    candidates.pop_back();
    m->chosen = true;
    maybe_linked_.insert(m->id);
    ++chosen;
    // One re-picked at a shuffle keeps its link: no new exchange.
    if (std::find(unchosen.begin(), unchosen.end(), m->id) == unchosen.end()) {
      change.joined.push_back(m);
    }
  }
  for (const std::string& id : unchosen) {
    const Member* m = Find(id);
    if (m != nullptr && !m->chosen && !IsLinked(*m, now_ms)) change.unlinked.push_back(m);
  }
  return change;
}

// One seed per round: each answers a join with every summary, so asking them all at once
// would fetch everything once per seed. A seed that answers is alive, and its reply names the
// others, so they are not due either.
std::vector<Seed> Membership::JoinsDue(int64_t now_ms) {
  std::vector<SeedState*> due;
  for (SeedState& s : seeds_) {
    const Member* m = s.member_id.empty() ? nullptr : Find(s.member_id);
    if ((m != nullptr && Alive(*m, now_ms)) || now_ms < s.next_join_ms) continue;
    due.push_back(&s);
  }
  if (due.empty()) return {};
  SeedState* s = due[std::uniform_int_distribution<size_t>(0, due.size() - 1)(rng_)];
  s->next_join_ms = now_ms + join_retry_ms_;
  return {s->seed};
}

// The inbound cap: a seed that hundreds of nodes link to would otherwise push every delta to
// all of them.
// Only members that may be linked are looked at: a delta relayed costs the links, not the
// membership.
std::vector<LinkTarget> Membership::Targets(int64_t now_ms) const {
  std::vector<LinkTarget> out;
  std::vector<std::pair<uint64_t, size_t>> inbound;
  for (std::string_view id : maybe_linked_) {
    const Member* found = Find(id);
    if (found == nullptr) continue;
    const Member& m = *found;
    const bool chosen = Chosen(m) && !m.endpoint.empty() && Alive(m, now_ms);
    if (!chosen && !InboundLink(m, now_ms)) continue;
    if (!chosen) inbound.emplace_back(m.rank, out.size());
    out.push_back(LinkTarget{m.endpoint, m.public_key, m.id, chosen, chosen});
  }
  const size_t cap = std::min<size_t>(inbound.size(), 2 * fanout_);
  std::partial_sort(inbound.begin(), inbound.begin() + cap, inbound.end());
  for (size_t i = 0; i < cap; ++i) out[inbound[i].second].push = true;
  return out;
}

bool Membership::PushesTo(const std::string& endpoint, int64_t now_ms) const {
  const Member* to = nullptr;
  for (std::string_view id : maybe_linked_) {
    const Member* m = Find(id);
    if (m != nullptr && m->endpoint == endpoint) {
      to = m;
      break;
    }
  }
  if (to == nullptr || to->endpoint.empty() || !Alive(*to, now_ms)) return false;
  if (Chosen(*to)) return true;
  if (!InboundLink(*to, now_ms)) return false;
  // Targets() gives the places to the lowest ranks.
  size_t below = 0;
  for (std::string_view id : maybe_linked_) {
    const Member* m = Find(id);
    if (m != nullptr && m != to && InboundLink(*m, now_ms) && m->rank < to->rank) ++below;
  }
  return below < 2 * fanout_;
}

bool Membership::InboundLink(const Member& m, int64_t now_ms) const {
  return !Chosen(m) && !m.endpoint.empty() && Alive(m, now_ms) && m.inbound_until_ms >= now_ms;
}

std::optional<LinkTarget> Membership::RandomTarget(int64_t now_ms) {
  std::vector<LinkTarget> targets = Targets(now_ms);
  if (targets.empty()) return std::nullopt;
  std::uniform_int_distribution<size_t> pick(0, targets.size() - 1);
  return std::move(targets[pick(rng_)]);
}

std::vector<std::pair<const Member*, bool>> Membership::TakeFresh() {
  std::vector<std::pair<const Member*, bool>> out;
  for (auto& [id, m] : members_) {
    if (m.fresh || m.contact_fresh) out.emplace_back(&m, m.contact_fresh && !m.endpoint.empty());
    m.fresh = false;
    m.contact_fresh = false;
  }
  return out;
}

std::vector<std::string> Membership::ForgettableDead(int64_t now_ms) const {
  std::vector<std::string> gone;
  if (forget_dead_after_ms_ <= 0) return gone;
  for (const auto& [id, m] : members_) {
    if (probe_mode_ && m.probes && m.last_heard_ms != kNeverMs) {
      // Dead since its suspicion ran out.
      if (m.dead && now_ms - m.suspect_until_ms > forget_dead_after_ms_) gone.push_back(id);
      continue;
    }
    const int64_t since = m.last_heard_ms == kNeverMs ? m.created_ms : m.last_heard_ms;
    if (now_ms - since > HeartbeatTimeoutMs(m) + forget_dead_after_ms_) gone.push_back(id);
  }
  return gone;
}

std::string Membership::Forget(const std::string& id) {
  const Member* m = Find(id);
  if (m == nullptr) return "";
  // Linked at any time from now on: an inbound link counts until it lapses.
  std::string endpoint = IsLinked(*m, INT64_MAX / 2) ? m->endpoint : "";
  for (SeedState& s : seeds_) {
    if (s.member_id == id) s.member_id.clear();
  }
  maybe_linked_.erase(id);
  members_.erase(id);
  return endpoint;
}

std::vector<std::string> Membership::SetSeeds(std::vector<Seed> seeds, int64_t now_ms) {
  std::vector<SeedState> next;
  for (Seed& seed : seeds) {
    if (seed.endpoint == endpoint_) continue;  // never a seed of itself
    SeedState s;
    s.seed = std::move(seed);
    s.next_join_ms = now_ms;
    for (const SeedState& old : seeds_) {
      if (old.seed.endpoint == s.seed.endpoint) s.member_id = old.member_id;
    }
    next.push_back(std::move(s));
  }
  std::vector<std::string> dropped;
  for (const SeedState& old : seeds_) {
    const bool kept = std::any_of(next.begin(), next.end(), [&](const SeedState& s) {
      return s.seed.endpoint == old.seed.endpoint;
    });
    if (!kept) dropped.push_back(old.seed.endpoint);
  }
  seeds_ = std::move(next);
  return dropped;
}

bool Membership::IsSeed(const Member& m) const {
  for (const SeedState& s : seeds_) {
    if (s.member_id == m.id || (!m.endpoint.empty() && s.seed.endpoint == m.endpoint)) {
      return true;
    }
  }
  return false;
}

bool Membership::IsLinked(const Member& m, int64_t now_ms) const {
  return m.chosen || m.inbound_until_ms >= now_ms;
}

}  // namespace peerbloom
