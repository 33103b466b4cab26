#include "peerbloom/bloom_filter.h"

#include <cmath>
#include <limits>
#include <string>

namespace peerbloom {

std::string SizeText(unsigned log2, unsigned multiplier) {
  const std::string power = "2^" + std::to_string(log2);
  return multiplier == 1 ? power : std::to_string(multiplier) + " x " + power;
}

Status CheckSizeMultiplier(unsigned multiplier) {
  if (!IsValidSizeMultiplier(multiplier)) {
    return Status::InvalidArgument("size multiplier '" + std::to_string(multiplier) +
                                   "' is not odd in [1, " + std::to_string(kMaxSizeMultiplier) +
                                   "]");
  }
  return Status::Ok();
}

BloomFilter::BloomFilter(unsigned log2_bits, unsigned k, unsigned multiplier)
    : log2_bits_(log2_bits),
      multiplier_(multiplier),
      k_(k),
      reduce_(log2_bits, multiplier),
      words_((uint64_t{multiplier} << log2_bits) / 64, 0) {}

Status BloomFilter::Create(unsigned log2_bits, unsigned k, BloomFilter* out) {
  return Create(log2_bits, k, 1, out);
}

Status BloomFilter::Create(unsigned log2_bits, unsigned k, unsigned multiplier, BloomFilter* out) {
  if (log2_bits < kMinLog2Bits || log2_bits > kMaxLog2Bits) {
    return Status::InvalidArgument("log2 of filter bits '" + std::to_string(log2_bits) +
                                   "' is outside [" + std::to_string(kMinLog2Bits) + ", " +
                                   std::to_string(kMaxLog2Bits) + "]");
  }
  if (k < 1 || k > kMaxHashes) {
    return Status::InvalidArgument("hash count '" + std::to_string(k) + "' is outside [1, " +
                                   std::to_string(kMaxHashes) + "]");
  }
  PEERBLOOM_RETURN_IF_ERROR(CheckSizeMultiplier(multiplier));
  *out = BloomFilter(log2_bits, k, multiplier);
  return Status::Ok();
}

Status BloomFilter::Union(const BloomFilter& other) {
  if (!SameGeometry(other)) {
    return Status::InvalidArgument("union of filters with different geometry");
  }
  for (size_t i = 0; i < words_.size(); ++i) words_[i] |= other.words_[i];
  return Status::Ok();
}

void BloomFilter::Fold() noexcept {
  if (log2_bits_ <= kMinLog2Bits) return;  // REQUIRES violated: keep a usable filter
  // c * 2^(j-6) words with j >= 7: an even count, and the halves are c * 2^(j-1) bits.
  const size_t half = words_.size() / 2;
  for (size_t i = 0; i < half; ++i) words_[i] |= words_[half + i];
  words_.resize(half);
  --log2_bits_;
  reduce_ = SizeReduction(log2_bits_, multiplier_);
}

Status BloomFilter::FoldTo(unsigned log2_bits) {
  if (log2_bits > log2_bits_ || log2_bits < kMinLog2Bits) {
    return Status::InvalidArgument("cannot fold a filter of " + SizeText(log2_bits_, multiplier_) +
                                   " bits to " + SizeText(log2_bits, multiplier_));
  }
  while (log2_bits_ > log2_bits) Fold();
  return Status::Ok();
}

uint64_t BloomFilter::PopCount() const noexcept {
  uint64_t n = 0;
  for (uint64_t w : words_) n += std::popcount(w);
  return n;
}

double BloomFilter::EstimatedItems() const noexcept {
  const double m = static_cast<double>(bits());
  const double x = static_cast<double>(PopCount());
  if (x >= m) return std::numeric_limits<double>::infinity();
  return -(m / k_) * std::log1p(-x / m);
}

double BloomFilter::EstimatedFpr() const noexcept { return std::pow(FillRatio(), k_); }

}  // namespace peerbloom
