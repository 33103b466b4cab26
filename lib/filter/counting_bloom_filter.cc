#include "peerbloom/counting_bloom_filter.h"

#include <bit>
#include <cstring>
#include <string>

namespace peerbloom {
namespace {

static_assert(std::endian::native == std::endian::little,
              "projection reads counters as little-endian words");

// Sixteen 4-bit counters in a word -> a 16-bit mask of the non-zero ones (bit j for nibble j).
inline uint64_t NonZeroNibbles(uint64_t w) noexcept {
  uint64_t x = (w | w >> 1 | w >> 2 | w >> 3) & 0x1111111111111111ULL;
  x = (x | x >> 3) & 0x0303030303030303ULL;   // two bits per byte
  x = (x | x >> 6) & 0x000F000F000F000FULL;   // four bits per 16
  x = (x | x >> 12) & 0x000000FF000000FFULL;  // eight bits per 32
  x = (x | x >> 24) & 0xFFFFULL;              // sixteen bits
  return x;
}

}  // namespace

CountingBloomFilter::CountingBloomFilter(unsigned log2_counters, unsigned k, unsigned multiplier)
    : log2_counters_(log2_counters),
      multiplier_(multiplier),
      k_(k),
      reduce_(log2_counters, multiplier),
      cells_((uint64_t{multiplier} << log2_counters) / 2, 0) {}

Status CountingBloomFilter::Create(unsigned log2_counters, unsigned k, CountingBloomFilter* out) {
  return Create(log2_counters, k, 1, out);
}

Status CountingBloomFilter::Create(unsigned log2_counters, unsigned k, unsigned multiplier,
                                   CountingBloomFilter* out) {
  BloomFilter probe;  // reuse the Bloom filter's range checks and messages
  PEERBLOOM_RETURN_IF_ERROR(BloomFilter::Create(kMinLog2Bits, k, &probe));
  if (log2_counters < kMinLog2Bits || log2_counters > kMaxLog2Bits) {
    return Status::InvalidArgument("log2 of counters '" + std::to_string(log2_counters) +
                                   "' is outside [" + std::to_string(kMinLog2Bits) + ", " +
                                   std::to_string(kMaxLog2Bits) + "]");
  }
  PEERBLOOM_RETURN_IF_ERROR(CheckSizeMultiplier(multiplier));
  *out = CountingBloomFilter(log2_counters, k, multiplier);
  return Status::Ok();
}

CountingBloomFilter CountingBloomFilter::Clone() const {
  CountingBloomFilter copy(log2_counters_, k_, multiplier_);
  copy.cells_ = cells_;
  copy.items_ = items_;
  copy.saturated_counters_ = saturated_counters_;
  copy.saturation_events_ = saturation_events_;
  copy.refused_removes_ = refused_removes_;
  return copy;
}

Status CountingBloomFilter::Project(unsigned log2_bits, unsigned multiplier,
                                    BloomFilter* out) const {
  if (log2_bits < kMinLog2Bits || log2_bits > log2_counters_ || multiplier == 0 ||
      multiplier_ % multiplier != 0) {
    return Status::InvalidArgument("cannot project " + SizeText(log2_counters_, multiplier_) +
                                   " counters onto " + SizeText(log2_bits, multiplier) + " bits");
  }
  BloomFilter result(log2_bits, k_, multiplier);
  std::vector<uint64_t>& bits = result.mutable_words();
  const uint64_t out_bits = result.bits();
  const size_t words = cells_.size() / sizeof(uint64_t);  // 16 counters per word
  uint64_t pos = 0;                                       // (16 w) mod out_bits
  for (size_t w = 0; w < words; ++w, pos += 16) {
    if (pos == out_bits) pos = 0;
    uint64_t cells;
    std::memcpy(&cells, cells_.data() + w * sizeof(uint64_t), sizeof(cells));
    if (cells == 0) continue;
    // Counters 16w..16w+15 land on 16 consecutive, 16-aligned bits of the projection (the
    // projection's size is a multiple of 64).
    bits[pos >> 6] |= NonZeroNibbles(cells) << (pos & 63);
  }
  *out = std::move(result);
  return Status::Ok();
}

bool CountingBloomFilter::ProjectedBit(uint64_t pos, uint64_t bits) const noexcept {
  for (uint64_t c = pos; c < counters(); c += bits) {
    if (Counter(c) != 0) return true;
  }
  return false;
}

Status CountingBloomFilter::Restore(std::string_view cells, uint64_t items,
                                    uint64_t saturation_events, uint64_t refused_removes) {
  if (cells.size() != cells_.size()) {
    return Status::Corruption("counter snapshot holds " + std::to_string(cells.size()) +
                              " bytes, filter needs " + std::to_string(cells_.size()));
  }
  std::memcpy(cells_.data(), cells.data(), cells.size());
  items_ = items;
  saturation_events_ = saturation_events;
  refused_removes_ = refused_removes;
  saturated_counters_ = 0;
  for (uint64_t pos = 0; pos < counters(); ++pos) saturated_counters_ += Counter(pos) == kMaxCount;
  return Status::Ok();
}

}  // namespace peerbloom
