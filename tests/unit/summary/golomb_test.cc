#include "lib/summary/golomb.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace peerbloom::summary_internal {
namespace {

std::string EncodeGapsWith(const std::vector<uint64_t>& gaps, uint64_t divisor) {
  std::string out;
  GolombWriter writer(divisor, &out);
  for (uint64_t g : gaps) writer.Add(g);
  writer.Finish();
  return out;
}

// The divisor is the Gallager-van Voorhis optimum for geometric gaps: the M with
// (1-p)^M + (1-p)^(M+1) <= 1 < (1-p)^(M-1) + (1-p)^M, about ln 2 * m / n while sparse.
TEST(GolombDivisor, FollowsGallagerVanVoorhis) {
  EXPECT_EQ(GolombDivisor(1000, 0), 1u);
  EXPECT_EQ(GolombDivisor(1000, 500), 1u);
  EXPECT_EQ(GolombDivisor(1000, 1000), 1u);
  const uint64_t m = uint64_t{1} << 30;
  for (double ratio : {2.5, 4.0, 16.0, 100.0, 128.0, 200.0, 1000.0}) {
    const auto n = static_cast<uint64_t>(static_cast<double>(m) / ratio);
    const double q = 1.0 - static_cast<double>(n) / static_cast<double>(m);
    const auto divisor = static_cast<double>(GolombDivisor(m, n));
    EXPECT_LE(std::pow(q, divisor) + std::pow(q, divisor + 1), 1.0) << "ratio " << ratio;
    EXPECT_GT(std::pow(q, divisor - 1) + std::pow(q, divisor), 1.0) << "ratio " << ratio;
    if (ratio >= 100) {
      EXPECT_NEAR(divisor, std::log(2.0) * ratio, 0.01 * ratio) << "ratio " << ratio;
    }
  }
}

// Hand-checked bits. Divisor 3: b = 2, cutoff 1. Gap 0 -> q 0, r 0 < 1: "0" then r in 1 bit
// "0". Gap 4 -> q 1, r 1 >= 1: w = 2, "10" then w>>1 = 1 in 1 bit "1", then w&1 "0".
// Stream (first bit first): 0 0 | 1 0 1 0 -> byte 0b00010100 = 0x14.
TEST(GolombWriter, HandCheckedBits) {
  EXPECT_EQ(EncodeGapsWith({0, 4}, 3), std::string("\x14", 1));
  // Divisor 4 (Rice, 2 remainder bits): gap 6 -> q 1 "10", r 2 -> w = 2: "1" then "0".
  // Stream: 1 0 1 0 -> 0b0101 = 0x05.
  EXPECT_EQ(EncodeGapsWith({6}, 4), std::string("\x05", 1));
  // Divisor 1: unary only. Gaps 2, 0: "110" "0" -> 0b0011 = 0x03.
  EXPECT_EQ(EncodeGapsWith({2, 0}, 1), std::string("\x03", 1));
}

TEST(GolombReader, RoundTripsRandomGapsForManyDivisors) {
  std::mt19937_64 rng(1);
  for (uint64_t divisor : {1ull, 2ull, 3ull, 5ull, 64ull, 89ull, 1000ull, 1ull << 20}) {
    std::geometric_distribution<uint64_t> geo(1.0 / (1.0 + static_cast<double>(divisor)));
    std::vector<uint64_t> gaps(2000);
    for (uint64_t& g : gaps) g = geo(rng);
    gaps.push_back(500 * divisor);  // a long unary run, past one 57-bit peek
    const std::string codes = EncodeGapsWith(gaps, divisor);
    GolombReader reader(codes, divisor);
    for (uint64_t want : gaps) {
      uint64_t got = 0;
      ASSERT_TRUE(reader.Next(uint64_t{1} << 40, &got)) << "divisor " << divisor;
      ASSERT_EQ(got, want) << "divisor " << divisor;
    }
    EXPECT_TRUE(reader.AtCleanEnd());
  }
}

TEST(GolombReader, RefusesGapsAboveTheBound) {
  const std::string codes = EncodeGapsWith({100}, 8);
  uint64_t got = 0;
  EXPECT_FALSE(GolombReader(codes, 8).Next(99, &got));
  EXPECT_TRUE(GolombReader(codes, 8).Next(100, &got));
  EXPECT_EQ(got, 100u);
}

TEST(GolombReader, NeverReadsPastTheEnd) {
  const std::string codes = EncodeGapsWith({7, 300, 2, 90000}, 13);
  for (size_t len = 0; len < codes.size(); ++len) {
    GolombReader reader(std::string_view(codes).substr(0, len), 13);
    uint64_t got = 0;
    int decoded = 0;
    while (decoded < 4 && reader.Next(uint64_t{1} << 40, &got)) ++decoded;
    EXPECT_LT(decoded, 4) << "prefix of " << len << " bytes decoded everything";
  }
  // All ones: the unary run ends at the end of the data and is refused.
  const std::string ones(64, '\xff');
  uint64_t got = 0;
  EXPECT_FALSE(GolombReader(ones, 1).Next(uint64_t{1} << 40, &got));
}

TEST(GolombReader, CleanEndRejectsPaddingAndTrailingBytes) {
  std::string codes = EncodeGapsWith({3}, 4);  // 4 bits: "0" "11" ... padded
  GolombReader clean(codes, 4);
  uint64_t got = 0;
  ASSERT_TRUE(clean.Next(100, &got));
  EXPECT_TRUE(clean.AtCleanEnd());
  std::string dirty = codes;
  dirty[0] = static_cast<char>(dirty[0] | 0x80);
  GolombReader padded(dirty, 4);
  ASSERT_TRUE(padded.Next(100, &got));
  EXPECT_FALSE(padded.AtCleanEnd());
  const std::string longer = codes + std::string(1, '\0');
  GolombReader trailing(longer, 4);
  ASSERT_TRUE(trailing.Next(100, &got));
  EXPECT_FALSE(trailing.AtCleanEnd());
}

// Eight zero gaps take exactly 8 * MinGolombCodeBits bits: one byte per code bit.
TEST(MinGolombCodeBits, IsTheShortestCode) {
  struct Case {
    uint64_t divisor;
    unsigned bits;
  } cases[] = {{1, 1}, {2, 2}, {3, 2}, {4, 3}, {5, 3}, {89, 7}, {128, 8}};
  for (const auto& c : cases) {
    EXPECT_EQ(MinGolombCodeBits(c.divisor), c.bits) << "divisor " << c.divisor;
    const std::string out = EncodeGapsWith(std::vector<uint64_t>(8, 0), c.divisor);
    EXPECT_EQ(out.size(), c.bits) << "divisor " << c.divisor;
  }
}

}  // namespace
}  // namespace peerbloom::summary_internal
