// The exact, time-bounded set of seen messages (relay.h).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "peerbloom/relay.h"

namespace peerbloom {

SeenSet::SeenSet(uint64_t ttl_ms, size_t capacity)
    : ttl_ms_(ttl_ms), capacity_(std::max<size_t>(capacity, 1)) {}

bool SeenSet::Origin::InRestored(uint64_t id) const {
  for (const auto& [lo, hi] : restored) {
    if (id >= lo && id <= hi) return true;
  }
  return false;
}

bool SeenSet::Contains(std::string_view origin, uint64_t id) const {
  const auto it = origins_.find(std::string(origin));
  if (it == origins_.end()) return false;
  return id <= it->second.floor || it->second.ids.contains(id) || it->second.InRestored(id);
}

bool SeenSet::Insert(std::string_view origin, uint64_t id, uint64_t now_ms) {
  Origin& o = origins_[std::string(origin)];
  if (id <= o.floor || o.InRestored(id) || !o.ids.emplace(id, now_ms).second) return false;
  ++changes_;
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
  std::erase_if(o.restored, [&](const auto& r) { return r.second <= o.floor; });
  order_.pop_front();
}

std::vector<SeenSet::SavedOrigin> SeenSet::Save() const {
  std::vector<SavedOrigin> out;
  out.reserve(origins_.size());
  for (const auto& [name, o] : origins_) {
    SavedOrigin s{name, o.floor, {}};
    std::vector<std::pair<uint64_t, uint64_t>> spans = o.restored;
    for (const auto& [id, seen_ms] : o.ids) spans.emplace_back(id, id);
    std::sort(spans.begin(), spans.end());
    for (const auto& [lo, hi] : spans) {
      if (hi <= s.floor) continue;
      if (!s.ranges.empty() && lo <= s.ranges.back().second + 1) {
        s.ranges.back().second = std::max(s.ranges.back().second, hi);
      } else {
        s.ranges.emplace_back(std::max(lo, s.floor + 1), hi);
      }
    }
    if (s.floor != 0 || !s.ranges.empty()) out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(),
            [](const SavedOrigin& a, const SavedOrigin& b) { return a.origin < b.origin; });
  return out;
}

void SeenSet::Restore(const std::vector<SavedOrigin>& saved) {
  for (const SavedOrigin& s : saved) {
    Origin& o = origins_[s.origin];
    o.floor = std::max(o.floor, s.floor);
    for (const auto& [lo, hi] : s.ranges) {
      if (lo <= hi && hi > o.floor) o.restored.emplace_back(std::max(lo, o.floor + 1), hi);
    }
    ++changes_;
  }
}

}  // namespace peerbloom
