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
      interval_ms_(options.gossip_interval_ms),
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

void Outbox::SetChosenLookup(std::function<bool(const std::string& endpoint)> chosen) {
  chosen_ = std::move(chosen);
}

void Outbox::SetPushLookup(std::function<bool(const std::string& endpoint)> pushes) {
  pushes_ = std::move(pushes);
}

WireHeader Outbox::HeaderTo(const std::string& endpoint, bool chosen, bool contact) const {
  if (!chosen_) return Header(chosen, contact);
  WireHeader h = Header(chosen_(endpoint), contact);
  if ((h.flags & kWireFlagNeighbour) == 0) h.flags |= kWireFlagUnlink;
  // A reader of version 5 or older skips it (a flag of a newer frame it does not know).
  if (wire_version_ >= 6 && pushes_ && !pushes_(endpoint)) h.flags |= kWireFlagNoPush;
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
  if (!EncodeDigestFrame(HeaderTo(endpoint, chosen, true), body, &payload).ok()) return;
  Send(endpoint, public_key, std::move(payload), WireType::kDigest);
}

void Outbox::SendSummaryBytes(const std::string& endpoint, const std::string& public_key,
                              bool chosen, WireType type, std::string_view codec_bytes,
                              std::string_view state_sig, std::string_view delta_sig) {
  std::string payload;
  // Deltas, the bulk of the traffic, leave the contact out: every link starts with a digest.
  const bool contact = type != WireType::kDelta;
  Stream* stream = StreamTo(endpoint);
  const uint64_t seq = stream != nullptr ? stream->next_seq : 0;
  if (!EncodeSummaryFrame(HeaderTo(endpoint, chosen, contact), type, codec_bytes, &payload,
                          state_sig, delta_sig, seq)
           .ok()) {
    return;
  }
  Keep(stream, seq, type, payload);
  Send(endpoint, public_key, std::move(payload), type);
}

Outbox::Stream* Outbox::StreamTo(const std::string& endpoint) {
  return wire_version_ >= 5 && !endpoint.empty() ? &streams_[endpoint] : nullptr;
}

void Outbox::SendResend(const std::string& endpoint, const std::string& public_key,
                        const std::vector<uint64_t>& seqs) {
  std::string payload;
  if (!EncodeResendFrame(HeaderTo(endpoint, false, false), seqs, &payload).ok()) return;
  ++stats_->resends_asked;
  NoteLoss();
  Send(endpoint, public_key, std::move(payload), WireType::kResend);
}

void Outbox::Keep(Stream* stream, uint64_t seq, WireType type, const std::string& payload) {
  if (stream == nullptr) return;
  ++stream->next_seq;
  stream->last_ms = Now();
  stream->marks = 0;
  next_mark_ms_ = std::min(next_mark_ms_, MarkDueMs(*stream));
  if (payload.size() > kKeptBytes) return;  // a gap the receiver repairs otherwise
  stream->kept.push_back(Kept{seq, type, payload, stream->last_ms});
  stream->kept_bytes += payload.size();
  const int64_t kept_since = stream->last_ms - kKeptIntervals * interval_ms_;
  while ((stream->kept.size() > kKeptFrames && stream->kept.front().sent_ms < kept_since) ||
         stream->kept_bytes > kKeptBytes) {
    stream->kept_bytes -= stream->kept.front().payload.size();
    stream->kept.pop_front();
  }
}

size_t Outbox::Resend(const std::string& endpoint, const std::string& public_key,
                      const std::vector<uint64_t>& seqs) {
  auto it = streams_.find(endpoint);
  if (it == streams_.end()) return 0;
  NoteLoss();
  const std::deque<Kept>& kept = it->second.kept;
  size_t sent = 0;
  for (uint64_t seq : seqs) {
    auto at = std::lower_bound(kept.begin(), kept.end(), seq,
                               [](const Kept& k, uint64_t s) { return k.seq < s; });
    if (at == kept.end() || at->seq != seq) continue;
    if (QueueFull(endpoint)) break;
    Send(endpoint, public_key, at->payload, at->type);
    ++sent;
  }
  stats_->frames_resent += sent;
  return sent;
}

