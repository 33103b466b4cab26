// The bounds on members' summaries (peerbloom/summary_bounds.h), applied to a full summary's
// header before DecodeSummary allocates its bits.
#include "lib/gossip/engine.h"

namespace peerbloom {

Status GossipEngine::Impl::CheckBounds(std::string_view summary_bytes) {
  MessageHeader h;
  PEERBLOOM_RETURN_IF_ERROR(PeekHeader(summary_bytes, opt_.limits, &h));
  const Status s = CheckSummaryBounds(opt_.summary_bounds, h.k, h.log2_bits, h.multiplier,
                                      summaries_.BitsHeldExcept(h.origin));
  if (!s.ok()) ++stats_.summaries_out_of_bounds;
  return s;
}

}  // namespace peerbloom
