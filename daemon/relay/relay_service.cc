#include "daemon/relay/relay_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <random>

#include "daemon/relay/json_text.h"
#include "daemon/relay/relay_purge.h"
#include "daemon/relay/relay_seen_file.h"
#include "peerbloom/escape.h"
#include "peerbloom/wire.h"

namespace peerbloom::daemon {
namespace {

using Json = nlohmann::json;

// Announcement rounds and GRAFT timers count in ticks of this period (docs/relay.md).
constexpr int64_t kTickMs = 50;
// An idle relay (no rounds, no GRAFTs pending) only expires caches.
constexpr int64_t kIdleTickMs = 1000;
// How often the links' endpoints and liveness are read from membership.
constexpr int64_t kRefreshMs = 200;
// How often the loop looks for finished purge actions while any are under way.
constexpr int64_t kPurgeCheckMs = 10;

RelayOptions MakeOptions(const Config& config, const SipKey& key, uint64_t first_id) {
  RelayOptions o;
  o.node_id = config.node_id;
  o.key = key;
  o.hop_limit = config.relay_hop_limit;
  o.limits.max_payload_bytes = static_cast<size_t>(config.relay_max_payload_bytes);
  o.flow.max_per_window = config.relay_rate_limit;
  o.flow.window_ms = 1000;
  o.first_id = first_id;
  // The rate meter's counters are picked by a key no member knows: keyed by the cluster
  // secret, a member could choose origin names that share another origin's counters and
  // throttle that origin's broadcasts and purges.
  std::random_device rd;
  SipKey meter_key;
  for (uint8_t& b : meter_key) b = static_cast<uint8_t>(rd());
  o.meter_key = meter_key;
  return o;
}

}  // namespace

std::string_view RelayPayloadKindName(RelayPayloadKind kind) {
  switch (kind) {
    case RelayPayloadKind::kMessage:
      return "message";
    case RelayPayloadKind::kPurge:
      return "purge";
    case RelayPayloadKind::kPurgeResult:
      return "purge-result";
  }
  return "unknown";
}

RelayService::RelayService(const Config& config, const SipKey& index_key, uint64_t cluster_tag,
                           uint64_t first_id)
    : config_(config), cluster_tag_(cluster_tag) {
  RelayOptions o = MakeOptions(config, index_key, first_id);
  // The hooks read the keys SetOriginKeys installs.
  o.sign = [this](RelayData* data) {
    if (signer_ == nullptr) return Status::Ok();
    return SignRelayData(*signer_, cluster_tag_, data);
  };
  o.verify = [this](const RelayData& data) {
    if (sign_keys_ == nullptr) return !require_signatures_;
    const SigVerdict v = VerifyRelayData(*sign_keys_, cluster_tag_, data);
    if (v == SigVerdict::kValid) return true;
    if (v == SigVerdict::kNoKey && !require_signatures_) return true;
    spdlog::debug("relay message ({}, {}) refused: {}", EscapeBytes(data.origin), data.id,
                  SigVerdictName(v));
    return false;
  };
  node_ = std::make_unique<RelayNode>(o);
  node_->SetLinks(config.relay_links);
  for (const std::string& peer : config.relay_links) {
    links_[peer];
    node_->SetLinkUp(peer, false);
  }
}

Status ValidateRelayConfig(const Config& config) {
  RelayOptions o = MakeOptions(config, SipKey{}, 1);
  return ValidateRelayOptions(o);
}

bool RelayService::IsRelayFrame(std::string_view frame) {
  constexpr size_t kTypeAt = sizeof(kWireMagic) + 2;
  return frame.size() > kTypeAt &&
         static_cast<uint8_t>(frame[kTypeAt]) == static_cast<uint8_t>(WireType::kBroadcast);
}

void RelayService::SetOriginKeys(std::shared_ptr<const OriginSigner> signer,
                                 std::shared_ptr<const SignKeyRing> keys, bool require) {
  signer_ = std::move(signer);
  sign_keys_ = std::move(keys);
  require_signatures_ = require;
}

Status RelayService::OnFrame(std::string_view bytes, int64_t now_ms,
                             std::string_view link_node_id) {
  WireFrame frame;
  WireLimits limits;
  limits.max_frame_bytes = static_cast<size_t>(config_.max_message_bytes);
  Status s = DecodeFrame(bytes, limits, &frame);
  if (s.ok() && frame.header.cluster_tag != cluster_tag_) {
    s = Status::InvalidArgument("frame of another cluster (tag '" +
                                std::to_string(frame.header.cluster_tag) + "')");
  }
  if (s.ok() && frame.header.sender_id == config_.node_id) {
    s = Status::InvalidArgument("frame from this node itself");
  }
  if (!s.ok()) {
    ++frames_refused_;
    return s;
  }
  // A link speaks only for the node its CURVE key is bound to.
  if (!link_node_id.empty() && frame.header.sender_id != link_node_id) {
    ++sender_mismatch_;
    return Status::InvalidArgument("frame from '" + EscapeBytes(frame.header.sender_id) +
                                   "' on the link of '" + std::string(link_node_id) + "'");
  }
  node_->OnPacket(frame.header.sender_id, frame.relay_bytes, now_ms);
  TakeDeliveries();
  return Status::Ok();
}

void RelayService::RefreshLinks(const GossipEngine& engine, int64_t now_ms) {
  if (links_.empty()) return;
  std::map<std::string, LinkInfo> seen;
  for (const PeerInfo& p : engine.Peers(now_ms)) {
    auto it = links_.find(p.node_id);
    if (it == links_.end()) continue;
    seen[p.node_id] = {p.endpoint, p.public_key, p.alive && !p.endpoint.empty()};
  }
  for (auto& [peer, info] : links_) {
    LinkInfo fresh = seen.count(peer) ? seen[peer] : LinkInfo{};
    if (fresh.up != info.up) {
      node_->SetLinkUp(peer, fresh.up);
      spdlog::info("relay link '{}' {}", peer, fresh.up ? "up" : "down");
    }
    info = std::move(fresh);
  }
}

void RelayService::Poll(const GossipEngine& engine, Transport* transport, int64_t now_ms) {
  if (now_ms >= next_refresh_ms_) {
    next_refresh_ms_ = now_ms + kRefreshMs;
    RefreshLinks(engine, now_ms);
  }
  if (now_ms >= next_tick_ms_) {
    node_->OnTick(now_ms);
    next_tick_ms_ = now_ms + (node_->Idle() ? kIdleTickMs : kTickMs);
  }
  TakeDeliveries();
  // A purge's action runs only once its id is on disk, so that a replay after a restart is
  // stale. Saves for purges are at least kSeenGapMs apart: a purge flood costs the loop one
  // save per gap, not one per purge. A failed save (counted, logged) holds nothing back.
  if ((!purges_unsaved_.empty() && now_ms >= last_seen_save_ms_ + kSeenGapMs) ||
      (SeenUnsaved() && now_ms >= next_seen_save_ms_)) {
    (void)SaveSeen();
    last_seen_save_ms_ = now_ms;
    next_seen_save_ms_ = now_ms + kSeenSaveMs;
  }
  RunPurges(now_ms);
  Send(transport, now_ms);
}

bool RelayService::SeenUnsaved() const {
  return seen_dir_ != nullptr && node_->seen().changes() != seen_saved_changes_;
}

Status RelayService::KeepSeenIn(const DataDir* dir) {
  seen_dir_ = dir;
  std::string text;
  const Status read = dir->ReadFile(kRelaySeenFile, &text);
  if (read.code() == Status::Code::kNotFound) return Status::Ok();
  std::vector<SeenSet::SavedOrigin> saved;
  Status s = read.ok() ? DecodeRelaySeen(text, &saved) : read;
  if (!s.ok()) {
    return Status::Corruption("cannot restore the relay's seen messages from '" +
                              dir->PathOf(kRelaySeenFile) + "': " + s.message());
  }
  node_->RestoreSeen(saved);
  seen_saved_changes_ = node_->seen().changes();
  spdlog::info("relay: restored the seen messages of {} origins from '{}'", saved.size(),
               dir->PathOf(kRelaySeenFile));
  return Status::Ok();
}

Status RelayService::SaveSeen() {
  if (seen_dir_ == nullptr) return Status::Ok();
  const uint64_t changes = node_->seen().changes();
  const Status s = seen_dir_->WriteFile(kRelaySeenFile, EncodeRelaySeen(node_->seen().Save()));
  // Every purge delivered so far is covered by this save (or let through by its failure).
  for (RelayReceived& r : purges_unsaved_) purges_pending_.push_back(std::move(r));
  purges_unsaved_.clear();
  if (!s.ok()) {
    ++seen_save_errors_;
    spdlog::warn("relay: cannot save the seen messages: {}", s.message());
    return s;
  }
  ++seen_saves_;
  seen_saved_changes_ = changes;
  return Status::Ok();
}

// Checks new purges here and hands their actions to the runner; broadcasts the results of
// purges without an action at once, those of finished actions as they come.
void RelayService::RunPurges(int64_t now_ms) {
  std::vector<RelayReceived> purges;
  purges.swap(purges_pending_);
  for (const RelayReceived& purge : purges) {
    // A purge is bytes from another node: whatever its handling throws stays with it.
    Json result;
    try {
      result = purge_handler_(purge, now_ms);
    } catch (const std::exception& e) {
      ++purge_errors_;
      spdlog::error("purge {} of '{}': internal error: {}", purge.id, EscapeBytes(purge.origin),
                    EscapeBytes(e.what()));
      continue;
    }
    if (purge_runner_ && PurgeActionPending(result)) {
      if (purge_runner_->Submit({0, purge.origin, result})) continue;
      ++purge_actions_refused_;
      result["purged"] = false;
      result["error"] = "too many purges under way";
    }
    BroadcastPurgeResult(purge.origin, result, now_ms);
  }
  if (!purge_runner_) return;
  for (PurgeJob& job : purge_runner_->TakeDone()) {
    if (job.ticket == 0) {
      BroadcastPurgeResult(job.origin, job.result, now_ms);
      continue;
    }
    local_running_.erase(job.ticket);
    local_results_[job.ticket] = std::move(job.result);
    if (local_results_.size() > kMaxLocalResults) local_results_.erase(local_results_.begin());
  }
}

// The result is delivered here too (a purge-result, never a purge: no further work).
void RelayService::BroadcastPurgeResult(const std::string& origin, const Json& result,
                                        int64_t now_ms) {
  if (config_.relay_rate_limit != 0) {
    const int64_t second = now_ms / 1000;
    if (second != results_second_) {
      results_second_ = second;
      results_this_second_.clear();
    }
    const uint32_t share = std::max<uint32_t>(1, config_.relay_rate_limit / kResultShare);
    uint32_t& sent = results_this_second_[origin];
    if (sent >= share) {
      if (purge_results_dropped_++ % 1000 == 0) {
        spdlog::warn("purge results for origin '{}' over {} a second: not broadcast ({} so far)",
                     EscapeBytes(origin), share, purge_results_dropped_);
      }
      return;
    }
    ++sent;
  }
  uint64_t id = 0;
  const Status s = Broadcast(RelayPayloadKind::kPurgeResult, JsonText(result), now_ms, &id);
  if (!s.ok()) spdlog::warn("cannot broadcast the purge result: {}", s.message());
}

Status RelayService::StartLocalPurge(Json checked, uint64_t* ticket) {
  if (!purge_runner_ || !purge_runner_->Submit({next_ticket_, "", std::move(checked)})) {
    ++purge_actions_refused_;
    return Status::ResourceExhausted("too many purges under way");
  }
  *ticket = next_ticket_++;
  local_running_.insert(*ticket);
  return Status::Ok();
}

Status RelayService::LocalPurgeResult(uint64_t ticket, bool* done, Json* result) {
  *done = false;
  if (local_running_.contains(ticket)) return Status::Ok();
  const auto it = local_results_.find(ticket);
  if (it == local_results_.end()) {
    return Status::NotFound("no purge job '" + std::to_string(ticket) + "'");
  }
  *done = true;
  *result = std::move(it->second);
  local_results_.erase(it);
  return Status::Ok();
}

int64_t RelayService::NextDeadline(int64_t now_ms) const {
  int64_t deadline = std::min(next_tick_ms_, next_refresh_ms_);
  if (!purges_pending_.empty()) deadline = now_ms;
  if (!purges_unsaved_.empty()) {
    deadline = std::min(deadline, std::max(now_ms, last_seen_save_ms_ + kSeenGapMs));
  }
  // The runner does not wake the loop: look for finished actions now and then.
  if (purge_runner_ && purge_runner_->pending() > 0) {
    deadline = std::min(deadline, now_ms + kPurgeCheckMs);
  }
  return deadline;
}

void RelayService::Send(Transport* transport, int64_t now_ms) {
  WireHeader header;
  header.cluster_tag = cluster_tag_;
  header.sender_id = config_.node_id;
  for (RelaySend& send : node_->TakeSends()) {
    auto it = links_.find(send.to);
    if (it == links_.end() || it->second.endpoint.empty()) {
      ++sent_no_endpoint_;
      continue;
    }
    Outgoing out;
    out.endpoint = it->second.endpoint;
    out.public_key = it->second.public_key;
    Status s = EncodeBroadcastFrame(header, send.packet, &out.payload);
    if (!s.ok()) {
      spdlog::error("cannot frame a relay packet: {}", s.message());
      continue;
    }
    transport->Send(out, now_ms);
  }
}

void RelayService::TakeDeliveries() {
  for (RelayDelivery& d : node_->TakeDeliveries()) {
    RelayReceived r;
    r.seq = next_seq_++;
    r.origin = std::move(d.origin);
    r.id = d.id;
    r.hops = d.hops;
    if (d.payload.empty() || static_cast<uint8_t>(d.payload[0]) > 2) {
      ++frames_refused_;  // not a payload this version knows: delivered, kept as a message
      r.body = std::move(d.payload);
    } else {
      r.kind = static_cast<RelayPayloadKind>(d.payload[0]);
      r.body = d.payload.substr(1);
    }
    if (r.kind == RelayPayloadKind::kPurge) {
      ++purges_;
      if (purge_handler_) (seen_dir_ != nullptr ? purges_unsaved_ : purges_pending_).push_back(r);
    }
    kept_bytes_ += r.body.size();
    kept_.push_back(std::move(r));
    while (kept_.size() > kMaxKept || (kept_bytes_ > kMaxKeptBytes && kept_.size() > 1)) {
      kept_bytes_ -= kept_.front().body.size();
      kept_.pop_front();
      ++listen_dropped_;
    }
  }
}

Status RelayService::Broadcast(RelayPayloadKind kind, std::string_view body, int64_t now_ms,
                               uint64_t* id) {
  std::string payload(1, static_cast<char>(kind));
  payload.append(body);
  Status s = node_->Broadcast(payload, static_cast<uint64_t>(now_ms), id);
  if (!s.ok()) {
    ++broadcasts_refused_;
    return s;
  }
  ++broadcasts_;
  TakeDeliveries();
  // Ticks soon: the new message's announcement rounds start.
  next_tick_ms_ = std::min(next_tick_ms_, now_ms + kTickMs);
  return Status::Ok();
}

std::vector<const RelayReceived*> RelayService::After(uint64_t after, size_t max,
                                                      uint64_t* missed) const {
  std::vector<const RelayReceived*> out;
  *missed = 0;
  if (kept_.empty()) return out;
  const uint64_t first = kept_.front().seq;
  if (after + 1 < first) *missed = first - after - 1;
  const size_t start = after < first ? 0 : static_cast<size_t>(after - first + 1);
  for (size_t i = start; i < kept_.size() && out.size() < max; ++i) out.push_back(&kept_[i]);
  return out;
}

Json RelayService::Stats() const {
  size_t up = 0;
  for (const auto& [peer, info] : links_) up += info.up ? 1 : 0;
  Json links = Json::array();
  for (const auto& [peer, info] : links_) links.push_back(peer);
  return {{"links", links},
          {"links_up", up},
          {"eager_links", node_->EagerLinks()},
          {"broadcasts", broadcasts_},
          {"broadcasts_refused", broadcasts_refused_},
          {"malformed", node_->stats().malformed + frames_refused_},
          {"no_endpoint", sent_no_endpoint_},
          {"sender_mismatch", sender_mismatch_},
          {"purges", purges_},
          {"purge_actions_pending", purge_runner_ ? purge_runner_->pending() : 0},
          {"purge_actions_refused", purge_actions_refused_},
          {"purge_errors", purge_errors_},
          {"purge_results_dropped", purge_results_dropped_},
          {"listen_dropped", listen_dropped_},
          {"seen_saves", seen_saves_},
          {"seen_save_errors", seen_save_errors_}};
}

}  // namespace peerbloom::daemon