int64_t Outbox::MarkDueMs(const Stream& stream) const {
  return stream.marks >= kTailMarks ? INT64_MAX
                                    : stream.last_ms + (interval_ms_ / 4 << stream.marks);
}

void Outbox::MarkTails(const std::vector<LinkTarget>& targets) {
  const int64_t now = Now();
  next_mark_ms_ = INT64_MAX;
  for (const LinkTarget& t : targets) {
    auto it = streams_.find(t.endpoint);
    if (it == streams_.end()) continue;
    Stream& stream = it->second;
    if (now < MarkDueMs(stream)) {
      next_mark_ms_ = std::min(next_mark_ms_, MarkDueMs(stream));
      continue;
    }
    const int marks = stream.marks + 1;
    if (SendOrigins(t.endpoint, t.public_key, t.chosen, WireType::kPrune, {})) ++stats_->tail_marks;
    stream.marks = marks;  // the mark itself, kept as a frame, reset the count
    next_mark_ms_ = std::min(next_mark_ms_, MarkDueMs(stream));
  }
  // Streams to endpoints that are not links are not marked, and not waited on.
  for (auto& [endpoint, stream] : streams_) {
    if (now >= MarkDueMs(stream)) stream.marks = kTailMarks;
  }
}

void Outbox::SendRequests(const std::string& endpoint, const std::string& public_key,
                          const std::vector<FullRequest>& requests) {
  if (requests.empty() || endpoint.empty()) return;
  std::string payload;
  if (!EncodeRequestFullFrame(HeaderTo(endpoint, false, true), requests, &payload).ok()) return;
  Send(endpoint, public_key, std::move(payload), WireType::kRequestFull);
}

bool Outbox::SendOrigins(const std::string& endpoint, const std::string& public_key, bool chosen,
                         WireType type, const std::vector<std::string>& origins) {
  std::string payload;
  Stream* stream = StreamTo(endpoint);
  const uint64_t seq = stream != nullptr ? stream->next_seq : 0;
  if (!EncodeOriginsFrame(HeaderTo(endpoint, chosen, false), type, origins, &payload, seq).ok())
    return false;
  Keep(stream, seq, type, payload);
  Send(endpoint, public_key, std::move(payload), type);
  return true;
}

void Outbox::SendImports(const std::string& endpoint, const std::string& public_key, bool chosen,
                         const std::vector<ImportedDigestEntry>& entries) {
  std::string payload;
  if (!EncodeImportedDigestFrame(HeaderTo(endpoint, chosen, true), entries, &payload).ok()) return;
  ++stats_->imports_out;
  Send(endpoint, public_key, std::move(payload), WireType::kImportedDigest);
}

void Outbox::SendProbe(const std::string& endpoint, const std::string& public_key, bool chosen,
                       const ProbeBody& body, bool contact) {
  std::string payload;
  if (!EncodeProbeFrame(HeaderTo(endpoint, chosen, contact), body, &payload).ok()) return;
  Send(endpoint, public_key, std::move(payload), WireType::kProbe);
}

void Outbox::SendEmptyDigest(const std::string& endpoint, const std::string& public_key,
                             const WireHeader& h) {
  std::string payload;
  if (!EncodeDigestFrame(h, DigestBody(), &payload).ok()) return;
  Send(endpoint, public_key, std::move(payload), WireType::kDigest);
}

void Outbox::SendUnlink(const std::string& endpoint, const std::string& public_key) {
  WireHeader h = Header(false, false);
  h.flags |= kWireFlagUnlink;
  SendEmptyDigest(endpoint, public_key, h);
}

void Outbox::SendLinkState(const std::string& endpoint, const std::string& public_key) {
  SendEmptyDigest(endpoint, public_key, HeaderTo(endpoint, false, false));
}

bool Outbox::QueueFull(const std::string& endpoint) const {
  auto it = pending_bytes_.find(endpoint);
  return it != pending_bytes_.end() && it->second >= max_pending_bytes_;
}

void Outbox::NoteDropped(const std::string& endpoint) {
  if (endpoint.empty()) return;
  auto stream = streams_.find(endpoint);
  if (stream != streams_.end()) {
    stream->second.kept.clear();
    stream->second.kept_bytes = 0;
  }
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
