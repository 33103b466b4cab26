#include "peerbloom/md5.h"

#include <algorithm>
#include <cstring>

namespace peerbloom {
namespace {

// T[i] = floor(2^32 * |sin(i + 1)|), and the per-step rotations, from RFC 1321.
constexpr uint32_t kSine[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};
constexpr int kShift[4][4] = {{7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}};

inline uint32_t Rotl(uint32_t x, int n) noexcept { return (x << n) | (x >> (32 - n)); }

inline uint32_t LoadLe32(const uint8_t* p) noexcept {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

// One 64-byte block into the state. The loop is fully unrolled by the compiler (constant
// trip count, constant tables).
void Compress(uint32_t state[4], const uint8_t* block) noexcept {
  uint32_t m[16];
  for (int i = 0; i < 16; ++i) m[i] = LoadLe32(block + 4 * i);
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
#pragma GCC unroll 64
  for (int i = 0; i < 64; ++i) {
    uint32_t f;
    int g;
    if (i < 16) {
      f = d ^ (b & (c ^ d));
      g = i;
    } else if (i < 32) {
      f = c ^ (d & (b ^ c));
      g = (5 * i + 1) & 15;
    } else if (i < 48) {
      f = b ^ c ^ d;
      g = (3 * i + 5) & 15;
    } else {
      f = c ^ (b | ~d);
      g = (7 * i) & 15;
    }
    const uint32_t rotated = Rotl(a + f + kSine[i] + m[g], kShift[i / 16][i % 4]);
    a = d;
    d = c;
    c = b;
    b += rotated;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
}

// Compress over kMd5Lanes blocks at once, one state per lane.
void CompressLanes(uint32_t state[][4], const uint8_t* const* blocks) noexcept {
  uint32_t m[kMd5Lanes][16];
  uint32_t a[kMd5Lanes], b[kMd5Lanes], c[kMd5Lanes], d[kMd5Lanes];
  for (size_t l = 0; l < kMd5Lanes; ++l) {
    for (int i = 0; i < 16; ++i) m[l][i] = LoadLe32(blocks[l] + 4 * i);
    a[l] = state[l][0];
    b[l] = state[l][1];
    c[l] = state[l][2];
    d[l] = state[l][3];
  }
#pragma GCC unroll 64
  for (int i = 0; i < 64; ++i) {
    const int g = i < 16 ? i : i < 32 ? (5 * i + 1) & 15 : i < 48 ? (3 * i + 5) & 15 : (7 * i) & 15;
    const int s = kShift[i / 16][i % 4];
#pragma GCC unroll 4
    for (size_t l = 0; l < kMd5Lanes; ++l) {
      uint32_t f;
      if (i < 16) {
        f = d[l] ^ (b[l] & (c[l] ^ d[l]));
      } else if (i < 32) {
        f = c[l] ^ (d[l] & (b[l] ^ c[l]));
      } else if (i < 48) {
        f = b[l] ^ c[l] ^ d[l];
      } else {
        f = c[l] ^ (b[l] | ~d[l]);
      }
      const uint32_t rotated = Rotl(a[l] + f + kSine[i] + m[l][g], s);
      a[l] = d[l];
      d[l] = c[l];
      c[l] = b[l];
      b[l] += rotated;
    }
  }
  for (size_t l = 0; l < kMd5Lanes; ++l) {
    state[l][0] += a[l];
    state[l][1] += b[l];
    state[l][2] += c[l];
    state[l][3] += d[l];
  }
}

void StoreDigest(const uint32_t state[4], Md5Digest* out) noexcept {
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) (*out)[4 * i + j] = static_cast<uint8_t>(state[i] >> (8 * j));
  }
}

// MD5 of `head` followed by `data`, `head` being at most one block: the message is never
// copied whole, only block by block.
Md5Digest Md5OfParts(std::string_view head, std::string_view data) noexcept {
  uint32_t state[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  const uint64_t total = uint64_t{head.size()} + data.size();
  uint8_t block[64];
  // The first block: the head, then the data's first bytes.
  size_t fill = head.size();
  if (fill > 0) std::memcpy(block, head.data(), fill);
  size_t left = data.size();
  for (;;) {
    const size_t take = std::min(left, sizeof(block) - fill);
    if (take > 0) std::memcpy(block + fill, p, take);
    p += take;
    left -= take;
    fill += take;
    if (fill < sizeof(block)) break;
    Compress(state, block);
    fill = 0;
    if (left == 0) break;
  }
  // Padding: 0x80, zeros, then the bit length (little-endian) in the last 8 bytes.
  block[fill++] = 0x80;
  if (fill > 56) {
    std::memset(block + fill, 0, sizeof(block) - fill);
    Compress(state, block);
    fill = 0;
  }
  std::memset(block + fill, 0, 56 - fill);
  const uint64_t bits = total * 8;
  for (int i = 0; i < 8; ++i) block[56 + i] = static_cast<uint8_t>(bits >> (8 * i));
  Compress(state, block);
  Md5Digest out;
  StoreDigest(state, &out);
  return out;
}

}  // namespace

void Md5WithPrefixLanes(uint8_t prefix, const std::string_view* data, Md5Digest* out) noexcept {
  // Each lane's message, padded, in at most two blocks: 1 + 118 + 1 + 8 = 128 bytes.
  constexpr size_t kMaxBytes = 118;
  for (size_t l = 0; l < kMd5Lanes; ++l) {
    if (data[l].size() > kMaxBytes) {
      for (size_t k = 0; k < kMd5Lanes; ++k) out[k] = Md5WithPrefix(prefix, data[k]);
      return;
    }
  }
  uint8_t padded[kMd5Lanes][128];
  size_t blocks[kMd5Lanes];
  size_t most = 1;
  for (size_t l = 0; l < kMd5Lanes; ++l) {
    const size_t n = data[l].size() + 1;
    blocks[l] = n + 9 <= 64 ? 1 : 2;
    most = std::max(most, blocks[l]);
    uint8_t* p = padded[l];
    const size_t bytes = 64 * blocks[l];
    p[0] = prefix;
    if (n > 1) std::memcpy(p + 1, data[l].data(), n - 1);
    p[n] = 0x80;
    std::memset(p + n + 1, 0, bytes - 8 - (n + 1));
    const uint64_t bits = uint64_t{n} * 8;
    for (int i = 0; i < 8; ++i) p[bytes - 8 + i] = static_cast<uint8_t>(bits >> (8 * i));
  }
  uint32_t state[kMd5Lanes][4];
  for (auto& s : state) {
    s[0] = 0x67452301;
    s[1] = 0xefcdab89;
    s[2] = 0x98badcfe;
    s[3] = 0x10325476;
  }
  const uint8_t* first[kMd5Lanes];
  for (size_t l = 0; l < kMd5Lanes; ++l) first[l] = padded[l];
  CompressLanes(state, first);
  if (most == 2) {
    // A lane with one block is done: it compresses its own block again, and keeps its state.
    uint32_t done[kMd5Lanes][4];
    std::memcpy(done, state, sizeof(state));
    const uint8_t* second[kMd5Lanes];
    for (size_t l = 0; l < kMd5Lanes; ++l) second[l] = padded[l] + 64 * (blocks[l] - 1);
    CompressLanes(state, second);
    for (size_t l = 0; l < kMd5Lanes; ++l) {
      if (blocks[l] == 1) std::memcpy(state[l], done[l], sizeof(state[l]));
    }
  }
  for (size_t l = 0; l < kMd5Lanes; ++l) StoreDigest(state[l], &out[l]);
}

Md5Digest Md5WithPrefix(uint8_t prefix, std::string_view data) noexcept {
  const auto byte = static_cast<char>(prefix);
  return Md5OfParts(std::string_view(&byte, 1), data);
}

Md5Digest Md5(std::string_view data) noexcept { return Md5OfParts({}, data); }

}  // namespace peerbloom
