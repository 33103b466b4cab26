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
    : divisor_(divisor), b_(CeilLog2(divisor)), cutoff_((uint64_t{1} << b_) - divisor), out_(out) {}

// Bits collect in a 64-bit word that is flushed whole; n <= kPeekBits.
void GolombWriter::PutBits(uint64_t value, unsigned n) {
  if (n == 0) return;
  acc_ |= value << pending_;
  if (pending_ + n < 64) {
    pending_ += n;
    return;
  }
  char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(acc_ >> (8 * i));
  out_->append(bytes, sizeof(bytes));
  acc_ = value >> (64 - pending_);  // pending_ >= 7 here, as n <= 57
  pending_ = pending_ + n - 64;
}

void GolombWriter::PutOnes(uint64_t n) {
  for (; n >= 32; n -= 32) PutBits(0xffffffffULL, 32);
  PutBits((uint64_t{1} << n) - 1, static_cast<unsigned>(n));
}

void GolombWriter::Add(uint64_t gap) {
  // A Rice divisor (cutoff 0) divides by shifting.
  const uint64_t q = cutoff_ == 0 ? gap >> b_ : gap / divisor_;
  const uint64_t r = gap - q * divisor_;
  // Remainder bits as they go on the wire: r alone, or w >> 1 followed by w & 1.
  unsigned rem_bits = 0;
  uint64_t rem = 0;
  if (b_ > 0 && r < cutoff_) {
    rem_bits = b_ - 1;
    rem = r;
  } else if (b_ > 0) {
    const uint64_t w = r + cutoff_;
    rem_bits = b_;
    rem = (w >> 1) | ((w & 1) << (b_ - 1));
  }
  if (q + 1 + rem_bits <= kPeekBits) {  // the common case: one code, one write
    PutBits(((uint64_t{1} << q) - 1) | (rem << (q + 1)), static_cast<unsigned>(q + 1) + rem_bits);
    return;
  }
  PutOnes(q);
  PutBits(0, 1);
  PutBits(rem, rem_bits);
}

void GolombWriter::Finish() {
  for (; pending_ > 0; pending_ = pending_ > 8 ? pending_ - 8 : 0) {
    out_->push_back(static_cast<char>(acc_ & 0xff));
    acc_ >>= 8;
  }
  acc_ = 0;
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
  uint64_t q = 0;
  uint64_t r = 0;
  const uint64_t word = Peek();
  const auto ones = static_cast<unsigned>(std::countr_one(word));
  if (ones + 1 + b_ <= kPeekBits) {  // the common case: the whole code is in one peek
    q = ones;
    const uint64_t rest = word >> (ones + 1);
    unsigned used = ones + 1;
    if (b_ > 0) {
      r = LowBits(rest, b_ - 1);
      used += b_ - 1;
      if (r >= cutoff_) {
        r = ((r << 1) | ((rest >> (b_ - 1)) & 1)) - cutoff_;
        ++used;
      }
    }
    bit_pos_ += used;
    if (bit_pos_ > bit_len_) return false;
  } else if (!NextSlow(max_gap / divisor_, &q, &r)) {
    return false;
  }
  const uint64_t value = q * divisor_ + r;  // q <= max_gap / divisor_ + 56: no overflow
  if (value > max_gap) return false;
  *gap = value;
  return true;
}

// A long unary run, or a code that straddles the peek window.
bool GolombReader::NextSlow(uint64_t max_q, uint64_t* q_out, uint64_t* r_out) noexcept {
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
  *q_out = q;
  *r_out = r;
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
