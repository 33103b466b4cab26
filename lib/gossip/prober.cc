// The probe failure detector's probes (prober.h).
#include "lib/gossip/prober.h"

#include <algorithm>

#include "lib/util/string_hash.h"

namespace peerbloom {

Prober::Prober(const GossipOptions& options, Membership* members, Dissemination* versions,
               Outbox* outbox, GossipStats* stats)
    : id_(options.node_id),
      wire_version_(options.wire_version),
      interval_ms_(ProbeIntervalMs(options)),
      indirect_(options.indirect_probes),
      members_(members),
      versions_(versions),
      outbox_(outbox),
      stats_(stats) {
  const uint64_t id_mix =
      SipHash64(1, 3, DeriveIndexKey("probe rng"), options.node_id.data(), options.node_id.size());
  rng_.seed(options.rng_seed ^ id_mix);
}

void Prober::OnTick(int64_t now_ms) {
  if (!started_) {
    started_ = true;
    next_probe_ms_ = now_ms;
  }
  if (probing_ && !probe_.acked && !probe_.indirect_sent && now_ms >= probe_.indirect_at_ms) {
    Escalate(now_ms);
  }
  if (probing_ && now_ms >= probe_.ends_at_ms) End(now_ms);
  if (now_ms >= next_probe_ms_) {
    if (probing_) End(now_ms);
    Start(now_ms);
    next_probe_ms_ = now_ms + interval_ms_;
  }
  for (auto it = relayed_.begin(); it != relayed_.end();) {
    it = it->second.expires_ms <= now_ms ? relayed_.erase(it) : std::next(it);
  }
}

int64_t Prober::NextDeadline() const {
  if (!started_) return 0;
  int64_t next = next_probe_ms_;
  if (probing_) {
    next = std::min(next, probe_.ends_at_ms);
    if (!probe_.acked && !probe_.indirect_sent) next = std::min(next, probe_.indirect_at_ms);
  }
  return next;
}

const Member* Prober::NextTarget(int64_t now_ms) {
  for (int turn = 0; turn < 2; ++turn) {
    while (next_ < order_.size()) {
      const Member* m = members_->Find(order_[next_++]);
      if (m != nullptr && m->probes && !m->endpoint.empty() && members_->Alive(*m, now_ms) &&
          members_->IsLinked(*m, now_ms)) {
        return m;
      }
    }
    // A new turn over the links as they are now.
    order_.clear();
    next_ = 0;
    for (const LinkTarget& t : members_->Targets(now_ms)) order_.push_back(t.member_id);
    std::shuffle(order_.begin(), order_.end(), rng_);
  }
  return nullptr;
}

void Prober::Start(int64_t now_ms) {
  const Member* target = NextTarget(now_ms);
  if (target == nullptr) return;
  probing_ = true;
  probe_ = Probe();
  probe_.target = target->id;
  probe_.seq = next_seq_++;
  probe_.indirect_at_ms = now_ms + interval_ms_ / 2;
  probe_.ends_at_ms = now_ms + interval_ms_;
  Ping(*target, probe_.seq, target->suspect, now_ms);
}

void Prober::Escalate(int64_t now_ms) {
  probe_.indirect_sent = true;
  std::vector<const Member*> helpers;
  for (const LinkTarget& t : members_->Targets(now_ms)) {
    const Member* m = members_->Find(t.member_id);
    if (m != nullptr && m->probes && m->id != probe_.target && !m->suspect) helpers.push_back(m);
  }
  std::shuffle(helpers.begin(), helpers.end(), rng_);
  if (helpers.size() > indirect_) helpers.resize(indirect_);
  for (const Member* h : helpers) {
    ++stats_->probes_indirect;
    Send(*h, ProbeBody{ProbeKind::kPingReq, probe_.seq, probe_.target, 0, {}, {}}, now_ms);
  }
}

void Prober::End(int64_t now_ms) {
  probing_ = false;
  if (probe_.acked) return;
  const Member* m = members_->Find(probe_.target);
  if (m == nullptr) return;
  if (members_->Suspect(m->id, m->epoch, m->heartbeat, now_ms)) ++stats_->suspicions;
}

void Prober::Confirm(const Member& m, int64_t now_ms) {
  if (m.endpoint.empty()) return;
  auto [it, fresh] = confirmed_ms_.try_emplace(m.id, now_ms);
  if (!fresh && now_ms - it->second < interval_ms_) return;
  it->second = now_ms;
  if (confirmed_ms_.size() > 4 * members_->size() + 64) confirmed_ms_.clear();
  Ping(m, next_seq_++, true, now_ms);
}

bool Prober::OnProbe(const ProbeBody& p, const Member& sender, int64_t now_ms) {
  switch (p.kind) {
    case ProbeKind::kPing:
      Send(sender, ProbeBody{ProbeKind::kAck, p.seq, "", 0, {}, {}}, now_ms);
      return (p.flags & kProbeSuspected) != 0;
    case ProbeKind::kPingReq: {
      const Member* target = members_->Find(p.target);
      if (target == nullptr || target->endpoint.empty() || target == &sender) return false;
      // Indirect probes held for others are bounded: a member flooding ping-reqs gets no
      // more than the table holds within an interval (each answered by one ping, no more).
      if (relayed_.size() >= 4 * members_->size() + 64) return false;
      const uint64_t seq = next_seq_++;
      relayed_[seq] = Relayed{sender.id, p.seq, target->id, now_ms + interval_ms_};
      Ping(*target, seq, false, now_ms);
      return false;
    }
    case ProbeKind::kAck:
      break;
  }
  if (!p.target.empty()) {
    // An ack relayed for this node's indirect probe.
    if (probing_ && p.seq == probe_.seq && p.target == probe_.target) probe_.acked = true;
    return false;
  }
  if (probing_ && p.seq == probe_.seq && sender.id == probe_.target) probe_.acked = true;
  auto it = relayed_.find(p.seq);
  if (it != relayed_.end() && it->second.target == sender.id) {
    if (const Member* requester = members_->Find(it->second.requester)) {
      Send(*requester, ProbeBody{ProbeKind::kAck, it->second.requester_seq, sender.id, 0, {}, {}},
           now_ms);
    }
    relayed_.erase(it);
  }
  return false;
}

void Prober::Ping(const Member& to, uint64_t seq, bool suspected, int64_t now_ms) {
  ++stats_->probes;
  Send(to, ProbeBody{ProbeKind::kPing, seq, "", suspected ? kProbeSuspected : uint8_t{0}, {}, {}},
       now_ms, true);
}

void Prober::Send(const Member& to, ProbeBody body, int64_t now_ms, bool contact) {
  if (to.endpoint.empty()) return;
  body.versions = versions_->TakePiggyback(kVersionsPerProbe, to, now_ms);
  // A member that showed it runs version 7 reads other origins' versions without their
  // digest, which only the origin's own announcement is checked against.
  if (wire_version_ >= 7 && to.wire_version >= 7) {
    auto own = std::stable_partition(body.versions.begin(), body.versions.end(),
                                     [&](const VersionAnnouncement& v) { return v.origin == id_; });
    for (auto it = own; it != body.versions.end(); ++it) {
      it->filter_digest = 0;
      body.relayed_versions.push_back(std::move(*it));
    }
    body.versions.erase(own, body.versions.end());
  }
  outbox_->SendProbe(to.endpoint, to.public_key, members_->Chosen(to), body, contact);
}

}  // namespace peerbloom
