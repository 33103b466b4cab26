// PeerIndex: who-has over every peer's summary in one pass ("bit-sliced" Bloom filters).
//
// Peers whose filters share a geometry (size c * 2^log2_bits, k) form a group; peers of
// different sizes sit in different groups, each probed with its own size reduction. A group stores,
// for each bit position p of its filters, one row of `stride` bytes that holds bit p of every peer
// in the group, one bit per column (peer slot): column c is bit c % 8 of byte c / 8. A lookup of a
// key ANDs the k rows of its k positions: k memory reads answer up to 64 peers per 8 bytes of row,
// where scanning the peers one by one costs P * k reads (P cache misses at least).
//
// Memory: the index is the only uncompressed copy of a peer's filter. A group of P peers at
// m bits holds m * stride bytes, stride = the smallest of 1, 2, 4, 8, 16, 24, ... bytes
// with 8 * stride >= P, so a full group costs m / 8 bytes per peer, the size of the filter
// itself, plus 8 bytes of digest and ~40 bytes of bookkeeping per slot. Extract() rebuilds a
// peer's BloomFilter from its column when one is needed (to re-encode it for another node);
// the FilterDigest of every slot is kept up to date incrementally, so delta checks need no
// copy. Slots of erased peers are reused; an emptied group is freed.
//
// Foreign summaries (imported Squid Cache Digests: MD5 key words mod a bit count that is not a
// power of two) do not fit a bit-sliced group; they live in their own slots behind the
// ForeignSummary interface and are checked one by one by QueryKey().
//
// Thread-safety: const methods may run concurrently; anything else needs external locking.
// Resource owner: not copyable.
#ifndef PEERBLOOM_PEER_INDEX_H_
#define PEERBLOOM_PEER_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "peerbloom/bloom_filter.h"
#include "peerbloom/hash.h"
#include "peerbloom/status.h"

namespace peerbloom {

// A peer's summary in a scheme the bit-sliced groups cannot hold (Squid Cache Digests).
class ForeignSummary {
 public:
  virtual ~ForeignSummary() = default;
  // `key_bytes` are the key scheme's bytes; `hash` their IndexHasher hash (unused by schemes
  // that hash the key bytes themselves).
  virtual bool MayContain(std::string_view key_bytes, const KeyHash& hash) const noexcept = 0;
  virtual size_t memory_bytes() const noexcept = 0;
};

class PeerIndex {
 public:
  using Slot = uint32_t;
  static constexpr Slot kNoSlot = UINT32_MAX;

  PeerIndex();
  ~PeerIndex();
  PeerIndex(const PeerIndex&) = delete;
  PeerIndex& operator=(const PeerIndex&) = delete;

  // Stores a filter in a free slot (an erased one first) and returns the slot. O(bits).
  Slot Insert(const BloomFilter& filter);
  // Replaces the filter of a bit-sliced slot; the geometry may change. O(bits).
  // InvalidArgument for a slot that is not in use or is foreign.
  Status Replace(Slot slot, const BloomFilter& filter);
  // Toggles the given positions of a slot's filter (a delta's flipped positions) and updates
  // its digest. InvalidArgument, with nothing changed, for a position beyond the size or a slot
  // that is not a bit-sliced one in use.
  Status Flip(Slot slot, std::span<const uint64_t> positions);
  // Frees a slot (bit-sliced or foreign) for reuse. No-op for a slot not in use.
  void Erase(Slot slot);

  Slot InsertForeign(std::unique_ptr<ForeignSummary> summary);

  bool InUse(Slot slot) const noexcept;
  bool IsForeign(Slot slot) const noexcept;
  // Geometry and FilterDigest of a bit-sliced slot; 0 for any other.
  unsigned log2_bits(Slot slot) const noexcept;
  unsigned multiplier(Slot slot) const noexcept;
  unsigned k(Slot slot) const noexcept;
  uint64_t digest(Slot slot) const noexcept;
  // Rebuilds the filter of a bit-sliced slot. O(bits). InvalidArgument for any other slot.
  Status Extract(Slot slot, BloomFilter* out) const;

  // Appends the bit-sliced slots whose filter may contain the key.
  void Query(const KeyHash& hash, std::vector<Slot>* out) const;
  // Asks the CPU to start loading the rows Query(hash) will read, so that a caller holding
  // several keys overlaps their cache misses (WhoHasBatch does).
  void Prefetch(const KeyHash& hash) const noexcept;
  // Query() plus the foreign slots that may contain the key.
  void QueryKey(std::string_view key_bytes, const KeyHash& hash, std::vector<Slot>* out) const;
  // Query() for many keys: row addresses of a run of keys are computed and prefetched before
  // any is read, so their cache misses overlap. Bit-sliced slots only. Replaces both outputs:
  // slots[(*offsets)[i] .. (*offsets)[i + 1]) answer hashes[i]; offsets has size() + 1 entries.
  void QueryBatch(std::span<const KeyHash> hashes, std::vector<uint32_t>* offsets,
                  std::vector<Slot>* slots) const;

  size_t size() const noexcept { return in_use_; }  // slots in use
  size_t groups() const noexcept;
  // Bytes of rows, digests and bookkeeping (and foreign summaries' own figure).
  size_t memory_bytes() const noexcept;

 private:
  struct Group;
  struct SlotInfo;

  Group* FindOrAddGroup(const BloomFilter& filter);
  Slot AllocateSlot();
  void Place(Slot slot, const BloomFilter& filter);
  void Unplace(Slot slot);
  const SlotInfo* SlicedSlot(Slot slot) const noexcept;

  std::vector<std::unique_ptr<Group>> groups_;
  std::vector<SlotInfo> slots_;
  std::vector<Slot> free_slots_;
  size_t in_use_ = 0;
};

}  // namespace peerbloom

#endif  // PEERBLOOM_PEER_INDEX_H_
