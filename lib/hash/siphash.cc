// SipHash, written from the description in Aumasson & Bernstein, "SipHash: a fast
// short-input PRF" (INDOCRYPT 2012). Words are read little-endian on every host.
//
// The round counts are template parameters for the variants in use (1-3 for the index hash,
// 2-4 for reference vectors) so the compiler unrolls the rounds and keeps the state in
// registers; other counts take a generic path. bench/hash_bench measures the result.
#include <bit>
#include <cstring>

#include "peerbloom/hash.h"

namespace peerbloom {
namespace {

inline uint64_t LoadLe64(const uint8_t* p) noexcept {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

// The last 0-7 bytes of the message, little-endian, with the length's low byte on top.
inline uint64_t LastBlock(const uint8_t* tail, size_t len) noexcept {
  uint64_t b = static_cast<uint64_t>(len & 0xff) << 56;
  switch (len & 7) {
    case 7:
      b |= static_cast<uint64_t>(tail[6]) << 48;
      [[fallthrough]];
    case 6:
      b |= static_cast<uint64_t>(tail[5]) << 40;
      [[fallthrough]];
    case 5:
      b |= static_cast<uint64_t>(tail[4]) << 32;
      [[fallthrough]];
    case 4:
      b |= static_cast<uint64_t>(tail[3]) << 24;
      [[fallthrough]];
    case 3:
      b |= static_cast<uint64_t>(tail[2]) << 16;
      [[fallthrough]];
    case 2:
      b |= static_cast<uint64_t>(tail[1]) << 8;
      [[fallthrough]];
    case 1:
      b |= static_cast<uint64_t>(tail[0]);
      break;
    case 0:
      break;
  }
  return b;
}

struct SipState {
  uint64_t v0, v1, v2, v3;

  inline void Round() noexcept {
    v0 += v1;
    v1 = std::rotl(v1, 13);
    v1 ^= v0;
    v0 = std::rotl(v0, 32);
    v2 += v3;
    v3 = std::rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = std::rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = std::rotl(v1, 17);
    v1 ^= v2;
    v2 = std::rotl(v2, 32);
  }
  inline void Rounds(int n) noexcept {
    for (int i = 0; i < n; ++i) Round();
  }
  uint64_t Fold() const noexcept { return v0 ^ v1 ^ v2 ^ v3; }
};

// Initializes and absorbs the whole message, leaving the state ready for finalization.
// C < 0 means "use the run-time count c".
template <int C>
inline SipState Absorb(int c, const SipKey& key, const void* data, size_t len, bool wide) noexcept {
  const int rounds = C >= 0 ? C : c;
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
    s.Rounds(rounds);
    s.v0 ^= m;
  }
  const uint64_t b = LastBlock(in + full, len);
  s.v3 ^= b;
  s.Rounds(rounds);
  s.v0 ^= b;
  return s;
}

template <int C, int D>
inline KeyHash Wide(int c, int d, const SipKey& key, const void* data, size_t len) noexcept {
  const int rounds = D >= 0 ? D : d;
  SipState s = Absorb<C>(c, key, data, len, /*wide=*/true);
  s.v2 ^= 0xee;
  s.Rounds(rounds);
  KeyHash out;
  out.h1 = s.Fold();
  s.v1 ^= 0xdd;
  s.Rounds(rounds);
  out.h2 = s.Fold();
  return out;
}

}  // namespace

uint64_t SipHash64(int c, int d, const SipKey& key, const void* data, size_t len) noexcept {
  SipState s = Absorb<-1>(c, key, data, len, /*wide=*/false);
  s.v2 ^= 0xff;
  s.Rounds(d);
  return s.Fold();
}

KeyHash SipHash128(int c, int d, const SipKey& key, const void* data, size_t len) noexcept {
  if (c == 1 && d == 3) return Wide<1, 3>(c, d, key, data, len);
  if (c == 2 && d == 4) return Wide<2, 4>(c, d, key, data, len);
  return Wide<-1, -1>(c, d, key, data, len);
}

KeyHash SipHash13x128(const SipKey& key, const void* data, size_t len) noexcept {
  return Wide<1, 3>(1, 3, key, data, len);
}

}  // namespace peerbloom
