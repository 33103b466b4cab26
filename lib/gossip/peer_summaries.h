// PeerSummaries: the summaries this node holds of others, in one PeerIndex so who-has probes
// them all at once. Per member: the held summary's epoch, version and geometry, the recent
// deltas that built it (to answer a neighbour that missed some) and its encoded bytes (so a
// burst of joiners costs one encoding). Imported Squid digests take foreign slots of the same
// index.
//
// A held summary of an older epoch than its member's is a stand-in: it answers who-has until
// the new epoch's full summary replaces it, and nothing else builds on it (docs/gossip.md).
#ifndef PEERBLOOM_LIB_GOSSIP_PEER_SUMMARIES_H_
#define PEERBLOOM_LIB_GOSSIP_PEER_SUMMARIES_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lib/gossip/delta_cache.h"
#include "lib/util/string_hash.h"
#include "peerbloom/gossip.h"
#include "peerbloom/peer_index.h"
#include "peerbloom/summary.h"

namespace peerbloom {

struct HeldSummary {
  bool held = false;
  uint64_t epoch = 0;    // the epoch the summary belongs to
  uint64_t version = 0;  // in that epoch
  uint64_t estimated_items = 0;
  KeyScheme key_scheme = KeyScheme::kRaw;
  PeerIndex::Slot slot = PeerIndex::kNoSlot;
  int64_t received_ms = 0;  // local time the current version arrived (kept after a drop)
  DeltaCache recent;
  std::string encoded;    // codec bytes of the held version; empty when not cached
  std::string state_sig;  // the origin's signature of the held version's state, or empty
};

class PeerSummaries {
 public:
  // Uses recent_delta_bytes and encoded_cache_bytes of `options`.
  explicit PeerSummaries(const GossipOptions& options);
  PeerSummaries(const PeerSummaries&) = delete;
  PeerSummaries& operator=(const PeerSummaries&) = delete;

  // Null when nothing was ever held of `id`.
  const HeldSummary* Find(std::string_view id) const;
  // A summary of `id` in `epoch` is held (not a stand-in of an older one).
  bool HoldsEpoch(std::string_view id, uint64_t epoch) const;
  // The held summary's filter digest, k, log2 bits and size multiplier. REQUIRES: one is held.
  uint64_t digest(std::string_view id) const;
  unsigned k(std::string_view id) const;
  unsigned log2_bits(std::string_view id) const;
  unsigned multiplier(std::string_view id) const;

  // Holds `summary` for `id`, replacing in place: who-has sees the old summary until the new
  // one is whole, never a moment without either.
  void Store(const std::string& id, const Summary& summary, int64_t now_ms);
  // Applies a delta whose base is the held version and geometry (the caller checked) and
  // keeps its bytes for later requesters. False, bits unchanged, when a position is out of
  // range or the result's digest differs.
  bool ApplyDelta(const std::string& id, const SummaryDelta& delta, std::string_view bytes,
                  int64_t now_ms, std::string_view state_sig = {}, std::string_view delta_sig = {});
  // Keeps the origin's state signature of the held version (set after Store or ApplyDelta).
  void SetStateSig(const std::string& id, std::string_view state_sig);
  // The held summary leaves who-has.
  void Drop(const std::string& id);
  // A new incarnation: its deltas and encoding are void (the bits stay as a stand-in).
  void ForgetDeltas(const std::string& id);
  // Drops and forgets everything of `id`.
  void Erase(const std::string& id);

  // Keeps the codec bytes of the held version when the cache has room.
  void SetEncoded(const std::string& id, std::string_view bytes);
  // The codec bytes of the held summary, encoded at most once per version. False without one.
  bool Encoded(const std::string& id, std::string* codec_bytes);
  // The held summary as it was received. NotFound without one.
  Status Extract(std::string_view id, Summary* out) const;
  // Deltas of `id` from version `have` to the held one, or none.
  std::vector<const CachedDelta*> DeltasFrom(std::string_view id, uint64_t have) const;

  // Foreign slots (imported digests), named `id` in Owner().
  PeerIndex::Slot InsertForeign(const std::string& id, std::unique_ptr<ForeignSummary> summary);
  void EraseSlot(PeerIndex::Slot slot);
  // The id a slot was given to ("" for none).
  const std::string& Owner(PeerIndex::Slot slot) const;
  const PeerIndex& index() const { return index_; }
  size_t encoded_bytes() const { return encoded_bytes_; }
  // Bits of the member summaries held, but that of `id` (foreign slots left out).
  uint64_t BitsHeldExcept(std::string_view id) const;

 private:
  void ClearEncoded(HeldSummary* h);
  void SetOwner(PeerIndex::Slot slot, const std::string& id);

  const size_t recent_delta_bytes_;
  const size_t encoded_cache_bytes_;
  PeerIndex index_;
  std::vector<std::string> slot_owner_;  // PeerIndex slot -> member or import id
  StringMap<HeldSummary> held_;
  size_t encoded_bytes_ = 0;  // sum of the held summaries' `encoded`
};

}  // namespace peerbloom

#endif  // PEERBLOOM_LIB_GOSSIP_PEER_SUMMARIES_H_
