// SummaryBounds: the geometry a member's summary may have, checked on its header before any
// of its bits are allocated (docs/gossip.md, "Bounds on what peers send").
//
// Every member of a cluster is configured alike (capacity, profile, target_fpr within a small
// factor), so what an honest member sends is known in advance: a summary is at most its
// counting filter's size and has its profile's k. A summary far larger than that can only
// come from a broken or hostile key holder, and holding it would cost every node its size.
#ifndef PEERBLOOM_SUMMARY_BOUNDS_H_
#define PEERBLOOM_SUMMARY_BOUNDS_H_

#include <cstdint>

#include "peerbloom/params.h"
#include "peerbloom/status.h"

namespace peerbloom {

// How many times this node's own largest filter a member's summary may be: members of up to
// 4x this node's capacity (or an exact size next to a power of two) are accepted.
inline constexpr uint64_t kSummarySizeMargin = 4;

struct SummaryBounds {
  // Default: 0, no bound but DecodeLimits. Most bits (c * 2^j) a member's summary may have.
  uint64_t max_bits = 0;
  // Default: 0, no bound but kMaxHashes. Most hash functions a member's summary may use.
  unsigned max_k = 0;
  // Default: 0, no bound but max_members x max_bits. Most bits all members' summaries held
  // together may take (1 bit per position in the peer index).
  uint64_t max_total_bits = 0;
};

// The bounds for a cluster configured as this node is: max_bits = kSummarySizeMargin x the
// power-of-two counter count (profile, capacity, fpr) gives (the larger of the two size
// steps, so members with filter_sizes "exact" or "power-of-two" both fit); max_k = the
// memory-lean k for a quarter of `fpr` (the largest k any profile picks for a target down to
// fpr / 4); max_total_bits as given. InvalidArgument when ChooseGeometry refuses the inputs.
Status DeriveSummaryBounds(Profile profile, uint64_t capacity, double fpr, uint64_t max_total_bits,
                           SummaryBounds* out);

// Whether a summary of k hashes and multiplier * 2^log2_bits bits may be held when the
// summaries of the other members held take `others_bits`. ResourceExhausted naming the
// figure and the bound otherwise.
Status CheckSummaryBounds(const SummaryBounds& bounds, unsigned k, unsigned log2_bits,
                          unsigned multiplier, uint64_t others_bits);

}  // namespace peerbloom

#endif  // PEERBLOOM_SUMMARY_BOUNDS_H_
