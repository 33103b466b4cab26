// Recent deltas per origin. Only a contiguous chain is useful: a requester at version v needs
// every delta from v on, so a break in the chain makes everything before it dead weight.
#include "lib/gossip/delta_cache.h"

namespace peerbloom {

void DeltaCache::Add(uint64_t base, uint64_t version, std::string_view bytes, size_t cap,
                     std::string_view state_sig, std::string_view delta_sig) {
  if (!deltas_.empty() && deltas_.back().version != base) Clear();  // keep the chain contiguous
  if (bytes.size() > cap) {
    Clear();
    return;
  }
  deltas_.push_back(CachedDelta{base, version, std::string(bytes), std::string(state_sig),
                                std::string(delta_sig)});
  bytes_ += bytes.size();
  while (bytes_ > cap) {
    bytes_ -= deltas_.front().bytes.size();
    deltas_.pop_front();
  }
}

void DeltaCache::Clear() {
  deltas_.clear();
  bytes_ = 0;
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
