#include "lib/summary/golomb.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace peerbloom::summary_internal {
namespace {

// Peek() guarantees this many valid bits: a 64-bit load shifted by at most 7.
constexpr unsigned kPeekBits = 57;

unsigned CeilLog2(uint64_t divisor) noexcept {
  return static_cast<unsigned>(std::bit_width(divisor - 1));
}

uint64_t LowBits(uint64_t value, unsigned n) noexcept {
  return n >= 64 ? value : value & ((uint64_t{1} << n) - 1);
}

}  // namespace

uint64_t GolombDivisor(uint64_t universe, uint64_t count) noexcept {
  if (count == 0 || 2 * count >= universe) return 1;
  const double p = static_cast<double>(count) / static_cast<double>(universe);
  // (1-p)^M + (1-p)^(M+1) <= 1  <=>  M >= log(2 - p) / -log(1 - p).
  const double m = std::ceil(std::log(2.0 - p) / -std::log1p(-p));
  if (!(m >= 1.0)) return 1;
  if (m >= static_cast<double>(universe)) return universe;
  return static_cast<uint64_t>(m);
}

unsigned MinGolombCodeBits(uint64_t divisor) noexcept {
  const unsigned b = CeilLog2(divisor);
  const bool truncated = (uint64_t{1} << b) != divisor;  // some remainders take b - 1 bits
  return 1 + (truncated ? b - 1 : b);
}

GolombWriter::GolombWriter(uint64_t divisor, std::string* out) noexcept
    : divisor_(divisor),
      b_(CeilLog2(divisor)),
      cutoff_((uint64_t{1} << b_) - divisor),
      out_(out) {}

void GolombWriter::PutBits(uint64_t value, unsigned n) {
  if (n == 0) return;
  acc_ |= value << pending_;
  pending_ += n;
  while (pending_ >= 8) {
    out_->push_back(static_cast<char>(acc_ & 0xff));
    acc_ >>= 8;
    pending_ -= 8;
  }
}

void GolombWriter::PutOnes(uint64_t n) {
  for (; n >= 32; n -= 32) PutBits(0xffffffffULL, 32);
  PutBits((uint64_t{1} << n) - 1, static_cast<unsigned>(n));
}

void GolombWriter::Add(uint64_t gap) {
  const uint64_t q = gap / divisor_;
  const uint64_t r = gap - q * divisor_;
  PutOnes(q);
  PutBits(0, 1);
  if (b_ == 0) return;
  if (r < cutoff_) {
    PutBits(r, b_ - 1);
    return;
  }
  const uint64_t w = r + cutoff_;
  PutBits(w >> 1, b_ - 1);
  PutBits(w & 1, 1);
}

void GolombWriter::Finish() {
  if (pending_ > 0) out_->push_back(static_cast<char>(acc_ & 0xff));
  acc_ = 0;
  pending_ = 0;
}

GolombReader::GolombReader(std::string_view codes, uint64_t divisor) noexcept
    : codes_(codes),
      divisor_(divisor),
      b_(CeilLog2(divisor)),
      cutoff_((uint64_t{1} << b_) - divisor),
      bit_len_(uint64_t{codes.size()} * 8) {}

uint64_t GolombReader::Peek() const noexcept {
  const uint64_t byte = bit_pos_ >> 3;
  if (byte >= codes_.size()) return 0;
  uint64_t word = 0;
  const size_t avail = codes_.size() - byte;
  if (avail >= sizeof(word)) {
    std::memcpy(&word, codes_.data() + byte, sizeof(word));
    if constexpr (std::endian::native == std::endian::big) word = __builtin_bswap64(word);
  } else {
    for (size_t i = 0; i < avail; ++i) {
      word |= static_cast<uint64_t>(static_cast<unsigned char>(codes_[byte + i])) << (8 * i);
    }
  }
  return word >> (bit_pos_ & 7);
}

bool GolombReader::ReadBits(unsigned n, uint64_t* value) noexcept {
  *value = LowBits(Peek(), n);
  bit_pos_ += n;
  return bit_pos_ <= bit_len_;
}

bool GolombReader::Next(uint64_t max_gap, uint64_t* gap) noexcept {
  const uint64_t max_q = max_gap / divisor_;
  uint64_t q = 0;
  for (;;) {
    const unsigned ones = static_cast<unsigned>(std::countr_one(Peek()));
    if (ones < kPeekBits) {
      q += ones;
      bit_pos_ += ones + 1;
      break;
    }
    q += kPeekBits;
    bit_pos_ += kPeekBits;
    if (q > max_q || bit_pos_ > bit_len_) return false;
  }
  if (q > max_q || bit_pos_ > bit_len_) return false;
  uint64_t r = 0;
  if (b_ > 0) {
    if (!ReadBits(b_ - 1, &r)) return false;
    if (r >= cutoff_) {
      uint64_t low;
      if (!ReadBits(1, &low)) return false;
      r = ((r << 1) | low) - cutoff_;
    }
  }
  const uint64_t value = q * divisor_ + r;
  if (value > max_gap) return false;
  *gap = value;
  return true;
}

bool GolombReader::AtCleanEnd() const noexcept {
  if ((bit_pos_ + 7) / 8 != codes_.size()) return false;
  const unsigned used = static_cast<unsigned>(bit_pos_ & 7);
  if (used == 0) return true;
  const auto last = static_cast<unsigned char>(codes_.back());
  return (last >> used) == 0;
}

}  // namespace peerbloom::summary_internal
