// Public entry points of GossipEngine and the validation of its options.
#include <string>
#include <utility>

#include "lib/gossip/engine.h"
#include "peerbloom/gossip.h"

namespace peerbloom {
namespace {

Status NonPositive(std::string_view field, int64_t value) {
  return Status::InvalidArgument("gossip option '" + std::string(field) +
                                 "' must be positive, not '" + std::to_string(value) + "'");
}

int64_t EffectiveHeartbeat(const GossipOptions& o) {
  return o.heartbeat_interval_ms > 0 ? o.heartbeat_interval_ms : o.failure_timeout_ms / 4;
}

}  // namespace

Status ValidateGossipOptions(const GossipOptions& o) {
  if (!IsValidNodeId(o.node_id)) {
    return Status::InvalidArgument("invalid node id '" + o.node_id + "'");
  }
  if (!IsValidEndpoint(o.endpoint)) {
    return Status::InvalidArgument("invalid advertised endpoint '" + o.endpoint + "'");
  }
  if (!IsValidPublicKey(o.public_key)) {
    return Status::InvalidArgument("invalid public key of node '" + o.node_id + "'");
  }
  for (const Seed& s : o.seeds) {
    if (!IsValidEndpoint(s.endpoint) || !IsValidPublicKey(s.public_key)) {
      return Status::InvalidArgument("invalid seed '" + s.endpoint + "'");
    }
  }
  if (o.gossip_interval_ms <= 0) return NonPositive("gossip_interval_ms", o.gossip_interval_ms);
  if (o.failure_timeout_ms <= 0) return NonPositive("failure_timeout_ms", o.failure_timeout_ms);
  if (o.anti_entropy_interval_ms <= 0) {
    return NonPositive("anti_entropy_interval_ms", o.anti_entropy_interval_ms);
  }
  if (o.neighbour_shuffle_ms <= 0) {
    return NonPositive("neighbour_shuffle_ms", o.neighbour_shuffle_ms);
  }
  if (o.forget_dead_after_ms < 0) {
    return Status::InvalidArgument("gossip option 'forget_dead_after_ms' must not be negative");
  }
  const int64_t hb = EffectiveHeartbeat(o);
  if (hb <= 0 || hb * 2 >= o.failure_timeout_ms) {
    return Status::InvalidArgument("heartbeat interval '" + std::to_string(hb) +
                                   "' must be positive and below half the failure timeout '" +
                                   std::to_string(o.failure_timeout_ms) + "'");
  }
  if (o.max_members == 0 || o.max_members + 1 > o.wire_limits.max_entries) {
    return Status::InvalidArgument("gossip option 'max_members' must be in [1, " +
                                   std::to_string(o.wire_limits.max_entries - 1) + "]");
  }
  return Status::Ok();
}

GossipEngine::Impl::Impl(GossipOptions options)
    : opt_(std::move(options)), heartbeat_interval_ms_(EffectiveHeartbeat(opt_)) {
  // Distinct nodes given the same seed still choose differently.
  const uint64_t id_mix =
      SipHash64(1, 3, DeriveIndexKey("gossip rng"), opt_.node_id.data(), opt_.node_id.size());
  rng_.seed(opt_.rng_seed ^ id_mix);
  rank_key_ = DeriveIndexKey("link rank " + opt_.node_id);
  own_.origin = opt_.node_id;
  own_.key_scheme = opt_.key_scheme;
  SetSeeds(opt_.seeds, 0);
}

GossipEngine::GossipEngine(GossipOptions options) : impl_(new Impl(std::move(options))) {}
GossipEngine::~GossipEngine() { delete impl_; }

void GossipEngine::PublishFull(const Summary& summary, int64_t now_ms) {
  impl_->PublishFull(summary, now_ms);
}
void GossipEngine::PublishDelta(const SummaryDelta& delta, int64_t now_ms) {
  impl_->PublishDelta(delta, now_ms);
}
void GossipEngine::FlushNow(int64_t now_ms) { impl_->FlushNow(now_ms); }
Status GossipEngine::ImportDigest(const DigestImport& import, int64_t now_ms) {
  return impl_->ImportDigest(import, now_ms);
}
void GossipEngine::ForgetImport(std::string_view source, int64_t now_ms) {
  impl_->ForgetImport(source, now_ms);
}
Status GossipEngine::OnMessage(std::string_view payload, int64_t now_ms) {
  return impl_->OnMessage(payload, now_ms);
}
void GossipEngine::OnTick(int64_t now_ms) { impl_->OnTick(now_ms); }
int64_t GossipEngine::NextDeadline() const { return impl_->NextDeadline(); }
void GossipEngine::SetSeeds(std::vector<Seed> seeds, int64_t now_ms) {
  impl_->SetSeeds(std::move(seeds), now_ms);
}
std::vector<Outgoing> GossipEngine::TakeOutgoing() { return impl_->TakeOutgoing(); }
std::vector<std::string> GossipEngine::TakeDropped() { return impl_->TakeDropped(); }
void GossipEngine::WhoHas(std::string_view key_bytes, const KeyHash& hash, int64_t now_ms,
                          std::vector<PeerMatch>* out) const {
  impl_->WhoHas(key_bytes, hash, now_ms, out);
}
std::vector<PeerInfo> GossipEngine::Peers(int64_t now_ms) const { return impl_->Peers(now_ms); }
const GossipStats& GossipEngine::stats() const { return impl_->stats(); }
Status GossipEngine::GetSummary(std::string_view node_id, Summary* out) const {
  return impl_->GetSummary(node_id, out);
}

}  // namespace peerbloom
