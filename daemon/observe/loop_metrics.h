// LoopMetrics: the counters only the event loop can take, for /metrics (docs/operations.md,
// "Metrics"): gossip traffic by message type and by peer, frames refused by reason, and the
// who-has latency histogram. The other metrics read counters the parts already keep.
//
// Label values are bounded sets: message types are the frozen wire types plus "unknown";
// peers are counted only for frames the gossip engine accepted (members, at most
// max_members) or sent to a member's endpoint; reasons are Status kinds.
//
// Thread-safety: none (the loop's thread). The metrics server never reads it: the loop
// renders the text and hands it over (metrics_server.h).
#ifndef PEERBLOOM_DAEMON_OBSERVE_LOOP_METRICS_H_
#define PEERBLOOM_DAEMON_OBSERVE_LOOP_METRICS_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "peerbloom/status.h"

namespace peerbloom::daemon {

struct Traffic {
  uint64_t messages = 0;
  uint64_t bytes = 0;
  void Add(size_t n) {
    ++messages;
    bytes += n;
  }
};

// A Prometheus histogram with fixed bounds, in seconds.
struct LatencyHistogram {
  // 10 us .. 1 s: a who-has of one key takes microseconds, a batch of 100k keys tens of ms.
  static constexpr std::array<double, 12> kBounds = {1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4,
                                                     1e-3, 2.5e-3, 1e-2, 5e-2, 0.25,   1.0};
  std::array<uint64_t, kBounds.size()> buckets{};  // per bucket, not cumulative
  uint64_t count = 0;
  double sum = 0.0;
  void Observe(double seconds);
};

// The wire type of a frame by its header byte ("unknown" for a frame too short, without the
// magic, or with an unassigned type), and the sender id of a frame the engine accepted.
std::string_view FrameTypeName(std::string_view frame);
std::string_view FrameSender(std::string_view frame);
// "corruption", "not_supported", ...: the kind of a refusal, as a label value.
std::string StatusReason(const Status& s);

class LoopMetrics {
 public:
  // A frame received, and what the gossip engine made of it.
  void CountIn(std::string_view frame, const Status& handled);
  // A frame handed to the transport for `endpoint`.
  void CountOut(const std::string& endpoint, std::string_view frame);
  void ObserveWhoHas(double seconds, uint64_t keys);

  const std::map<std::string, Traffic>& in_by_type() const { return in_by_type_; }
  const std::map<std::string, Traffic>& out_by_type() const { return out_by_type_; }
  const std::map<std::string, Traffic>& in_by_peer() const { return in_by_peer_; }
  const std::map<std::string, Traffic>& out_by_endpoint() const { return out_by_endpoint_; }
  const std::map<std::string, uint64_t>& refused_by_reason() const { return refused_; }
  const LatencyHistogram& who_has_seconds() const { return who_has_; }
  uint64_t who_has_keys() const { return who_has_keys_; }

 private:
  std::map<std::string, Traffic> in_by_type_;
  std::map<std::string, Traffic> out_by_type_;
  std::map<std::string, Traffic> in_by_peer_;       // node id -> traffic
  std::map<std::string, Traffic> out_by_endpoint_;  // endpoint -> traffic
  std::map<std::string, uint64_t> refused_;
  LatencyHistogram who_has_;
  uint64_t who_has_keys_ = 0;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_OBSERVE_LOOP_METRICS_H_
