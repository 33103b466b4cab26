// Recent deltas per origin: a neighbour that missed a few versions gets them, not a full
// summary (megabytes at a million keys).
#include "lib/gossip/engine.h"

namespace peerbloom {

void DeltaCache::Add(uint64_t base, uint64_t version, std::string_view bytes, size_t cap) {
  if (!deltas_.empty() && deltas_.back().version != base) Clear();  // keep the chain contiguous
  if (bytes.size() > cap) {
    Clear();
    return;
  }
  deltas_.push_back(CachedDelta{base, version, std::string(bytes)});
  bytes_ += bytes.size();
  while (bytes_ > cap) {
    bytes_ -= deltas_.front().bytes.size();
    deltas_.pop_front();
  }
}

std::vector<const CachedDelta*> DeltaCache::From(uint64_t have, uint64_t current) const {
  std::vector<const CachedDelta*> out;
  if (deltas_.empty() || deltas_.back().version != current) return out;
  for (const CachedDelta& d : deltas_) {
    if (d.base_version == have || !out.empty()) out.push_back(&d);
  }
  return out;
}

}  // namespace peerbloom
