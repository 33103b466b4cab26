// Squid Cache Digest (application/cache-digest) decoding and lookup.
//
// A Squid peer serves its digest at http://HOST:PORT/squid-internal-periodic/store_digest.
// Layout (all integers big-endian; Squid src/store_digest.cc, StoreDigestCBlock):
//
//   offset size field
//   0      2    version current            (Squid writes 5)
//   2      2    version required           (Squid writes 3)
//   4      4    capacity                   (entries the digest was sized for)
//   8      4    count                      (entries added)
//   12     4    del_count                  (entries deleted)
//   16     4    mask_size                  (bytes; == (capacity * bits_per_entry + 7) / 8)
//   20     1    bits_per_entry             (Squid's default 5)
//   21     1    hash function count        (must be 4)
//   22     106  reserved                   (zero)
//   128    mask_size bytes of mask: bit i is byte i >> 3, mask 1 << (i & 7)
//
// A key's bit positions are the four big-endian 32-bit words of its 16-byte MD5 store key,
// each modulo mask_size * 8 (Squid src/CacheDigest.cc, cacheDigestHashKey).
//
// Validation follows Squid's peerDigestSetCBlock() and peerDigestUseful(); docs/squid.md
// lists every rule and its message. Thread-safety: immutable after Parse, safe to share.
#ifndef PEERBLOOM_SQUID_DIGEST_H_
#define PEERBLOOM_SQUID_DIGEST_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "peerbloom/key_scheme.h"
#include "peerbloom/status.h"

namespace peerbloom {

// Frozen by Squid. Never change.
inline constexpr size_t kCacheDigestHeaderBytes = 128;
inline constexpr uint16_t kCacheDigestVersionCurrent = 5;   // the newest layout we read
inline constexpr uint16_t kCacheDigestVersionRequired = 3;  // the oldest layout we read
inline constexpr uint8_t kCacheDigestHashFunctions = 4;
// Squid ignores a digest with more than 65 % of its bits on (integer percent, truncated).
inline constexpr unsigned kCacheDigestMaxFillPercent = 65;

struct CacheDigestHeader {
  uint16_t version_current = 0;
  uint16_t version_required = 0;
  uint32_t capacity = 0;
  uint32_t count = 0;
  uint32_t del_count = 0;
  uint32_t mask_size = 0;
  uint8_t bits_per_entry = 0;
  uint8_t hash_functions = 0;
};

struct CacheDigestLimits {
  // Default: 64 MiB. A larger mask is refused before anything is allocated. Squid sizes a
  // digest at about 5 bits per stored object, so 64 MiB covers 100 M objects. Values above
  // 512 MiB - 1 act as that (Squid counts mask bits in 32 bits).
  uint32_t max_mask_bytes = 64u << 20;
};

// The four bit positions of a key in a mask of `bit_count` bits.
inline std::array<uint32_t, 4> CacheDigestPositions(const SquidKey& key,
                                                    uint32_t bit_count) noexcept {
  std::array<uint32_t, 4> pos{};
  for (size_t w = 0; w < 4; ++w) {
    const uint32_t word = uint32_t{key[4 * w]} << 24 | uint32_t{key[4 * w + 1]} << 16 |
                          uint32_t{key[4 * w + 2]} << 8 | uint32_t{key[4 * w + 3]};
    pos[w] = word % bit_count;
  }
  return pos;
}

class CacheDigest {
 public:
  CacheDigest() = default;

  // Decodes and validates a whole digest body (header + mask, nothing after it). Corruption,
  // NotSupported or ResourceExhausted with a message on any violation; *out is untouched then.
  static Status Parse(std::string_view bytes, CacheDigest* out,
                      const CacheDigestLimits& limits = CacheDigestLimits());
  // Header checks alone (the first 128 bytes), for callers that stream the mask.
  static Status ParseHeader(std::string_view bytes, CacheDigestHeader* out,
                            const CacheDigestLimits& limits = CacheDigestLimits());

  // False for a default-constructed (empty) digest.
  bool MayContain(const SquidKey& key) const noexcept {
    if (bit_count_ == 0) return false;
    for (uint32_t bit : CacheDigestPositions(key, bit_count_)) {
      if ((mask_[bit >> 3] & (1u << (bit & 7))) == 0) return false;
    }
    return true;
  }

  const CacheDigestHeader& header() const noexcept { return header_; }
  uint64_t bit_count() const noexcept { return bit_count_; }
  uint64_t bits_set() const noexcept { return bits_set_; }
  // Fraction of mask bits that are on.
  double fill() const noexcept {
    return bit_count_ == 0 ? 0.0 : static_cast<double>(bits_set_) / bit_count_;
  }
  // Probability that an absent key tests positive: fill^4 (four independent positions).
  double EstimatedFalsePositiveRate() const noexcept;
  const std::vector<uint8_t>& mask() const noexcept { return mask_; }

 private:
  CacheDigestHeader header_;
  std::vector<uint8_t> mask_;
  uint32_t bit_count_ = 0;
  uint64_t bits_set_ = 0;
};

}  // namespace peerbloom

#endif  // PEERBLOOM_SQUID_DIGEST_H_
