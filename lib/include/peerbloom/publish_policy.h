// PublishPolicy: when a node hands the changes of its summary to gossip.
//
// The daemon's event loop asks Decide() after every event; bench/summary_cache_sim asks it
// after every simulated cache change, so both follow the same rule. Changes are batched, as
// Summary Cache batches its updates, and each publication is sent to the peers at once
// (GossipEngine::FlushNow), so what bounds a peer's view is the batching alone:
//  - nothing is pending: wait;
//  - a batch is full: `batch` summary positions are pending (or more than `threshold` of the
//    summary's bits): publish, though not sooner than a tenth of a gossip interval after the
//    last publication, so a node whose cache churns fast sends at most ten deltas per
//    interval;
//  - otherwise publish when the oldest pending change is `max_delay_ms` old (two gossip
//    intervals by default).
// So a busy cache publishes every `batch` positions (its peers miss a new object for the time
// a batch takes to fill: a few tenths of a second at a thousand requests per second), and a
// quiet one every `max_delay_ms` at most, with everything that changed meanwhile in one delta,
// whatever the rate. The delay misses this costs are measured by summary_cache_sim
// (docs/results/summary-cache.md).
//
// Pure state: time is passed in. Thread-safety: none.
#ifndef PEERBLOOM_PUBLISH_POLICY_H_
#define PEERBLOOM_PUBLISH_POLICY_H_

#include <algorithm>
#include <cstdint>

namespace peerbloom {

struct PublishPolicyOptions {
  // Default: 0.05. A batch is also full when pending positions exceed this fraction of the
  // summary's bits (config key publish_threshold): a small summary's batches stay small.
  double threshold = 0.05;
  // Default: 1000. The gossip interval; batches are a tenth of it apart at least.
  int64_t gossip_interval_ms = 1000;
  // Default: 0, meaning twice gossip_interval_ms. How long the oldest pending change waits at
  // most (config key publish_max_delay): longer batches more changes into a delta (fewer
  // messages when the cache changes slowly) and lets peers miss a new object for longer. A
  // cluster set to gossip faster gets fresher summaries with it.
  int64_t max_delay_ms = 0;
  // Default: 0, meaning kDefaultBatch. Pending summary positions that make a full batch
  // (config key publish_batch).
  uint64_t batch = 0;
};

inline constexpr uint64_t kDefaultPublishBatch = 256;

enum class PublishAction { kWait, kPublish };
// Why the last publication was due.
enum class PublishReason { kNone, kBatch, kMaxDelay };

class PublishPolicy {
 public:
  PublishPolicy() = default;
  explicit PublishPolicy(const PublishPolicyOptions& options) : options_(options) {}

  // What to do now that `pending` summary positions are dirty (SummaryBuilder::pending())
  // in a summary of `summary_bits` bits. Notes when the oldest pending change was first seen,
  // so the caller asks after every change.
  PublishAction Decide(uint64_t pending, uint64_t summary_bits, int64_t now_ms) noexcept;
  // A publication happened at `now_ms` (whatever its outcome).
  void Published(int64_t now_ms) noexcept;
  // The caller's deadline with `pending` summary positions dirty: INT64_MAX when none are,
  // `now_ms` when the last Decide did not see them yet (a change made since: deciding at once
  // notes its time), else when they are due at the latest.
  int64_t NextPublishMs(uint64_t pending, int64_t now_ms) const noexcept {
    if (pending == 0) return INT64_MAX;
    return pending_seen_ ? due_ms_ : now_ms;
  }
  // Why the publication Decide asked for was due.
  PublishReason reason() const noexcept { return reason_; }

  int64_t max_delay_ms() const noexcept {
    return options_.max_delay_ms > 0 ? options_.max_delay_ms
                                     : std::max<int64_t>(1, 2 * options_.gossip_interval_ms);
  }
  uint64_t batch() const noexcept {
    return options_.batch > 0 ? options_.batch : kDefaultPublishBatch;
  }

 private:
  int64_t MinGapMs() const noexcept;

  PublishPolicyOptions options_;
  bool published_ = false;
  int64_t last_publish_ms_ = 0;
  bool pending_seen_ = false;
  int64_t first_pending_ms_ = 0;
  int64_t due_ms_ = INT64_MAX;
  PublishReason reason_ = PublishReason::kNone;
};

}  // namespace peerbloom

#endif  // PEERBLOOM_PUBLISH_POLICY_H_
