// GossipEngine's public entry points, the composition of its parts, and the queries that
// read across them (who-has, peers, summaries).
#include <algorithm>
#include <memory>
#include <utility>

#include "lib/gossip/engine.h"
#include "peerbloom/gossip.h"

namespace peerbloom {

GossipEngine::Impl::Impl(GossipOptions options)
    : opt_(std::move(options)),
      heartbeat_interval_ms_(EffectiveHeartbeatMs(opt_)),
      sigs_(opt_, &stats_),
      local_(opt_),
      outbox_(opt_, local_, &stats_),
      summaries_(opt_),
      membership_(opt_, &stats_, [this](const std::string& id) { dissemination_.OnNewEpoch(id); }),
      dissemination_(opt_, membership_, &local_, &summaries_, &outbox_, &stats_, &sigs_),
      prober_(opt_, &membership_, &dissemination_, &outbox_, &stats_),
      imports_(opt_, membership_, &summaries_, &outbox_, &stats_, &sigs_) {
  SetSeeds(opt_.seeds, 0);
  membership_.SetListed(opt_.listed);
  outbox_.SetChosenLookup(
      [this](const std::string& endpoint) { return membership_.ChoseEndpoint(endpoint); });
  outbox_.SetClock(&clock_ms_);
  outbox_.SetPushLookup(
      [this](const std::string& endpoint) { return membership_.PushesTo(endpoint, clock_ms_); });
}

void GossipEngine::Impl::SetListed(std::vector<ListedNode> listed, int64_t now_ms) {
  (void)now_ms;
  for (const std::string& id : membership_.SetListed(std::move(listed))) {
    ++stats_.members_revoked;
    dissemination_.Forget(id);
    outbox_.NoteDropped(membership_.Forget(id));
  }
}

void GossipEngine::Impl::SetSeeds(std::vector<Seed> seeds, int64_t now_ms) {
  for (const std::string& endpoint : membership_.SetSeeds(std::move(seeds), now_ms)) {
    outbox_.NoteDropped(endpoint);
  }
}

void GossipEngine::Impl::WhoHas(std::string_view key_bytes, const KeyHash& hash, int64_t now_ms,
                                std::vector<PeerMatch>* out) const {
  who_has_slots_.clear();
  summaries_.index().QueryKey(key_bytes, hash, &who_has_slots_);
  for (PeerIndex::Slot slot : who_has_slots_) {
    const Member* m = membership_.Find(summaries_.Owner(slot));
    if (m == nullptr) {
      const HeldImport* imp = imports_.FindBySlot(slot);
      if (imp != nullptr && imports_.Live(*imp, now_ms)) {
        out->push_back(PeerMatch{imp->id, imp->source_url, now_ms - imp->received_ms, true});
      }
      continue;
    }
    if (!membership_.Alive(*m, now_ms)) continue;
    const int64_t received_ms = summaries_.Find(m->id)->received_ms;
    out->push_back(PeerMatch{m->id, m->endpoint, now_ms - received_ms, false});
  }
}

PeerInfo GossipEngine::Impl::MemberInfo(const Member& m, int64_t now_ms) const {
  PeerInfo p;
  p.node_id = m.id;
  p.endpoint = m.endpoint;
  p.public_key = m.public_key;
  p.alive = membership_.Alive(m, now_ms);
  p.chosen = membership_.Chosen(m);
  p.neighbour = p.alive && membership_.IsLinked(m, now_ms);
  p.epoch = m.epoch;
  p.heartbeat = m.heartbeat;
  p.last_heard_ms = m.last_heard_ms == kNeverMs ? 0 : m.last_heard_ms;
  const HeldSummary* h = summaries_.Find(m.id);
  if (h == nullptr) return p;
  p.summary_epoch = h->held ? h->epoch : 0;
  p.version = h->version;
  p.estimated_items = h->estimated_items;
  p.k = h->held ? summaries_.index().k(h->slot) : 0;
  p.log2_bits = h->held ? summaries_.index().log2_bits(h->slot) : 0;
  p.multiplier = h->held ? summaries_.index().multiplier(h->slot) : 0;
  p.summary_received_ms = h->received_ms;
  return p;
}

std::vector<PeerInfo> GossipEngine::Impl::Peers(int64_t now_ms) const {
  std::vector<PeerInfo> out;
  for (const auto& [id, m] : membership_.members()) out.push_back(MemberInfo(m, now_ms));
  if (!imports_.empty()) imports_.AddPeers(now_ms, &out);
  // In node id order, whatever order the member table keeps.
  std::sort(out.begin(), out.end(),
            [](const PeerInfo& a, const PeerInfo& b) { return a.node_id < b.node_id; });
  return out;
}

Status GossipEngine::Impl::GetSummary(std::string_view node_id, Summary* out) const {
  if (node_id == opt_.node_id) {
    if (!local_.has_summary()) return Status::NotFound("no summary published yet");
    *out = local_.summary();
    return Status::Ok();
  }
  if (membership_.Find(node_id) == nullptr) {
    return Status::NotFound("no summary of node '" + std::string(node_id) + "'");
  }
  return summaries_.Extract(node_id, out);
}

GossipEngine::GossipEngine(GossipOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
GossipEngine::~GossipEngine() = default;

bool GossipEngine::PublishFull(const Summary& summary, int64_t now_ms) {
  impl_->SetClock(now_ms);
  return impl_->PublishFull(summary, now_ms);
}
bool GossipEngine::PublishDelta(const SummaryDelta& delta, int64_t now_ms) {
  impl_->SetClock(now_ms);
  return impl_->PublishDelta(delta, now_ms);
}
void GossipEngine::FlushNow(int64_t now_ms) {
  impl_->SetClock(now_ms);
  impl_->FlushNow(now_ms);
}
Status GossipEngine::ImportDigest(const DigestImport& import, int64_t now_ms) {
  impl_->SetClock(now_ms);
  return impl_->ImportDigest(import, now_ms);
}
void GossipEngine::ForgetImport(std::string_view source, int64_t now_ms) {
  impl_->SetClock(now_ms);
  impl_->ForgetImport(source, now_ms);
}
Status GossipEngine::OnMessage(std::string_view payload, int64_t now_ms) {
  impl_->SetClock(now_ms);
  return impl_->OnMessage(payload, now_ms, "");
}
Status GossipEngine::OnMessage(std::string_view payload, int64_t now_ms,
                               std::string_view link_node_id) {
  impl_->SetClock(now_ms);
  return impl_->OnMessage(payload, now_ms, link_node_id);
}
void GossipEngine::SetWallClock(int64_t wall_ms, int64_t now_ms) {
  impl_->SetWallClock(wall_ms, now_ms);
}
void GossipEngine::SetListed(std::vector<ListedNode> listed, int64_t now_ms) {
  impl_->SetClock(now_ms);
  impl_->SetListed(std::move(listed), now_ms);
}
void GossipEngine::SetSignKeys(std::shared_ptr<const SignKeyRing> keys) {
  impl_->SetSignKeys(std::move(keys));
}
void GossipEngine::OnTick(int64_t now_ms) {
  impl_->SetClock(now_ms);
  impl_->OnTick(now_ms);
}
int64_t GossipEngine::NextDeadline() const { return impl_->NextDeadline(); }
void GossipEngine::SetSeeds(std::vector<Seed> seeds, int64_t now_ms) {
  impl_->SetClock(now_ms);
  impl_->SetSeeds(std::move(seeds), now_ms);
}
std::vector<Outgoing> GossipEngine::TakeOutgoing() { return impl_->TakeOutgoing(); }
std::vector<std::string> GossipEngine::TakeDropped() { return impl_->TakeDropped(); }
void GossipEngine::WhoHas(std::string_view key_bytes, const KeyHash& hash, int64_t now_ms,
                          std::vector<PeerMatch>* out) const {
  impl_->WhoHas(key_bytes, hash, now_ms, out);
}
void GossipEngine::PrefetchWhoHas(const KeyHash& hash) const noexcept {
  impl_->PrefetchWhoHas(hash);
}
std::vector<PeerInfo> GossipEngine::Peers(int64_t now_ms) const { return impl_->Peers(now_ms); }
const GossipStats& GossipEngine::stats() const { return impl_->stats(); }
uint64_t GossipEngine::SupersededEpoch() const { return impl_->SupersededEpoch(); }
Status GossipEngine::GetSummary(std::string_view node_id, Summary* out) const {
  return impl_->GetSummary(node_id, out);
}

bool GossipEngine::IsMember(std::string_view node_id) const { return impl_->IsMember(node_id); }

}  // namespace peerbloom
