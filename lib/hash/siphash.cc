// SipHash, written from the description in Aumasson & Bernstein, "SipHash: a fast
// short-input PRF" (INDOCRYPT 2012). Words are read little-endian on every host.
#include <cstring>

#include "peerbloom/hash.h"

namespace peerbloom {
namespace {

inline uint64_t Rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

inline uint64_t LoadLe64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

struct SipState {
  uint64_t v0, v1, v2, v3;

  void Round() {
    v0 += v1;
    v1 = Rotl(v1, 13);
    v1 ^= v0;
    v0 = Rotl(v0, 32);
    v2 += v3;
    v3 = Rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = Rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = Rotl(v1, 17);
    v1 ^= v2;
    v2 = Rotl(v2, 32);
  }
  void Rounds(int n) {
    for (int i = 0; i < n; ++i) Round();
  }
  uint64_t Fold() const { return v0 ^ v1 ^ v2 ^ v3; }
};

// Initializes and absorbs the whole message, leaving the state ready for finalization.
SipState Absorb(int c, const SipKey& key, const void* data, size_t len, bool wide) {
  const uint64_t k0 = LoadLe64(key.data());
  const uint64_t k1 = LoadLe64(key.data() + 8);
  SipState s{k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL, k0 ^ 0x6c7967656e657261ULL,
             k1 ^ 0x7465646279746573ULL};
  if (wide) s.v1 ^= 0xee;

  const auto* in = static_cast<const uint8_t*>(data);
  const size_t full = len & ~size_t{7};
  for (size_t off = 0; off < full; off += 8) {
    const uint64_t m = LoadLe64(in + off);
    s.v3 ^= m;
    s.Rounds(c);
    s.v0 ^= m;
  }
  // Last block: the remaining bytes, with the length's low byte on top.
  uint64_t b = static_cast<uint64_t>(len & 0xff) << 56;
  for (size_t i = 0; i < (len & 7); ++i) b |= static_cast<uint64_t>(in[full + i]) << (8 * i);
  s.v3 ^= b;
  s.Rounds(c);
  s.v0 ^= b;
  return s;
}

}  // namespace

uint64_t SipHash64(int c, int d, const SipKey& key, const void* data, size_t len) noexcept {
  SipState s = Absorb(c, key, data, len, /*wide=*/false);
  s.v2 ^= 0xff;
  s.Rounds(d);
  return s.Fold();
}

KeyHash SipHash128(int c, int d, const SipKey& key, const void* data, size_t len) noexcept {
  SipState s = Absorb(c, key, data, len, /*wide=*/true);
  s.v2 ^= 0xee;
  s.Rounds(d);
  KeyHash out;
  out.h1 = s.Fold();
  s.v1 ^= 0xdd;
  s.Rounds(d);
  out.h2 = s.Fold();
  return out;
}

}  // namespace peerbloom
