// SquidKeySet: a compact hash set of 16-byte keys (Squid MD5 store keys, or any other
// 16-byte identity such as the two words of a KeyHash).
//
// Open addressing with linear probing over a flat array of 16-byte slots; the all-zero key
// marks an empty slot (a real all-zero key is kept in a side flag). Deletion shifts the
// following cluster back, so there are no tombstones and lookups never slow down with churn.
// The table doubles above 3/4 load and halves below 1/8, so it holds between 16/0.75 = 21.3
// and 16/0.375 = 42.7 bytes per key (docs/squid.md has the measured figures).
//
// Slot positions come from SipHash-1-3 of the key under a seed: the keys come from URLs that
// outsiders choose, and MD5 prefixes are cheap to brute-force, so an unkeyed position would
// let a client pile keys into one probe cluster. Pass a secret seed (e.g. the index key).
//
// Snapshot encoding (little-endian), docs/squid.md "live-key snapshot":
//
//   0      4  magic "PBKS"
//   4      1  format version (1)
//   5      1  minimum reader version (1)
//   6      2  reserved, zero
//   8      8  key count n
//   16  16*n  keys, in no particular order
//   16+16n 8  XXH64 (seed 0) of every byte before it
//
// Thread-safety: const methods may run concurrently; anything else needs external locking.
// Resource owner: not copyable (it may hold hundreds of MiB).
#ifndef PEERBLOOM_SQUID_KEY_SET_H_
#define PEERBLOOM_SQUID_KEY_SET_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "peerbloom/hash.h"
#include "peerbloom/key_scheme.h"
#include "peerbloom/status.h"

namespace peerbloom {

class SquidKeySet {
 public:
  // Frozen snapshot constants. Never renumber.
  static constexpr char kMagic[4] = {'P', 'B', 'K', 'S'};
  static constexpr uint8_t kFormatVersion = 1;
  static constexpr size_t kHeaderBytes = 16;
  static constexpr size_t kTrailerBytes = 8;

  explicit SquidKeySet(const SipKey& seed = SipKey{});
  SquidKeySet(SquidKeySet&&) noexcept = default;
  SquidKeySet& operator=(SquidKeySet&&) noexcept = default;
  SquidKeySet(const SquidKeySet&) = delete;
  SquidKeySet& operator=(const SquidKeySet&) = delete;

  // Returns true when the key was absent and is now present. May allocate (grow).
  bool Insert(const SquidKey& key);
  // Returns true when the key was present and is now absent. May shrink the table.
  bool Erase(const SquidKey& key);
  bool Contains(const SquidKey& key) const noexcept;

  size_t size() const noexcept { return size_ + (has_zero_key_ ? 1 : 0); }
  bool empty() const noexcept { return size() == 0; }
  size_t slot_count() const noexcept { return slots_.size(); }
  // Heap bytes held by the table.
  size_t memory_bytes() const noexcept { return slots_.capacity() * sizeof(SquidKey); }
  void Clear();

  // Calls fn(const SquidKey&) once per key, in table order.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    if (has_zero_key_) fn(SquidKey{});
    for (const SquidKey& slot : slots_) {
      if (!IsEmptySlot(slot)) fn(slot);
    }
  }

  // Appends the snapshot encoding (layout above) to *out.
  void EncodeTo(std::string* out) const;
  // Replaces the contents with a snapshot's. Corruption on a bad magic, length or checksum
  // or a repeated key; NotSupported when the minimum reader version is newer than this one;
  // ResourceExhausted when it holds more than `max_keys`. The set is unchanged on error.
  Status DecodeFrom(std::string_view bytes, size_t max_keys);

 private:
  static bool IsEmptySlot(const SquidKey& slot) noexcept;
  size_t Home(const SquidKey& key) const noexcept;
  // The slot holding `key`, or the empty slot where it would go.
  size_t FindSlot(const SquidKey& key) const noexcept;
  void Rehash(size_t new_slot_count);
  void ShiftBack(size_t hole) noexcept;

  SipKey seed_;
  std::vector<SquidKey> slots_;  // power-of-two size; all-zero = empty
  size_t size_ = 0;              // keys in slots_
  bool has_zero_key_ = false;
};

}  // namespace peerbloom

#endif  // PEERBLOOM_SQUID_KEY_SET_H_
