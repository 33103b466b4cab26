// The in-packet filter of visited nodes (relay_message.h). Positions come from the node's
// index hash, remixed with the message's salt, reduced to m bits with a multiply-shift
// (Lemire's "fastrange"), so m need not be a power of two and a filter is a whole number of
// bytes.
#include <algorithm>
#include <cmath>
#include <string>

#include "peerbloom/relay_message.h"

namespace peerbloom {
namespace {

// The splitmix64 finalizer (Steele, Lea, Flood 2014): a bijection that spreads every input
// bit over the output, so salting both halves gives unrelated probe sequences per message.
uint64_t Mix64(uint64_t x) noexcept {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

template <typename Fn>
void ForEachPosition(const KeyHash& node, uint64_t salt, unsigned k, uint64_t bits, Fn&& fn) {
  uint64_t g = Mix64(node.h1 ^ salt);
  const uint64_t step = Mix64(node.h2 + salt) | 1;
  for (unsigned i = 0; i < k; ++i, g += step) {
    fn(static_cast<uint64_t>((static_cast<unsigned __int128>(g) * bits) >> 64));
  }
}

}  // namespace

VisitedFilterSize SizeVisitedFilter(uint32_t hop_limit, double fp_rate) noexcept {
  const double n = std::max<uint32_t>(hop_limit, 1);
  const double ln2 = std::log(2.0);
  const double bits = std::ceil(-n * std::log(fp_rate) / (ln2 * ln2));
  VisitedFilterSize size;
  size.bytes =
      std::clamp<size_t>(static_cast<size_t>(std::ceil(bits / 8)), 1, kMaxRelayFilterBytes);
  const double k = std::round(static_cast<double>(size.bytes) * 8 / n * ln2);
  size.k = static_cast<unsigned>(std::clamp(k, 1.0, double{kMaxRelayFilterHashes}));
  return size;
}

double ExpectedFpRate(size_t bytes, unsigned k, uint32_t ids) noexcept {
  const double m = static_cast<double>(bytes) * 8;
  return std::pow(1 - std::exp(-static_cast<double>(k) * ids / m), k);
}

uint64_t VisitedFilterSalt(const SipKey& key, std::string_view origin, uint64_t id) noexcept {
  std::string bytes(origin);
  bytes.push_back('\0');
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>(id >> (8 * i)));
  return SipHash64(1, 3, key, bytes.data(), bytes.size());
}

void VisitedFilterAdd(const KeyHash& node, uint64_t salt, unsigned k,
                      std::string* filter) noexcept {
  char* bits = filter->data();
  ForEachPosition(node, salt, k, filter->size() * 8,
                  [bits](uint64_t pos) { bits[pos >> 3] |= static_cast<char>(1u << (pos & 7)); });
}

bool VisitedFilterMayContain(const KeyHash& node, uint64_t salt, unsigned k,
                             std::string_view filter) noexcept {
  bool all = true;
  ForEachPosition(node, salt, k, filter.size() * 8, [&](uint64_t pos) {
    all = all && (static_cast<unsigned char>(filter[pos >> 3]) >> (pos & 7) & 1) != 0;
  });
  return all;
}

}  // namespace peerbloom
