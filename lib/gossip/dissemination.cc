// Receiving summaries: digests, full summaries, deltas and requests, and the digests this
// node sends. Frames reach here decoded and checked; nothing here refuses bytes.
#include "lib/gossip/dissemination.h"

#include <algorithm>
#include <unordered_map>

#include "peerbloom/byte_io.h"
#include "peerbloom/hash.h"

namespace peerbloom {

Dissemination::Dissemination(const GossipOptions& options, const Membership& members,
                             LocalNode* self, PeerSummaries* summaries, Outbox* outbox,
                             GossipStats* stats, const OriginSigs* sigs)
    : node_id_(options.node_id),
      gossip_interval_ms_(options.gossip_interval_ms),
      detector_flags_(options.wire_version >= 4),
      piggyback_versions_(options.failure_detector == FailureDetector::kProbe),
      members_(members),
      self_(self),
      summaries_(summaries),
      outbox_(outbox),
      stats_(stats),
      sigs_(sigs),
      // A link delivers in order (one connection per sender): a gap is a loss, asked for at
      // once but for a fiftieth of an interval that lets a simulated reordering settle.
      links_in_(std::max<int64_t>(1, gossip_interval_ms_ / 50), RepairRetryMs(), stats) {}

// Heartbeat digests in which an entry carries the epoch certificate after the epoch changed:
// a peer that lost one copy gets another, and complete digests carry it always.
constexpr int kCertRounds = 8;

void Dissemination::OnNewEpoch(const std::string& id) {
  summaries_->ForgetDeltas(id);
  cert_rounds_[id] = kCertRounds;
  if (push_links_.erase(id) != 0) restarted_links_.push_back(id);
  OriginState* st = MutableState(id);
  if (st == nullptr) return;
  st->full_requested_ms = kNeverMs;
  st->announced_version = 0;
  st->announced_by.clear();
  st->announced_ms = kNeverMs;
  st->no_push.clear();
  st->pruned_here.clear();
  st->prune_pending.clear();
  st->graft_pending.clear();
}

void Dissemination::Forget(const std::string& id) {
  summaries_->Erase(id);
  state_.erase(id);
  cert_rounds_.erase(id);
  awaited_.erase(id);
  lacking_since_.erase(id);
  links_in_.Forget(id);
}

const OriginState* Dissemination::Find(std::string_view id) const {
  auto it = state_.find(id);
  return it == state_.end() ? nullptr : &it->second;
}

OriginState* Dissemination::MutableState(std::string_view id) {
  auto it = state_.find(id);
  return it == state_.end() ? nullptr : &it->second;
}

uint64_t Dissemination::HeldVersion(std::string_view id) const {
  const HeldSummary* h = summaries_->Find(id);
  return h == nullptr ? 0 : h->version;
}

bool Dissemination::HoldsCurrent(const Member& m) const {
  return summaries_->HoldsEpoch(m.id, m.epoch);
}

DigestEntry Dissemination::EntryOf(const Member& m, bool with_contact, int64_t now_ms,
                                   bool with_summary) const {
  DigestEntry e;
  e.origin = m.id;
  e.epoch = m.epoch;
  e.heartbeat = m.heartbeat;
  e.alive = members_.Alive(m, now_ms);
  e.probes = m.probes && detector_flags_;
  // A member this node holds dead is still only suspected in its word: a peer that holds it
  // alive at this heartbeat starts a suspicion of its own (and pings it), never a death.
  e.suspect = (m.suspect || m.dead) && detector_flags_;
  // A stand-in is not announced: the entry's epoch is the member's, and peers must not take
  // the old epoch's version for one of the new.
  e.has_summary = with_summary && HoldsCurrent(m);
  e.version = e.has_summary ? HeldVersion(m.id) : 0;
  e.filter_digest = e.has_summary ? summaries_->digest(m.id) : 0;
  e.has_contact = with_contact && !m.endpoint.empty();
  if (e.has_contact) {
    e.endpoint = m.endpoint;
    e.public_key = m.public_key;
  }
  // 65 bytes an entry: sent while the epoch is new, and in complete digests.
  // The member's own signature of this heartbeat, relayed as it came (65 bytes); it vouches
  // for the epoch too. Without one, the epoch certificate goes in every entry.
  if (m.beats_signed) e.beat_sig = m.beat_sig;
  if (with_contact || cert_rounds_.count(m.id) != 0 || e.beat_sig.empty()) {
    e.epoch_cert = sigs_->EpochCert(m.id, m.epoch);
  }
  return e;
}

// A relayed epoch of an origin that signs is taken only with its proof (GossipEngine::
// AdmitEpoch): an entry without one would be refused and counted as a forgery. Such a
// member is left out until its certificate or a signed beat of the epoch arrives, at most
// a heartbeat interval after its summary installed the epoch here.
bool Dissemination::Provable(const Member& m) const {
  if (!sigs_->Signs(m.id)) return true;
  return !m.beat_sig.empty() || !sigs_->EpochCert(m.id, m.epoch).empty();
}

DigestBody Dissemination::CompleteDigest(uint8_t flags, int64_t now_ms) const {
  DigestBody body;
  body.flags = flags;
  body.entries.reserve(members_.members().size() + 1);
  body.entries.push_back(self_->Entry());
  for (const auto& [id, m] : members_.members()) {
    if (Provable(m)) body.entries.push_back(EntryOf(m, true, now_ms));
  }
  return body;
}

namespace {

uint64_t EntryHash(std::string_view origin, uint64_t epoch, uint64_t heartbeat, uint64_t version,
                   uint64_t filter_digest, bool suspected) {
  static const SipKey key = DeriveIndexKey("table checksum");
  std::string bytes(origin);
  for (uint64_t v : {epoch, heartbeat, version, filter_digest}) PutU64(&bytes, v);
  bytes.push_back(suspected ? 1 : 0);
  return SipHash64(1, 3, key, bytes.data(), bytes.size());
}

}  // namespace

uint64_t Dissemination::TableChecksum() const {
  const DigestEntry self = self_->Entry();
  uint64_t sum =
      EntryHash(self.origin, self.epoch, self.heartbeat, self.version, self.filter_digest, false);
  for (const auto& [id, m] : members_.members()) {
    const bool held = HoldsCurrent(m);
    // Suspected or dead: a node that missed a suspicion differs, and the exchange that
    // follows tells it.
    sum += EntryHash(id, m.epoch, m.heartbeat, held ? HeldVersion(id) : 0,
                     held ? summaries_->digest(id) : 0, m.suspect || m.dead);
  }
  return sum;
}

DigestBody Dissemination::ChecksumDigest(uint8_t flags) const {
  DigestBody body;
  body.flags = flags | kDigestChecksum;
  body.entries.push_back(self_->Entry());
  body.checksum = TableChecksum();
  return body;
}

DigestBody Dissemination::KnownAs(const Member& m, int64_t now_ms) const {
  DigestBody body;
  body.entries.push_back(EntryOf(m, true, now_ms));
  return body;
}

// A copy only one version behind ours is left alone for a gossip interval: its delta is on
// the way.
void Dissemination::PushMissing(const DigestBody& digest, const Member& sender, int64_t now_ms) {
  std::unordered_map<std::string_view, const DigestEntry*> theirs;
  for (const DigestEntry& e : digest.entries) theirs[e.origin] = &e;
  auto behind = [&](std::string_view origin, uint64_t epoch, uint64_t version, int64_t since) {
    auto it = theirs.find(origin);
    if (it == theirs.end() || !it->second->has_summary) return true;
    const DigestEntry& e = *it->second;
    if (e.epoch != epoch) return e.epoch < epoch;
    return e.version < version && now_ms - since >= gossip_interval_ms_;
  };
  std::string bytes;
  if (self_->has_summary() && !self_->full_pending() &&
      behind(node_id_, self_->epoch(), self_->announced_version(), self_->announced_ms()) &&
      EncodeHeld(node_id_, &bytes)) {
    SendFull(sender, node_id_, bytes);
  }
  for (const auto& [id, m] : members_.members()) {
    if (&m == &sender || !HoldsCurrent(m) || !members_.Alive(m, now_ms)) continue;
    const HeldSummary& h = *summaries_->Find(id);
    if (behind(id, m.epoch, h.version, h.received_ms) && EncodeHeld(id, &bytes)) {
      SendFull(sender, id, bytes);
    }
  }
}

void Dissemination::RequestAnnounced(const DigestBody& digest, const Member& sender,
                                     int64_t now_ms) {
  std::vector<FullRequest> requests;
  for (const DigestEntry& e : digest.entries) {
    const Member* m = members_.Find(e.origin);
    if (m == nullptr || !e.has_summary || e.epoch != m->epoch) continue;
    if (!HoldsCurrent(*m)) {
      WantFull(*m, &requests, now_ms);  // nothing to build on (a stand-in is not a base)
      // Asked again (Repair) while it does not come: a lost request or answer costs two
      // intervals, not an anti-entropy interval.
      NoteAnnounced(*m, e, sender, now_ms);
    } else if (e.version > HeldVersion(m->id)) {
      NoteAnnounced(*m, e, sender, now_ms);  // its delta is probably on the way
    } else if (e.version == HeldVersion(m->id) && e.origin == sender.id &&
               e.filter_digest != summaries_->digest(m->id)) {
      ++stats_->resyncs_requested;
      WantFull(*m, &requests, now_ms, /*bits_trusted=*/false);
    }
  }
  SendRequests(sender, requests);
}

void Dissemination::NoteAnnounced(const Member& m, const DigestEntry& e, const Member& sender,
                                  int64_t now_ms) {
  OriginState& st = state_[m.id];
  if (e.version < st.announced_version && st.announced_ms != kNeverMs) return;
  if (e.version == st.announced_version && st.announced_ms != kNeverMs) {
    st.announced_by = sender.id;  // a retry goes to the latest announcer
    return;
  }
  if (st.announced_ms == kNeverMs) st.announced_ms = now_ms;
  awaited_.insert(m.id);
  next_repair_ms_ = std::min(next_repair_ms_, st.announced_ms + RepairGraceMs());
  st.announced_version = e.version;
  st.announced_by = sender.id;
}

void Dissemination::OnFull(const Summary& s, std::string_view bytes, const Member* m,
                           const Member& sender, int64_t now_ms, std::string_view state_sig) {
  ++stats_->full_summaries_in;
  if (m == nullptr) {
    ++stats_->stale_dropped;
    return;
  }
  // Versions compare within one epoch: a stand-in of an older one is replaced by any version.
  const bool in_epoch = HoldsCurrent(*m);
  if (in_epoch && s.version <= HeldVersion(m->id)) {
    // The same version with other bits is only believed from the origin itself.
    const bool replace = s.version == HeldVersion(m->id) && &sender == m &&
                         FilterDigest(s.filter) != summaries_->digest(m->id);
    if (!replace) {
      ++stats_->stale_dropped;
      return;
    }
  }
  summaries_->Store(m->id, s, now_ms);
  summaries_->SetStateSig(m->id, state_sig);
  OriginState& st = state_[m->id];
  st.full_requested_ms = kNeverMs;
  if (s.version >= st.announced_version) st.announced_ms = kNeverMs;
  summaries_->SetEncoded(m->id, bytes);
  st.last_from = sender.id;
  advanced_.insert(m->id);
  TakePath(m->id, sender.id);
  RestorePath(m->id, sender.id);
  // An origin publishes a full summary in its epoch when the delta would be larger (a bulk
  // load): it goes down the tree as a delta would, or only the origin's links would have it.
  // The first summary of an epoch has no tree yet and is asked for (RequestAnnounced).
  if (in_epoch) RelayFull(bytes, state_sig, sender.id, m->id, now_ms);
  ++state_[sender.id].delivered;
}

bool Dissemination::OnLinkSeq(const Member& sender, uint64_t sender_epoch, uint64_t seq,
                              int64_t now_ms) {
  const bool again = links_in_.Note(sender.id, sender_epoch, seq, now_ms);
  next_repair_ms_ = std::min(next_repair_ms_, links_in_.NextDueMs());
  return again;
}

void Dissemination::OnDelta(const WireFrame& frame, const SummaryDelta& d, const Member* m,
                            const Member& sender, int64_t now_ms, bool again) {
  ++stats_->deltas_in;
  if (m == nullptr) {
    ++stats_->stale_dropped;  // about this node, or an old incarnation
    return;
  }
  if (d.epoch == m->epoch && HoldsCurrent(*m) && d.version <= HeldVersion(m->id)) {
    ++stats_->stale_dropped;  // a duplicate through another path
    if (!again) NoteDuplicate(sender, *m);
    return;
  }
  // A delta of a new epoch never applies to the old epoch's stand-in, whatever its base: the
  // versions of two epochs are unrelated, so that is a gap too.
  const bool same_geometry = HoldsCurrent(*m) && d.k == summaries_->k(m->id) &&
                             d.log2_bits == summaries_->log2_bits(m->id) &&
                             d.multiplier == summaries_->multiplier(m->id);
  if (!same_geometry || d.base_version != HeldVersion(m->id)) {
    // A gap: never guess. The sender may still have the missing deltas.
    Resync(sender, *m, now_ms, /*bits_trusted=*/same_geometry);
    return;
  }
  if (!summaries_->ApplyDelta(m->id, d, frame.summary_bytes, now_ms, frame.state_sig,
                              frame.delta_sig)) {
    Resync(sender, *m, now_ms, /*bits_trusted=*/false);
    return;
  }
  OriginState& st = state_[m->id];
  st.last_from = sender.id;
  if (d.version >= st.announced_version) st.announced_ms = kNeverMs;
  advanced_.insert(m->id);
  TakePath(m->id, sender.id);
  RestorePath(m->id, sender.id);
  Relay(frame, sender.id, m->id, now_ms);
  ++state_[sender.id].delivered;
}

bool Dissemination::Serve(const Member& to, const FullRequest& q) {
  uint64_t epoch = 0;
  if (q.origin == node_id_) {
    if (!self_->has_summary()) return true;
    epoch = self_->epoch();
  } else {
    const Member* m = members_.Find(q.origin);
    if (m == nullptr || !HoldsCurrent(*m)) return true;
    epoch = m->epoch;
  }
  if (epoch < q.epoch) return true;
  // The requester is as current as this node: nothing to send (a catch-up after a graft).
  const uint64_t held = q.origin == node_id_ ? self_->announced_version() : HeldVersion(q.origin);
  if (epoch == q.epoch && q.have_version > 0 && q.have_version >= held) return true;
  // Answering costs an encoding at worst: stop once the queue is full.
  if (outbox_->QueueFull(to.endpoint)) {
    ++stats_->queue_dropped;
    return false;
  }
  if (epoch == q.epoch && q.have_version > 0 && ServeDeltas(to, q)) return true;
  std::string bytes;
  if (EncodeHeld(q.origin, &bytes)) SendFull(to, q.origin, bytes);
  return true;
}

// Answers a request with the deltas from the requester's version when they are all at hand.
bool Dissemination::ServeDeltas(const Member& to, const FullRequest& q) {
  std::vector<const CachedDelta*> chain;
  if (q.origin == node_id_) {
    chain = self_->DeltasFrom(q.have_version);
  } else {
    if (members_.Find(q.origin) == nullptr) return false;
    chain = summaries_->DeltasFrom(q.origin, q.have_version);
  }
  if (chain.empty()) return false;
  for (const CachedDelta* d : chain) {
    outbox_->SendSummaryBytes(to.endpoint, to.public_key, false, WireType::kDelta, d->bytes,
                              d->state_sig, d->delta_sig);
    ++stats_->deltas_served;
  }
  return true;
}

void Dissemination::WantFull(const Member& m, std::vector<FullRequest>* requests, int64_t now_ms,
                             bool bits_trusted) {
  OriginState& st = state_[m.id];
  const uint64_t have = HoldsCurrent(m) && bits_trusted ? HeldVersion(m.id) : 0;
  // Missing deltas are cheap to ask for again soon; a full summary is asked for at most once
  // per half interval (an answer takes milliseconds, so a second copy is rare, while a lost
  // request or answer costs half an interval instead of two).
  const int64_t window = have > 0 ? RepairRetryMs() : std::max<int64_t>(1, gossip_interval_ms_ / 2);
  if (now_ms - st.full_requested_ms < window) return;
  st.full_requested_ms = now_ms;
  requests->push_back(FullRequest{m.id, m.epoch, have});
}

// Summaries normally come with the join exchange, or are asked of whoever announced them. A
// copy lost on a link with nothing after it (no gap to see) and never announced again would
// otherwise wait for anti-entropy, whose interval grows with the cluster.
void Dissemination::RequestLacking(int64_t now_ms) {
  for (const auto& [id, m] : members_.members()) {
    const bool lacking =
        m.epoch > 0 && !m.endpoint.empty() && members_.Alive(m, now_ms) && !HoldsCurrent(m);
    if (!lacking) {
      lacking_since_.erase(id);
      continue;
    }
    const int64_t since = lacking_since_.emplace(id, now_ms).first->second;
    const OriginState* st = Find(id);
    const bool awaited = st != nullptr && st->announced_ms != kNeverMs;
    if (awaited || now_ms - since < 2 * gossip_interval_ms_) continue;
    std::vector<FullRequest> requests;
    WantFull(m, &requests, now_ms);
    if (requests.empty()) continue;
    ++stats_->resyncs_requested;
    SendRequests(m, requests);
  }
}

void Dissemination::Resync(const Member& sender, const Member& m, int64_t now_ms,
                           bool bits_trusted) {
  std::vector<FullRequest> requests;
  WantFull(m, &requests, now_ms, bits_trusted);
  if (requests.empty()) return;
  ++stats_->resyncs_requested;
  SendRequests(sender, requests);
}

void Dissemination::SendRequests(const Member& to, const std::vector<FullRequest>& requests) {
  outbox_->SendRequests(to.endpoint, to.public_key, requests);
}

bool Dissemination::EncodeHeld(const std::string& origin, std::string* codec_bytes) {
  if (origin == node_id_) return self_->Encoded(codec_bytes);
  const Member* m = members_.Find(origin);
  if (m == nullptr || !HoldsCurrent(*m)) return false;  // stand-ins are never served
  return summaries_->Encoded(origin, codec_bytes);
}

void Dissemination::SendFull(const Member& to, const std::string& origin,
                             const std::string& codec_bytes) {
  std::string_view state_sig;
  if (origin == node_id_) {
    state_sig = self_->StateSig();
  } else if (const HeldSummary* h = summaries_->Find(origin)) {
    state_sig = h->state_sig;
  }
  outbox_->SendSummaryBytes(to.endpoint, to.public_key, false, WireType::kFullSummary, codec_bytes,
                            state_sig);
}

void Dissemination::DropSilentStandIns(int64_t now_ms) {
  // Judged each round: between the failure timeout and the round, who-has already leaves the
  // member out (liveness is judged at the query).
  for (const auto& [id, m] : members_.members()) {
    const HeldSummary* h = summaries_->Find(id);
    if (h == nullptr || !h->held || HoldsCurrent(m) || members_.Alive(m, now_ms)) continue;
    summaries_->Drop(id);
    if (OriginState* st = MutableState(id)) st->full_requested_ms = kNeverMs;
  }
}

}  // namespace peerbloom
