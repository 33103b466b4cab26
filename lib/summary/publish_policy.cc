// The daemon's publication rule, kept in lib so that simulations drive the same code.
#include "peerbloom/publish_policy.h"

#include <algorithm>

namespace peerbloom {

PublishAction PublishPolicy::Decide(uint64_t pending, uint64_t summary_bits,
                                    int64_t now_ms) const noexcept {
  if (pending == 0) return PublishAction::kWait;
  const bool urgent =
      static_cast<double>(pending) > options_.threshold * static_cast<double>(summary_bits);
  if (urgent) return PublishAction::kPublishAndFlush;
  return now_ms < next_publish_ms_ ? PublishAction::kWait : PublishAction::kPublish;
}

void PublishPolicy::Published(int64_t now_ms) noexcept {
  const int64_t delay =
      options_.max_delay_ms > 0 ? options_.max_delay_ms : options_.gossip_interval_ms / 2;
  next_publish_ms_ = now_ms + std::max<int64_t>(1, delay);
}

}  // namespace peerbloom
