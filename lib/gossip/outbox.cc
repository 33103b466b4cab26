// Frames out: header, encoding, per-endpoint byte caps, counters.
#include "lib/gossip/outbox.h"

#include <algorithm>
#include <utility>

namespace peerbloom {

Outbox::Outbox(const GossipOptions& options, const LocalNode& self, GossipStats* stats)
    : cluster_tag_(options.cluster_tag),
      node_id_(options.node_id),
      endpoint_(options.endpoint),
      public_key_(options.public_key),
      max_pending_bytes_(options.max_pending_bytes_per_endpoint),
      wire_version_(options.wire_version),
      probes_(options.failure_detector == FailureDetector::kProbe),
      self_(self),
      stats_(stats) {}

WireHeader Outbox::Header(bool chosen, bool contact) const {
  WireHeader h;
  h.version = wire_version_;
  if (chosen) h.flags |= kWireFlagNeighbour;
  if (probes_) h.flags |= kWireFlagProbes;
  h.cluster_tag = cluster_tag_;
  h.sender_id = node_id_;
  h.sender_epoch = self_.epoch();
  h.sender_heartbeat = self_.heartbeat();
  if (contact) {
    h.flags |= kWireFlagContact;
    h.sender_endpoint = endpoint_;
    h.sender_public_key = public_key_;
  }
  return h;
}

void Outbox::Send(const std::string& endpoint, const std::string& public_key, std::string payload,
                  WireType type) {
  size_t& pending = pending_bytes_[endpoint];
  if (pending + payload.size() > max_pending_bytes_) {
    ++stats_->queue_dropped;
    stats_->queue_dropped_bytes += payload.size();
    return;
  }
  pending += payload.size();
  ++stats_->messages_out;
  stats_->bytes_out += payload.size();
  if (type == WireType::kDigest) ++stats_->digests_out;
  if (type == WireType::kFullSummary) ++stats_->full_summaries_out;
  if (type == WireType::kDelta) ++stats_->deltas_out;
  outgoing_.push_back(Outgoing{endpoint, public_key, std::move(payload)});
}

void Outbox::SendDigest(const std::string& endpoint, const std::string& public_key, bool chosen,
                        const DigestBody& body) {
  std::string payload;
  if (!EncodeDigestFrame(Header(chosen, true), body, &payload).ok()) return;
  Send(endpoint, public_key, std::move(payload), WireType::kDigest);
}

void Outbox::SendSummaryBytes(const std::string& endpoint, const std::string& public_key,
                              bool chosen, WireType type, std::string_view codec_bytes,
                              std::string_view state_sig, std::string_view delta_sig) {
  std::string payload;
  // Deltas, the bulk of the traffic, leave the contact out: every link starts with a digest.
  const bool contact = type != WireType::kDelta;
  if (!EncodeSummaryFrame(Header(chosen, contact), type, codec_bytes, &payload, state_sig,
                          delta_sig)
           .ok()) {
    return;
  }
  Send(endpoint, public_key, std::move(payload), type);
}

void Outbox::SendRequests(const std::string& endpoint, const std::string& public_key,
                          const std::vector<FullRequest>& requests) {
  if (requests.empty() || endpoint.empty()) return;
  std::string payload;
  if (!EncodeRequestFullFrame(Header(false, true), requests, &payload).ok()) return;
  Send(endpoint, public_key, std::move(payload), WireType::kRequestFull);
}

bool Outbox::SendOrigins(const std::string& endpoint, const std::string& public_key, bool chosen,
                         WireType type, const std::vector<std::string>& origins) {
  std::string payload;
  if (!EncodeOriginsFrame(Header(chosen, false), type, origins, &payload).ok()) return false;
  Send(endpoint, public_key, std::move(payload), type);
  return true;
}

void Outbox::SendImports(const std::string& endpoint, const std::string& public_key, bool chosen,
                         const std::vector<ImportedDigestEntry>& entries) {
  std::string payload;
  if (!EncodeImportedDigestFrame(Header(chosen, true), entries, &payload).ok()) return;
  ++stats_->imports_out;
  Send(endpoint, public_key, std::move(payload), WireType::kImportedDigest);
}

void Outbox::SendProbe(const std::string& endpoint, const std::string& public_key, bool chosen,
                       const ProbeBody& body, bool contact) {
  std::string payload;
  if (!EncodeProbeFrame(Header(chosen, contact), body, &payload).ok()) return;
  Send(endpoint, public_key, std::move(payload), WireType::kProbe);
}

void Outbox::SendUnlink(const std::string& endpoint, const std::string& public_key) {
  WireHeader h = Header(false, false);
  h.flags |= kWireFlagUnlink;
  std::string payload;
  if (!EncodeDigestFrame(h, DigestBody(), &payload).ok()) return;
  Send(endpoint, public_key, std::move(payload), WireType::kDigest);
}

bool Outbox::QueueFull(const std::string& endpoint) const {
  auto it = pending_bytes_.find(endpoint);
  return it != pending_bytes_.end() && it->second >= max_pending_bytes_;
}

void Outbox::NoteDropped(const std::string& endpoint) {
  if (endpoint.empty()) return;
  if (std::find(dropped_.begin(), dropped_.end(), endpoint) == dropped_.end()) {
    dropped_.push_back(endpoint);
  }
}

std::vector<Outgoing> Outbox::TakeOutgoing() {
  pending_bytes_.clear();
  return std::exchange(outgoing_, {});
}

std::vector<std::string> Outbox::TakeDropped() { return std::exchange(dropped_, {}); }

}  // namespace peerbloom
