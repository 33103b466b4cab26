// PublishPolicy: when a node hands the changes of its summary to gossip.
//
// The daemon's event loop asks Decide() after every event; bench/summary_cache_sim asks it
// after every simulated cache change, so both follow the same rule:
//  - nothing is pending: wait;
//  - more than `threshold` of the summary's bits are pending: publish at once and have the
//    engine send it now (GossipEngine::FlushNow), instead of waiting for its next round;
//  - otherwise publish once half a gossip interval has passed since the last publication,
//    so a change waits at most that long to reach the engine, whose next round sends it.
// The half interval bounds the delay from a cache change to its delta leaving the node by
// about 1.5 gossip intervals, while a node that changes continuously still publishes at most
// twice per interval (one delta per round on the wire: LocalNode collapses what it holds).
//
// Pure state: time is passed in. Thread-safety: none.
#ifndef PEERBLOOM_PUBLISH_POLICY_H_
#define PEERBLOOM_PUBLISH_POLICY_H_

#include <cstdint>

namespace peerbloom {

struct PublishPolicyOptions {
  // Default: 0.05. Publish and flush at once when pending positions exceed this fraction of
  // the summary's bits (config key publish_threshold).
  double threshold = 0.05;
  // Default: 1000. The gossip interval; publications are half of it apart at most.
  int64_t gossip_interval_ms = 1000;
  // Default: 0, meaning gossip_interval_ms / 2. How long after the last publication a pending
  // change is published at the latest (config key publish_max_delay): longer batches more
  // changes into a delta (fewer messages) and lets peers miss a new object for longer.
  int64_t max_delay_ms = 0;
};

enum class PublishAction { kWait, kPublish, kPublishAndFlush };

class PublishPolicy {
 public:
  PublishPolicy() = default;
  explicit PublishPolicy(const PublishPolicyOptions& options) : options_(options) {}

  // What to do now that `pending` summary positions are dirty (SummaryBuilder::pending())
  // in a summary of `summary_bits` bits.
  PublishAction Decide(uint64_t pending, uint64_t summary_bits, int64_t now_ms) const noexcept;
  // A publication happened at `now_ms` (whatever its outcome): the next timed one is due half
  // a gossip interval later.
  void Published(int64_t now_ms) noexcept;
  // When a pending change is published at the latest (for the loop's deadline).
  int64_t next_publish_ms() const noexcept { return next_publish_ms_; }

 private:
  PublishPolicyOptions options_;
  int64_t next_publish_ms_ = 0;
};

}  // namespace peerbloom

#endif  // PEERBLOOM_PUBLISH_POLICY_H_
