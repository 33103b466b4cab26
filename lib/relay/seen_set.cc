// The exact, time-bounded set of seen messages (relay.h).
#include <algorithm>
#include <string>

#include "peerbloom/relay.h"

namespace peerbloom {

SeenSet::SeenSet(uint64_t ttl_ms, size_t capacity)
    : ttl_ms_(ttl_ms), capacity_(std::max<size_t>(capacity, 1)) {}

bool SeenSet::Contains(std::string_view origin, uint64_t id) const {
  const auto it = origins_.find(std::string(origin));
  if (it == origins_.end()) return false;
  return id <= it->second.floor || it->second.ids.contains(id);
}

bool SeenSet::Insert(std::string_view origin, uint64_t id, uint64_t now_ms) {
  Origin& o = origins_[std::string(origin)];
  if (id <= o.floor || !o.ids.emplace(id, now_ms).second) return false;
  order_.push_back({std::string(origin), id, now_ms});
  if (order_.size() > capacity_) {
    PopOldest();
    ++evicted_early_;
  }
  return true;
}

void SeenSet::Expire(uint64_t now_ms) {
  while (!order_.empty() && order_.front().seen_ms + ttl_ms_ <= now_ms) PopOldest();
}

// The expired id becomes the origin's floor: ids grow per origin, so anything at or below it
// is at least as old as the window and must not be delivered again.
void SeenSet::PopOldest() {
  const Entry& e = order_.front();
  Origin& o = origins_[e.origin];
  o.ids.erase(e.id);
  o.floor = std::max(o.floor, e.id);
  order_.pop_front();
}

}  // namespace peerbloom
