// Bounds on members' summaries. Checked on the header alone (PeekHeader), so a refused
// summary costs its checksum and nothing else.
#include "peerbloom/summary_bounds.h"

#include <algorithm>
#include <string>

namespace peerbloom {
namespace {

std::string Quote(uint64_t value) { return "'" + std::to_string(value) + "'"; }

}  // namespace

Status DeriveSummaryBounds(Profile profile, uint64_t capacity, double fpr, uint64_t max_total_bits,
                           SummaryBounds* out) {
  Geometry g;
  PEERBLOOM_RETURN_IF_ERROR(ChooseGeometry(profile, capacity, fpr, &g, SizeSteps::kPowerOfTwo));
  out->max_bits = g.counters() * kSummarySizeMargin;
  out->max_k = std::max(g.k, HashesForFpr(fpr / 4));
  out->max_total_bits = max_total_bits;
  return Status::Ok();
}

Status CheckSummaryBounds(const SummaryBounds& bounds, unsigned k, unsigned log2_bits,
                          unsigned multiplier, uint64_t others_bits) {
  const uint64_t bits = log2_bits >= 64 ? UINT64_MAX : uint64_t{multiplier} << log2_bits;
  if (bounds.max_bits != 0 && bits > bounds.max_bits) {
    return Status::ResourceExhausted("summary of " + Quote(bits) +
                                     " bits exceeds the cluster's bound of " +
                                     Quote(bounds.max_bits));
  }
  if (bounds.max_k != 0 && k > bounds.max_k) {
    return Status::ResourceExhausted("summary of " + Quote(k) +
                                     " hash functions exceeds the cluster's bound of " +
                                     Quote(bounds.max_k));
  }
  if (bounds.max_total_bits != 0 &&
      bits > bounds.max_total_bits - std::min(others_bits, bounds.max_total_bits)) {
    return Status::ResourceExhausted(
        "summary of " + Quote(bits) + " bits with " + Quote(others_bits) +
        " bits of other summaries held exceeds the bound of " + Quote(bounds.max_total_bits));
  }
  return Status::Ok();
}

}  // namespace peerbloom
