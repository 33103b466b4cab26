// DeltaCache: the recent deltas of one origin, kept so a neighbour that missed a few versions
// gets them instead of a full summary (megabytes at a million keys).
#ifndef PEERBLOOM_LIB_GOSSIP_DELTA_CACHE_H_
#define PEERBLOOM_LIB_GOSSIP_DELTA_CACHE_H_

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace peerbloom {

// One delta of an origin as it travelled (summary codec bytes).
struct CachedDelta {
  uint64_t base_version = 0;
  uint64_t version = 0;
  std::string bytes;
  // The origin's signatures that travelled with it (empty when unsigned).
  std::string state_sig;
  std::string delta_sig;
};

// Contiguous deltas, oldest first, at most `cap` bytes in all (the oldest go first).
class DeltaCache {
 public:
  // Appends base -> version. A delta that does not continue the chain starts a new one; one
  // larger than `cap` empties the cache (a chain cannot skip it).
  void Add(uint64_t base, uint64_t version, std::string_view bytes, size_t cap,
           std::string_view state_sig = {}, std::string_view delta_sig = {});
  void Clear();
  // The deltas from `have` up to `current`, or none when the chain does not reach back to
  // `have` or does not end at `current`.
  std::vector<const CachedDelta*> From(uint64_t have, uint64_t current) const;

  size_t bytes() const { return bytes_; }
  size_t size() const { return deltas_.size(); }

 private:
  std::deque<CachedDelta> deltas_;
  size_t bytes_ = 0;
};

}  // namespace peerbloom

#endif  // PEERBLOOM_LIB_GOSSIP_DELTA_CACHE_H_
