// Golomb coding of gaps between ascending positions (Golomb 1966; Gallager & van Voorhis
// 1975), the body coder of sparse summaries and of deltas.
//
// Why: a sparse Bloom filter with k = 1 is a random subset of n of its m positions, so the
// gaps between set positions are close to geometric with p = n/m. A Golomb code with the
// divisor below is within a few hundredths of a bit of that distribution's entropy,
// log2(e * m / n) ~= log2(m / n) + 1.44 bits per position. zstd, a byte-oriented
// dictionary coder, is no entropy coder for such arrays (DESIGN.md measured about 9.2 bits per
// key against 8.1 for gap coding at 1 %).
//
// Bit layout (docs/summary-format.md has the picture): the stream is read least significant
// bit first, byte by byte. A gap g with divisor M >= 1 is q = g / M, r = g % M:
//   q one-bits, then one zero-bit                                   (unary quotient)
//   b = ceil(log2 M), c = 2^b - M                                   (truncated binary)
//   r < c:  r in b - 1 bits, least significant first
//   r >= c: w = r + c, then w >> 1 in b - 1 bits (least significant first), then w & 1
// When M is a power of two, c = 0 and the remainder is always b bits: a Rice code. The last
// byte is padded with zero bits; a decoder rejects non-zero padding and trailing bytes, so
// every position set has exactly one encoding.
#ifndef PEERBLOOM_LIB_SUMMARY_GOLOMB_H_
#define PEERBLOOM_LIB_SUMMARY_GOLOMB_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace peerbloom::summary_internal {

// The divisor for `count` positions spread uniformly over `universe` positions: the smallest
// M with (1-p)^M + (1-p)^(M+1) <= 1, p = count / universe (Gallager & van Voorhis), which is
// optimal for geometric gaps. 1 when count is 0 or p >= 1/2. REQUIRES: count <= universe.
uint64_t GolombDivisor(uint64_t universe, uint64_t count) noexcept;

// The fewest bits any gap costs under divisor M: one unary stop bit plus b - 1 remainder
// bits, or b when M is a power of two. A decoder uses it to refuse a count the body cannot
// hold before it allocates anything.
unsigned MinGolombCodeBits(uint64_t divisor) noexcept;

// Appends Golomb codes to a string. REQUIRES: divisor >= 1.
class GolombWriter {
 public:
  GolombWriter(uint64_t divisor, std::string* out) noexcept;
  void Add(uint64_t gap);
  // Pads the last byte with zero bits. Call once, after the last Add().
  void Finish();

 private:
  void PutBits(uint64_t value, unsigned n);
  void PutOnes(uint64_t n);

  uint64_t divisor_;
  unsigned b_;       // ceil(log2 divisor)
  uint64_t cutoff_;  // 2^b - divisor
  std::string* out_;
  uint64_t acc_ = 0;  // pending bits, least significant first
  unsigned pending_ = 0;
};

// Reads Golomb codes from a byte string without ever reading past its end.
class GolombReader {
 public:
  // REQUIRES: divisor >= 1.
  GolombReader(std::string_view codes, uint64_t divisor) noexcept;
  // The next gap. False (and the reader is then unusable) when the codes run out or the
  // quotient would make the gap exceed `max_gap`.
  bool Next(uint64_t max_gap, uint64_t* gap) noexcept;
  // True when every byte was consumed and the padding bits are zero.
  bool AtCleanEnd() const noexcept;

 private:
  // The next up to 57 bits from the cursor, zeros past the end.
  uint64_t Peek() const noexcept;
  bool ReadBits(unsigned n, uint64_t* value) noexcept;
  bool NextSlow(uint64_t max_q, uint64_t* q, uint64_t* r) noexcept;

  std::string_view codes_;
  uint64_t divisor_;
  unsigned b_;
  uint64_t cutoff_;
  uint64_t bit_pos_ = 0;
  uint64_t bit_len_;
};

}  // namespace peerbloom::summary_internal

#endif  // PEERBLOOM_LIB_SUMMARY_GOLOMB_H_
