// The daemon's publication rule, kept in lib so that simulations drive the same code.
#include "peerbloom/publish_policy.h"

#include <algorithm>

namespace peerbloom {

int64_t PublishPolicy::MinGapMs() const noexcept {
  return std::max<int64_t>(1, options_.gossip_interval_ms / 10);
}

PublishAction PublishPolicy::Decide(uint64_t pending, uint64_t summary_bits,
                                    int64_t now_ms) noexcept {
  if (pending == 0) {
    pending_seen_ = false;
    due_ms_ = INT64_MAX;
    return PublishAction::kWait;
  }
  if (!pending_seen_) {
    pending_seen_ = true;
    first_pending_ms_ = now_ms;
  }
  due_ms_ = first_pending_ms_ + max_delay_ms();
  reason_ = PublishReason::kMaxDelay;
  const bool full =
      pending >= batch() ||
      static_cast<double>(pending) > options_.threshold * static_cast<double>(summary_bits);
  if (full) {
    const int64_t batch_due = published_ ? last_publish_ms_ + MinGapMs() : now_ms;
    if (batch_due < due_ms_) {
      due_ms_ = batch_due;
      reason_ = PublishReason::kBatch;
    }
  }
  return now_ms >= due_ms_ ? PublishAction::kPublish : PublishAction::kWait;
}

void PublishPolicy::Published(int64_t now_ms) noexcept {
  published_ = true;
  last_publish_ms_ = now_ms;
  pending_seen_ = false;
  due_ms_ = INT64_MAX;
}

}  // namespace peerbloom
