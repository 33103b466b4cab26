// OnMessage: one frame from a peer. Bytes are decoded and checked in full before any state
// changes, so a refused frame changes nothing but the counters.
#include <string>
#include <unordered_map>

#include "lib/gossip/engine.h"

namespace peerbloom {

Status GossipEngine::Impl::OnMessage(std::string_view payload, int64_t now_ms) {
  if (!started_) Start(now_ms);
  ++stats_.messages_in;
  stats_.bytes_in += payload.size();
  WireFrame frame;
  Status s = DecodeFrame(payload, opt_.wire_limits, &frame);
  if (s.ok() && frame.header.cluster_tag != opt_.cluster_tag) {
    s = Status::InvalidArgument("frame of another cluster (tag '" +
                                std::to_string(frame.header.cluster_tag) + "')");
  }
  if (s.ok() && frame.header.sender_id == opt_.node_id) {
    s = Status::InvalidArgument("frame from this node itself");
  }
  if (s.ok()) s = Dispatch(frame, now_ms);
  if (!s.ok()) ++stats_.malformed_in;
  return s;
}

Status GossipEngine::Impl::Dispatch(const WireFrame& frame, int64_t now_ms) {
  Summary summary;
  SummaryDelta delta;
  const WireType type = frame.header.type;
  if (type == WireType::kFullSummary) {
    PEERBLOOM_RETURN_IF_ERROR(DecodeSummary(frame.summary_bytes, opt_.limits, &summary));
    if (summary.key_scheme != opt_.key_scheme) {
      return Status::InvalidArgument("summary of key scheme '" +
                                     std::string(KeySchemeName(summary.key_scheme)) + "'");
    }
    if (summary.hash_scheme != HashScheme::kSipHash13x2) {
      return Status::NotSupported("summary hash scheme '" +
                                  std::to_string(static_cast<int>(summary.hash_scheme)) + "'");
    }
  } else if (type == WireType::kDelta) {
    PEERBLOOM_RETURN_IF_ERROR(DecodeDelta(frame.summary_bytes, opt_.limits, &delta));
    if (delta.key_scheme != opt_.key_scheme) {
      return Status::InvalidArgument("delta of key scheme '" +
                                     std::string(KeySchemeName(delta.key_scheme)) + "'");
    }
  }
  std::vector<CacheDigest> digests;
  if (type == WireType::kImportedDigest) PEERBLOOM_RETURN_IF_ERROR(CheckImports(frame, &digests));
  Member* sender = AcceptSender(frame.header, now_ms);
  if (sender == nullptr) return Status::ResourceExhausted("member table is full");
  if (frame.header.sender_epoch < sender->epoch) {
    ++stats_.stale_dropped;  // a frame of an older incarnation
    return Status::Ok();
  }
  switch (type) {
    case WireType::kDigest:
      OnDigest(frame, sender, now_ms);
      break;
    case WireType::kFullSummary:
      OnFull(summary, frame.summary_bytes, sender, now_ms);
      break;
    case WireType::kDelta:
      OnDelta(frame, delta, sender, now_ms);
      break;
    case WireType::kRequestFull:
      OnRequests(frame, sender, now_ms);
      break;
    case WireType::kPrune:
      for (const std::string& origin : frame.origins) sender->no_push.insert(origin);
      break;
    case WireType::kGraft:
      for (const std::string& origin : frame.origins) sender->no_push.erase(origin);
      break;
    case WireType::kImportedDigest:
      OnImports(frame, &digests, sender, now_ms);
      break;
    case WireType::kBroadcast:
      break;
  }
  return Status::Ok();
}

// A frame is heard directly: its sender's contact, liveness and link come from the header.
Member* GossipEngine::Impl::AcceptSender(const WireHeader& h, int64_t now_ms) {
  Member* m = FindOrAdd(h.sender_id, now_ms);
  if (m == nullptr) return nullptr;
  if (h.sender_epoch < m->epoch) return m;
  const bool contact = (h.flags & kWireFlagContact) != 0;
  if (contact && (m->endpoint != h.sender_endpoint || m->public_key != h.sender_public_key)) {
    m->endpoint = h.sender_endpoint;
    m->public_key = h.sender_public_key;
    m->contact_fresh = true;
    ResolveSeeds(*m);
  }
  Observe(m, h.sender_epoch, h.sender_heartbeat, now_ms);
  if ((h.flags & kWireFlagNeighbour) != 0) {
    m->inbound_until_ms = now_ms + opt_.failure_timeout_ms;
  }
  if ((h.flags & kWireFlagUnlink) != 0) m->inbound_until_ms = kNeverMs;
  return m;
}

void GossipEngine::Impl::MergeEntry(const DigestEntry& e, int64_t now_ms) {
  if (e.origin == opt_.node_id) {
    // Others remember a heartbeat of ours at least this high (we restarted in the same
    // epoch): jump past it so our beats count as progress again.
    if (e.epoch == own_.epoch && e.heartbeat >= heartbeat_) {
      heartbeat_ = e.heartbeat + 1;
      self_fresh_ = true;
    }
    return;
  }
  const bool known = Find(e.origin) != nullptr;
  Member* m = FindOrAdd(e.origin, now_ms);
  if (m == nullptr) return;
  if (e.has_contact && (m->endpoint.empty() || e.epoch > m->epoch)) {
    m->endpoint = e.endpoint;
    m->public_key = e.public_key;
    m->contact_fresh = true;
    ResolveSeeds(*m);
  }
  if (!known && !e.alive) {
    // Learned as dead: remember it without calling it alive.
    m->epoch = e.epoch;
    m->heartbeat = e.heartbeat;
    return;
  }
  Observe(m, e.epoch, e.heartbeat, now_ms);
}

void GossipEngine::Impl::OnDigest(const WireFrame& frame, Member* sender, int64_t now_ms) {
  ++stats_.digests_in;
  const DigestBody& body = frame.digest;
  for (const DigestEntry& e : body.entries) MergeEntry(e, now_ms);
  if ((body.flags & kDigestComplete) != 0) PushMissing(frame, sender, now_ms);
  if ((body.flags & kDigestReplyWanted) != 0) {
    // The sender pushes what we lack once it reads our reply; asking now would double it.
    SendDigest(sender->endpoint, sender->public_key, false,
               CompleteDigest(kDigestComplete, now_ms));
    AnnounceImports(sender->endpoint, sender->public_key, false, now_ms);
    return;
  }
  std::vector<FullRequest> requests;
  for (const DigestEntry& e : body.entries) {
    Member* m = Find(e.origin);
    if (m == nullptr || !e.has_summary || e.epoch != m->epoch) continue;
    if (!m->HoldsCurrent()) {
      WantFull(m, &requests, now_ms);  // nothing to build on (a stand-in is not a base)
    } else if (e.version > m->version) {
      NoteAnnounced(m, e, *sender, now_ms);  // its delta is probably on the way
    } else if (e.version == m->version && e.origin == sender->id &&
               e.filter_digest != index_.digest(m->slot)) {
      ++stats_.resyncs_requested;
      WantFull(m, &requests, now_ms, /*bits_trusted=*/false);
    }
  }
  SendRequests(*sender, requests);
}

void GossipEngine::Impl::NoteAnnounced(Member* m, const DigestEntry& e, const Member& sender,
                                       int64_t now_ms) {
  if (e.version <= m->announced_version && m->announced_ms != kNeverMs) return;
  if (m->announced_ms == kNeverMs) m->announced_ms = now_ms;
  m->announced_version = e.version;
  m->announced_by = sender.id;
}

// A delta of `origin` we already hold came through `sender`: another path delivered it first,
// so this link need not carry that origin's deltas (Plumtree's prune, per origin: each origin's
// deltas spread on their own tree). A copy from the node that delivered the original is a
// network duplicate, not a second path.
void GossipEngine::Impl::NoteDuplicate(Member* sender, const Member& origin) {
  if (origin.last_from == sender->id || sender->pruned_here.count(origin.id) != 0) return;
  sender->pruned_here.insert(origin.id);
  sender->prune_pending.push_back(origin.id);
}

bool GossipEngine::Impl::Pushes(const LinkTarget& t, std::string_view origin) const {
  if (!t.push) return false;
  const Member* m = Find(t.member_id);
  return m == nullptr || m->no_push.count(origin) == 0;
}

// Sends the sender of a complete digest the full summaries it lacks or holds older. A copy
// only one version behind ours is left alone for a gossip interval: its delta is on the way.
void GossipEngine::Impl::PushMissing(const WireFrame& frame, Member* sender, int64_t now_ms) {
  std::unordered_map<std::string_view, const DigestEntry*> theirs;
  for (const DigestEntry& e : frame.digest.entries) theirs[e.origin] = &e;
  auto behind = [&](std::string_view origin, uint64_t epoch, uint64_t version, int64_t since) {
    auto it = theirs.find(origin);
    if (it == theirs.end() || !it->second->has_summary) return true;
    const DigestEntry& e = *it->second;
    if (e.epoch != epoch) return e.epoch < epoch;
    return e.version < version && now_ms - since >= opt_.gossip_interval_ms;
  };
  std::string bytes;
  if (has_own_ && !own_full_pending_ &&
      behind(opt_.node_id, own_.epoch, announced_version_, announced_ms_) &&
      EncodeHeld(opt_.node_id, &bytes)) {
    SendSummaryBytes(sender->endpoint, sender->public_key, false, WireType::kFullSummary, bytes);
  }
  for (const auto& [id, m] : members_) {
    if (&m == sender || !m.HoldsCurrent() || !Alive(m, now_ms)) continue;
    if (behind(id, m.epoch, m.version, m.summary_received_ms) && EncodeHeld(id, &bytes)) {
      SendSummaryBytes(sender->endpoint, sender->public_key, false, WireType::kFullSummary, bytes);
    }
  }
}

void GossipEngine::Impl::OnFull(const Summary& s, std::string_view bytes, Member* sender,
                                int64_t now_ms) {
  ++stats_.full_summaries_in;
  Member* m = s.origin == opt_.node_id ? nullptr : FindOrAdd(s.origin, now_ms);
  if (m == nullptr || s.epoch < m->epoch) {
    ++stats_.stale_dropped;
    return;
  }
  if (s.epoch > m->epoch) Observe(m, s.epoch, 0, now_ms);
  // Versions compare within one epoch: a stand-in of an older one is replaced by any version.
  if (m->HoldsCurrent() && s.version <= m->version) {
    // The same version with other bits is only believed from the origin itself.
    const bool replace =
        s.version == m->version && sender == m && FilterDigest(s.filter) != index_.digest(m->slot);
    if (!replace) {
      ++stats_.stale_dropped;
      return;
    }
  }
  StoreFull(s, m, now_ms);
  SetEncoded(m, bytes);
  m->last_from = sender->id;
}

// The slot is replaced in place, so who-has sees the old summary (a stand-in of an older
// epoch included) until the new one is whole, and never a moment without either.
void GossipEngine::Impl::StoreFull(const Summary& s, Member* m, int64_t now_ms) {
  if (m->slot == PeerIndex::kNoSlot) {
    m->slot = index_.Insert(s.filter);
    if (slot_owner_.size() <= m->slot) slot_owner_.resize(m->slot + 1);
    slot_owner_[m->slot] = m->id;
  } else {
    (void)index_.Replace(m->slot, s.filter);  // the slot is ours and in use
  }
  m->has_summary = true;
  m->summary_epoch = s.epoch;
  m->version = s.version;
  m->estimated_items = s.estimated_items;
  m->key_scheme = s.key_scheme;
  m->summary_received_ms = now_ms;
  m->full_requested_ms = kNeverMs;
  m->recent.Clear();
  if (m->version >= m->announced_version) m->announced_ms = kNeverMs;
}

void GossipEngine::Impl::OnDelta(const WireFrame& frame, const SummaryDelta& d, Member* sender,
                                 int64_t now_ms) {
  ++stats_.deltas_in;
  Member* m = d.origin == opt_.node_id ? nullptr : FindOrAdd(d.origin, now_ms);
  if (m == nullptr || d.epoch < m->epoch) {
    ++stats_.stale_dropped;  // about this node, or an old incarnation
    return;
  }
  if (d.epoch == m->epoch && m->HoldsCurrent() && d.version <= m->version) {
    ++stats_.stale_dropped;  // a duplicate through another path
    NoteDuplicate(sender, *m);
    return;
  }
  if (d.epoch > m->epoch) Observe(m, d.epoch, 0, now_ms);
  // A delta of a new epoch never applies to the old epoch's stand-in, whatever its base: the
  // versions of two epochs are unrelated, so that is a gap too.
  const bool same_geometry =
      m->HoldsCurrent() && d.k == index_.k(m->slot) && d.log2_bits == index_.log2_bits(m->slot);
  if (!same_geometry || d.base_version != m->version) {
    // A gap: never guess. The sender may still have the missing deltas.
    Resync(sender, m, now_ms, /*bits_trusted=*/same_geometry);
    return;
  }
  if (!index_.Flip(m->slot, d.flipped).ok()) {
    Resync(sender, m, now_ms, /*bits_trusted=*/false);
    return;
  }
  if (index_.digest(m->slot) != d.result_digest) {
    (void)index_.Flip(m->slot, d.flipped);  // undo: the same positions, known in range
    Resync(sender, m, now_ms, /*bits_trusted=*/false);
    return;
  }
  m->version = d.version;
  m->estimated_items = d.estimated_items;
  m->summary_received_ms = now_ms;
  m->last_from = sender->id;
  ClearEncoded(m);
  m->recent.Add(d.base_version, d.version, frame.summary_bytes, opt_.recent_delta_bytes);
  if (m->version >= m->announced_version) m->announced_ms = kNeverMs;
  Relay(frame, sender->id, m->id, now_ms);
}

void GossipEngine::Impl::Relay(const WireFrame& frame, const std::string& from,
                               const std::string& origin, int64_t now_ms) {
  bool relayed = false;
  for (const LinkTarget& t : Targets(now_ms)) {
    if (t.member_id == from || t.member_id == origin || !Pushes(t, origin)) continue;
    SendSummaryBytes(t.endpoint, t.public_key, t.chosen, WireType::kDelta, frame.summary_bytes);
    relayed = true;
  }
  if (relayed) ++stats_.deltas_relayed;
}

void GossipEngine::Impl::OnRequests(const WireFrame& frame, Member* sender, int64_t now_ms) {
  ++stats_.requests_in;
  std::string bytes;
  for (const FullRequest& q : frame.requests) {
    sender->no_push.erase(q.origin);  // it missed something: push to it again (graft)
    if (ServeImport(*sender, q, now_ms)) continue;
    uint64_t epoch = 0;
    if (q.origin == opt_.node_id) {
      if (!has_own_) continue;
      epoch = own_.epoch;
    } else {
      const Member* m = Find(q.origin);
      if (m == nullptr || !m->HoldsCurrent()) continue;
      epoch = m->epoch;
    }
    if (epoch < q.epoch) continue;
    // Answering costs an encoding at worst: stop once this sender's queue is full (the rest
    // would be dropped anyway).
    if (QueueFull(sender->endpoint)) {
      ++stats_.queue_dropped;
      break;
    }
    if (epoch == q.epoch && q.have_version > 0 && ServeDeltas(*sender, q)) continue;
    if (!EncodeHeld(q.origin, &bytes)) continue;
    SendSummaryBytes(sender->endpoint, sender->public_key, false, WireType::kFullSummary, bytes);
  }
}

// Answers a request with the deltas from the requester's version when they are all at hand.
bool GossipEngine::Impl::ServeDeltas(const Member& to, const FullRequest& q) {
  std::vector<const CachedDelta*> chain;
  if (q.origin == opt_.node_id) {
    chain = own_recent_.From(q.have_version, announced_version_);
  } else {
    const Member* m = Find(q.origin);
    if (m == nullptr) return false;
    chain = m->recent.From(q.have_version, m->version);
  }
  if (chain.empty()) return false;
  for (const CachedDelta* d : chain) {
    SendSummaryBytes(to.endpoint, to.public_key, false, WireType::kDelta, d->bytes);
    ++stats_.deltas_served;
  }
  return true;
}

void GossipEngine::Impl::WantFull(Member* m, std::vector<FullRequest>* requests, int64_t now_ms,
                                  bool bits_trusted) {
  if (now_ms - m->full_requested_ms < 2 * opt_.gossip_interval_ms) return;
  m->full_requested_ms = now_ms;
  const uint64_t have = m->HoldsCurrent() && bits_trusted ? m->version : 0;
  requests->push_back(FullRequest{m->id, m->epoch, have});
}

void GossipEngine::Impl::Resync(Member* sender, Member* m, int64_t now_ms, bool bits_trusted) {
  std::vector<FullRequest> requests;
  WantFull(m, &requests, now_ms, bits_trusted);
  if (requests.empty()) return;
  ++stats_.resyncs_requested;
  SendRequests(*sender, requests);
}

}  // namespace peerbloom
