// Frames out. Each endpoint may have at most max_pending_bytes_per_endpoint queued between
// TakeOutgoing() calls; a frame that does not fit is dropped and counted. Nothing is lost for
// good: a dropped delta shows as a gap at the receiver (which asks for a full summary), a
// dropped digest or full summary is repaired by the next anti-entropy exchange.
#include <algorithm>
#include <utility>

#include "lib/gossip/engine.h"

namespace peerbloom {

WireHeader GossipEngine::Impl::Header(bool chosen, bool contact) const {
  WireHeader h;
  if (chosen) h.flags |= kWireFlagNeighbour;
  h.cluster_tag = opt_.cluster_tag;
  h.sender_id = opt_.node_id;
  h.sender_epoch = own_.epoch;
  h.sender_heartbeat = heartbeat_;
  if (contact) {
    h.flags |= kWireFlagContact;
    h.sender_endpoint = opt_.endpoint;
    h.sender_public_key = opt_.public_key;
  }
  return h;
}

void GossipEngine::Impl::Send(const std::string& endpoint, const std::string& public_key,
                              std::string payload, WireType type) {
  size_t& pending = pending_bytes_[endpoint];
  if (pending + payload.size() > opt_.max_pending_bytes_per_endpoint) {
    ++stats_.queue_dropped;
    stats_.queue_dropped_bytes += payload.size();
    return;
  }
  pending += payload.size();
  ++stats_.messages_out;
  stats_.bytes_out += payload.size();
  switch (type) {
    case WireType::kDigest:
      ++stats_.digests_out;
      break;
    case WireType::kFullSummary:
      ++stats_.full_summaries_out;
      break;
    case WireType::kDelta:
      ++stats_.deltas_out;
      break;
    default:
      break;
  }
  outgoing_.push_back(Outgoing{endpoint, public_key, std::move(payload)});
}

void GossipEngine::Impl::SendDigest(const std::string& endpoint, const std::string& public_key,
                                    bool chosen, const DigestBody& body) {
  std::string payload;
  if (!EncodeDigestFrame(Header(chosen, true), body, &payload).ok()) return;
  Send(endpoint, public_key, std::move(payload), WireType::kDigest);
}

void GossipEngine::Impl::SendSummaryBytes(const std::string& endpoint,
                                          const std::string& public_key, bool chosen, WireType type,
                                          std::string_view codec_bytes) {
  std::string payload;
  // Deltas, the bulk of the traffic, leave the contact out: every link starts with a digest.
  const bool contact = type != WireType::kDelta;
  if (!EncodeSummaryFrame(Header(chosen, contact), type, codec_bytes, &payload).ok()) {
    return;
  }
  Send(endpoint, public_key, std::move(payload), type);
}

void GossipEngine::Impl::SendRequests(const Member& sender,
                                      const std::vector<FullRequest>& requests) {
  if (requests.empty() || sender.endpoint.empty()) return;
  std::string payload;
  if (!EncodeRequestFullFrame(Header(false, true), requests, &payload).ok()) {
    return;
  }
  Send(sender.endpoint, sender.public_key, std::move(payload), WireType::kRequestFull);
}

// Prunes noted while handling frames go out once per round, one frame per link.
void GossipEngine::Impl::SendPrunes() {
  for (auto& [id, m] : members_) {
    if (m.prune_pending.empty()) continue;
    std::string payload;
    if (!m.endpoint.empty() &&
        EncodeOriginsFrame(Header(false, false), WireType::kPrune, m.prune_pending, &payload)
            .ok()) {
      ++stats_.prunes;
      Send(m.endpoint, m.public_key, std::move(payload), WireType::kPrune);
    }
    m.prune_pending.clear();
  }
}

bool GossipEngine::Impl::EncodeHeld(const std::string& origin, std::string* codec_bytes) {
  if (origin == opt_.node_id) {
    if (!has_own_) return false;
    if (own_encoded_.empty() && !EncodeSummary(own_, &own_encoded_).ok()) return false;
    *codec_bytes = own_encoded_;
    return true;
  }
  Member* m = Find(origin);
  if (m == nullptr || !m->HoldsCurrent()) return false;  // stand-ins are never served
  if (m->encoded_full.empty()) {
    Summary s;
    if (!GetSummary(origin, &s).ok() || !EncodeSummary(s, codec_bytes).ok()) return false;
    SetEncoded(m, *codec_bytes);
    return true;
  }
  *codec_bytes = m->encoded_full;
  return true;
}

void GossipEngine::Impl::SetEncoded(Member* m, std::string_view bytes) {
  ClearEncoded(m);
  if (encoded_bytes_ + bytes.size() > opt_.encoded_cache_bytes) return;
  m->encoded_full.assign(bytes);
  encoded_bytes_ += bytes.size();
}

void GossipEngine::Impl::ClearEncoded(Member* m) {
  encoded_bytes_ -= m->encoded_full.size();
  m->encoded_full.clear();
  m->encoded_full.shrink_to_fit();
}

bool GossipEngine::Impl::QueueFull(const std::string& endpoint) const {
  auto it = pending_bytes_.find(endpoint);
  return it != pending_bytes_.end() && it->second >= opt_.max_pending_bytes_per_endpoint;
}

void GossipEngine::Impl::NoteDropped(const std::string& endpoint) {
  if (endpoint.empty()) return;
  if (std::find(dropped_.begin(), dropped_.end(), endpoint) == dropped_.end()) {
    dropped_.push_back(endpoint);
  }
}

std::vector<Outgoing> GossipEngine::Impl::TakeOutgoing() {
  pending_bytes_.clear();
  return std::exchange(outgoing_, {});
}

std::vector<std::string> GossipEngine::Impl::TakeDropped() { return std::exchange(dropped_, {}); }

}  // namespace peerbloom
