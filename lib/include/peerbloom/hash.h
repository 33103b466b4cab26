// Keyed index hashing: key bytes -> 128-bit keyed hash -> k filter positions.
//
// The hash is SipHash-1-3 with a 128-bit output, keyed by a 16-byte key derived from the
// cluster secret. Keying means an outsider who does not know the secret cannot craft URLs
// that collide on the same filter positions (a "Bloom pollution" attack). Why SipHash-1-3:
// docs/hashing.md gives the measurement.
//
// The two 64-bit halves of the hash drive Kirsch-Mitzenmacher double hashing (see
// bloom_probe.h). Every host computes identical values: tests/unit/hash/hash_test.cc pins
// vectors.
#ifndef PEERBLOOM_HASH_H_
#define PEERBLOOM_HASH_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace peerbloom {

// Which function turns key bytes into filter positions. Frozen numbering: it travels in
// summary headers (docs/summary-format.md). Never renumber.
enum class HashScheme : uint8_t {
  kSipHash13x2 = 1,  // SipHash-1-3-128 keyed, double hashing, power-of-two positions
  kSquidDigest = 2,  // Squid Cache Digest: 4 big-endian words of the MD5 key mod bits
};

struct KeyHash {
  uint64_t h1 = 0;
  uint64_t h2 = 0;
  bool operator==(const KeyHash&) const = default;
};

using SipKey = std::array<uint8_t, 16>;

// SipHash with `c` compression and `d` finalization rounds (Aumasson & Bernstein 2012).
// 64-bit output variant.
uint64_t SipHash64(int c, int d, const SipKey& key, const void* data, size_t len) noexcept;
// 128-bit output variant (the reference implementation's outlen = 16).
KeyHash SipHash128(int c, int d, const SipKey& key, const void* data, size_t len) noexcept;
// SipHash128(1, 3, ...) with the rounds unrolled: the index hash.
KeyHash SipHash13x128(const SipKey& key, const void* data, size_t len) noexcept;

// Derives the index-hash key from the cluster secret:
//   first 16 bytes of SHA-256("peerbloom index key v1" || 0x00 || secret).
// The empty secret is allowed (a test or single-node setup) and gives a fixed key.
SipKey DeriveIndexKey(std::string_view cluster_secret);

// Hashes key bytes for filter indexing. Thread-safety: immutable, safe to share.
class IndexHasher {
 public:
  IndexHasher() : IndexHasher(DeriveIndexKey("")) {}
  explicit IndexHasher(const SipKey& key) noexcept : key_(key) {}

  // SipHash-1-3-128 of the key bytes.
  KeyHash Hash(std::string_view key_bytes) const noexcept {
    return SipHash13x128(key_, key_bytes.data(), key_bytes.size());
  }
  const SipKey& key() const noexcept { return key_; }

 private:
  SipKey key_;
};

}  // namespace peerbloom

#endif  // PEERBLOOM_HASH_H_
