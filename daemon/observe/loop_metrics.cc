// Frame peeking for the traffic counters: only the fixed header bytes (docs/wire-protocol.md,
// "Header"), each offset checked against the frame's length, since a refused frame is
// counted too.
#include "daemon/observe/loop_metrics.h"

#include <algorithm>
#include <cstring>

#include "peerbloom/wire.h"

namespace peerbloom::daemon {
namespace {

constexpr size_t kTypeOffset = 6;
constexpr size_t kSenderOffset = 16;  // str8: the length byte, then the id

// Bounds the traffic maps' keys to members: out_by_endpoint_ grows only for endpoints the
// engine sends to, which it learned from members; one more guard in case of churn.
constexpr size_t kMaxTrackedPeers = 4096;

bool HasMagic(std::string_view frame) {
  return frame.size() > kSenderOffset && std::memcmp(frame.data(), kWireMagic, 4) == 0;
}

void AddBounded(std::map<std::string, Traffic>* m, std::string_view key, size_t bytes) {
  auto it = m->find(std::string(key));
  if (it == m->end()) {
    if (m->size() >= kMaxTrackedPeers) return;
    it = m->emplace(std::string(key), Traffic{}).first;
  }
  it->second.Add(bytes);
}

}  // namespace

void LatencyHistogram::Observe(double seconds) {
  const auto at = std::lower_bound(kBounds.begin(), kBounds.end(), seconds);
  if (at != kBounds.end()) ++buckets[static_cast<size_t>(at - kBounds.begin())];
  ++count;
  sum += seconds;
}

std::string_view FrameTypeName(std::string_view frame) {
  if (!HasMagic(frame)) return "unknown";
  const auto type = static_cast<uint8_t>(frame[kTypeOffset]);
  if (type < static_cast<uint8_t>(WireType::kDigest) ||
      type > static_cast<uint8_t>(WireType::kResend)) {
    return "unknown";
  }
  return WireTypeName(static_cast<WireType>(type));
}

std::string_view FrameSender(std::string_view frame) {
  if (!HasMagic(frame)) return {};
  const size_t n = static_cast<uint8_t>(frame[kSenderOffset]);
  if (frame.size() < kSenderOffset + 1 + n) return {};
  return frame.substr(kSenderOffset + 1, n);
}

std::string StatusReason(const Status& s) {
  std::string text = s.ToString();
  text = text.substr(0, text.find(':'));
  std::replace(text.begin(), text.end(), ' ', '_');
  return text;
}

void LoopMetrics::CountIn(std::string_view frame, const Status& handled) {
  const std::string type(FrameTypeName(frame));
  in_by_type_[type].Add(frame.size());
  if (!handled.ok()) {
    ++refused_[StatusReason(handled)];
    return;
  }
  const std::string_view sender = FrameSender(frame);
  if (!sender.empty()) AddBounded(&in_by_peer_, sender, frame.size());
}

void LoopMetrics::CountOut(const std::string& endpoint, std::string_view frame) {
  out_by_type_[std::string(FrameTypeName(frame))].Add(frame.size());
  AddBounded(&out_by_endpoint_, endpoint, frame.size());
}

void LoopMetrics::ObserveWhoHas(double seconds, uint64_t keys) {
  who_has_.Observe(seconds);
  who_has_keys_ += keys;
}

}  // namespace peerbloom::daemon
