// Per-origin flow control (relay.h): a count-min sketch over a ring of time generations.
#include <algorithm>
#include <limits>
#include <string>

#include "peerbloom/relay.h"

namespace peerbloom {

Status ValidateFlowOptions(const FlowOptions& o) {
  if (o.window_ms == 0) return Status::InvalidArgument("flow window must be positive");
  if (o.buckets == 0 || o.buckets > 1000 || o.window_ms < o.buckets) {
    return Status::InvalidArgument("flow buckets '" + std::to_string(o.buckets) + "' out of range");
  }
  if (o.log2_counters < 4 || o.log2_counters > 24) {
    return Status::InvalidArgument("flow counters '" + std::to_string(o.log2_counters) +
                                   "' out of range");
  }
  if (o.k == 0 || o.k > 8) {
    return Status::InvalidArgument("flow hashes '" + std::to_string(o.k) + "' out of range");
  }
  return Status::Ok();
}

OriginMeter::OriginMeter(const FlowOptions& options, const SipKey& key)
    : options_(options),
      hasher_(key),
      bucket_ms_(options.window_ms / options.buckets),
      generations_(options.buckets, std::vector<uint16_t>(size_t{1} << options.log2_counters)) {}

// Clears the generations that fell out of the window. Time that goes backwards counts in the
// newest generation.
void OriginMeter::Advance(uint64_t now_ms) {
  const uint64_t bucket = now_ms / bucket_ms_;
  if (bucket <= current_bucket_) return;
  const uint64_t steps = std::min<uint64_t>(bucket - current_bucket_, options_.buckets);
  for (uint64_t i = 1; i <= steps; ++i) {
    auto& g = generations_[(current_bucket_ + i) % options_.buckets];
    std::fill(g.begin(), g.end(), 0);
  }
  current_bucket_ = bucket;
}

uint32_t OriginMeter::Estimate(std::string_view origin, uint64_t now_ms) {
  Advance(now_ms);
  const KeyHash h = hasher_.Hash(origin);
  const uint64_t mask = (uint64_t{1} << options_.log2_counters) - 1;
  uint32_t best = std::numeric_limits<uint32_t>::max();
  uint64_t g = h.h1;
  for (unsigned i = 0; i < options_.k; ++i, g += h.h2 | 1) {
    uint32_t sum = 0;
    for (const auto& gen : generations_) sum += gen[g & mask];
    best = std::min(best, sum);
  }
  return best;
}

bool OriginMeter::Admit(std::string_view origin, uint64_t now_ms) {
  const uint32_t estimate = Estimate(origin, now_ms);
  if (options_.max_per_window != 0 && estimate >= options_.max_per_window) return false;
  // Conservative update (Estan, Varghese 2002): raise only the counters that hold the
  // minimum, which keeps the overcount of colliding origins as small as it can be.
  const KeyHash h = hasher_.Hash(origin);
  const uint64_t mask = (uint64_t{1} << options_.log2_counters) - 1;
  auto& current = generations_[current_bucket_ % options_.buckets];
  uint64_t g = h.h1;
  for (unsigned i = 0; i < options_.k; ++i, g += h.h2 | 1) {
    uint32_t sum = 0;
    for (const auto& gen : generations_) sum += gen[g & mask];
    uint16_t& c = current[g & mask];
    if (sum == estimate && c < std::numeric_limits<uint16_t>::max()) ++c;
  }
  return true;
}

}  // namespace peerbloom
