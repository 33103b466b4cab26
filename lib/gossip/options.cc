// Validation of GossipOptions.
#include <algorithm>
#include <string>

#include "lib/gossip/engine.h"
#include "peerbloom/gossip.h"

namespace peerbloom {
namespace {

Status NonPositive(std::string_view field, int64_t value) {
  return Status::InvalidArgument("gossip option '" + std::string(field) +
                                 "' must be positive, not '" + std::to_string(value) + "'");
}

Status ValidateIdentity(const GossipOptions& o) {
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
  return Status::Ok();
}

Status ValidateTimes(const GossipOptions& o) {
  if (o.gossip_interval_ms <= 0) return NonPositive("gossip_interval_ms", o.gossip_interval_ms);
  if (o.failure_timeout_ms <= 0) return NonPositive("failure_timeout_ms", o.failure_timeout_ms);
  if (o.anti_entropy_interval_ms <= 0) {
    return NonPositive("anti_entropy_interval_ms", o.anti_entropy_interval_ms);
  }
  if (o.neighbour_shuffle_ms <= 0) {
    return NonPositive("neighbour_shuffle_ms", o.neighbour_shuffle_ms);
  }
  if (o.probe_interval_ms < 0 || o.suspicion_timeout_ms < 0) {
    return Status::InvalidArgument(
        "gossip options 'probe_interval_ms' and 'suspicion_timeout_ms' must not be negative");
  }
  if (o.forget_dead_after_ms < 0) {
    return Status::InvalidArgument("gossip option 'forget_dead_after_ms' must not be negative");
  }
  const int64_t hb = EffectiveHeartbeatMs(o);
  if (hb <= 0 || hb * 2 >= o.failure_timeout_ms) {
    return Status::InvalidArgument("heartbeat interval '" + std::to_string(hb) +
                                   "' must be positive and below half the failure timeout '" +
                                   std::to_string(o.failure_timeout_ms) + "'");
  }
  return Status::Ok();
}

}  // namespace

int64_t EffectiveHeartbeatMs(const GossipOptions& o) {
  return o.heartbeat_interval_ms > 0 ? o.heartbeat_interval_ms : o.failure_timeout_ms / 4;
}

int64_t ProbeIntervalMs(const GossipOptions& o) noexcept {
  return o.probe_interval_ms > 0 ? o.probe_interval_ms : 2 * o.gossip_interval_ms;
}

int64_t SuspicionTimeoutMs(const GossipOptions& o) noexcept {
  if (o.suspicion_timeout_ms > 0) return o.suspicion_timeout_ms;
  const int64_t probe = ProbeIntervalMs(o);
  return std::max(probe, o.failure_timeout_ms - 5 * probe / 2);
}

Status ValidateGossipOptions(const GossipOptions& o) {
  PEERBLOOM_RETURN_IF_ERROR(ValidateIdentity(o));
  PEERBLOOM_RETURN_IF_ERROR(ValidateTimes(o));
  if (o.max_members == 0 || o.max_members + 1 > o.wire_limits.max_entries) {
    return Status::InvalidArgument("gossip option 'max_members' must be in [1, " +
                                   std::to_string(o.wire_limits.max_entries - 1) + "]");
  }
  if (o.wire_version < 3 || o.wire_version > kWireVersion ||
      (o.wire_version < 4 && o.failure_detector == FailureDetector::kProbe)) {
    return Status::InvalidArgument(
        "gossip option 'wire_version' must be 3 (heartbeats only) or 4 to " +
        std::to_string(kWireVersion));
  }
  if (o.require_signatures && o.signer == nullptr) {
    return Status::InvalidArgument("gossip option 'require_signatures' needs a signer");
  }
  return Status::Ok();
}

}  // namespace peerbloom
