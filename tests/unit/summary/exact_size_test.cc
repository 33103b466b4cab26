// Summaries of c x 2^j bits: format 2 on the wire, deltas, and a builder whose counting
// filter is not a power of two.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "peerbloom/summary.h"
#include "tests/unit/summary/message_edit.h"
#include "tests/unit/summary/node_sim.h"
#include "tests/unit/summary/summary_test_util.h"

namespace peerbloom {
namespace {

using testing_util::FilterWithFill;
using testing_util::MakeSummary;

constexpr BodyEncoding kAllEncodings[] = {BodyEncoding::kRaw, BodyEncoding::kZstd,
                                          BodyEncoding::kGolombRice};

std::string Unhex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

std::string Encode(const Summary& s, BodyEncoding e) {
  std::string out;
  EXPECT_TRUE(EncodeSummary(s, &out, e).ok());
  return out;
}

// 3 x 2^6 = 192 bits, k = 1, bits {3, 17, 64, 191}, from "n1", epoch 7, version 42.
Summary GoldenExact() {
  Summary s;
  s.origin = "n1";
  s.epoch = 7;
  s.version = 42;
  s.key_scheme = KeyScheme::kSquidMd5;
  s.estimated_items = 4;
  s.filter = BloomFilter(6, 1, 3);
  for (uint64_t pos : {3, 17, 64, 191}) s.filter.SetBit(pos);
  return s;
}

// Format 2, minimum reader 2, byte 15 = 3; the rest as format 1. If these change, the format
// changed: see lib/summary/format.h.
constexpr std::string_view kExactRaw =
    "5042534d02024200010101010600020307000000000000002a00000000000000"
    "00000000000000000400000000000000582ecb015fb09eb61800000000000000"
    "6e31080002000000000001000000000000000000000000000080b7ad52e4655d"
    "9570";
constexpr std::string_view kExactGolomb =
    "5042534d02024200010101010602020307000000000000002a00000000000000"
    "00000000000000000400000000000000582ecb015fb09eb61400000000000000"
    "6e31040000000000000021000000000000008656bb0d478e24b04da3654e";

TEST(ExactSizeSummary, GoldenBytes) {
  for (std::string_view hex : {kExactRaw, kExactGolomb}) {
    Summary back;
    const Status st = DecodeSummary(Unhex(hex), DecodeLimits{}, &back);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(back.filter, GoldenExact().filter);
  }
  EXPECT_EQ(Encode(GoldenExact(), BodyEncoding::kRaw), Unhex(kExactRaw));
  EXPECT_EQ(Encode(GoldenExact(), BodyEncoding::kGolombRice), Unhex(kExactGolomb));
}

TEST(ExactSizeSummary, VersionsFollowTheSize) {
  const std::string exact =
      Encode(MakeSummary(FilterWithFill(10, 2, 0.05, 1, 5)), BodyEncoding::kGolombRice);
  EXPECT_EQ(exact[4], 2);   // format
  EXPECT_EQ(exact[5], 2);   // minimum reader: a format 1 reader refuses it
  EXPECT_EQ(exact[15], 5);  // multiplier
  const std::string pow2 =
      Encode(MakeSummary(FilterWithFill(10, 2, 0.05, 1)), BodyEncoding::kGolombRice);
  EXPECT_EQ(pow2[4], 1);
  EXPECT_EQ(pow2[5], 1);
  EXPECT_EQ(pow2[15], 0);
  MessageHeader h;
  ASSERT_TRUE(PeekHeader(exact, DecodeLimits{}, &h).ok());
  EXPECT_EQ(h.format_version, 2);
  EXPECT_EQ(h.multiplier, 5u);
  EXPECT_EQ(h.log2_bits, 10u);
}

TEST(ExactSizeSummary, RoundTripsEveryEncodingAndMultiplier) {
  for (unsigned c = 1; c <= kMaxSizeMultiplier; c += 2) {
    const Summary s = MakeSummary(FilterWithFill(9, 2, 0.03, c, c));
    for (BodyEncoding e : kAllEncodings) {
      Summary back;
      const Status st = DecodeSummary(Encode(s, e), DecodeLimits{}, &back);
      ASSERT_TRUE(st.ok()) << st.ToString();
      EXPECT_EQ(back.filter, s.filter) << c;
      EXPECT_EQ(back.filter.multiplier(), c);
    }
  }
}

TEST(ExactSizeSummary, RefusesBadMultipliersAndSizesAboveTheLimit) {
  std::string m = Encode(MakeSummary(FilterWithFill(10, 1, 0.05, 2, 3)), BodyEncoding::kRaw);
  m[15] = 7;  // the raw body no longer matches the size
  testing_util::Reseal(&m);
  Summary out;
  Status st = DecodeSummary(m, DecodeLimits{}, &out);
  EXPECT_TRUE(st.IsCorruption());
  EXPECT_EQ(st.message(), "raw body of '384' bytes, a filter of 7 x 2^10 bits needs '896'");
  m[15] = 65;
  testing_util::Reseal(&m);
  st = DecodeSummary(m, DecodeLimits{}, &out);
  EXPECT_EQ(st.message(), "summary size multiplier '65' is not odd in [1, 63]");
  DecodeLimits limits;
  limits.max_log2_bits = 11;  // 3 x 2^10 bits > 2^11
  st = DecodeSummary(Encode(MakeSummary(FilterWithFill(10, 1, 0.05, 2, 3)), BodyEncoding::kRaw),
                     limits, &out);
  EXPECT_TRUE(st.IsResourceExhausted());
  EXPECT_EQ(st.message(), "summary of 3 x 2^10 bits exceeds the limit of 2^11");
}

// Every truncated prefix of a format 2 message fails; none crashes.
TEST(ExactSizeSummary, TruncatedPrefixesFail) {
  const std::string m =
      Encode(MakeSummary(FilterWithFill(8, 1, 0.05, 4, 9)), BodyEncoding::kGolombRice);
  for (size_t n = 0; n < m.size(); ++n) {
    Summary out;
    EXPECT_FALSE(DecodeSummary(m.substr(0, n), DecodeLimits{}, &out).ok()) << n;
  }
}

TEST(ExactSizeSummary, DeltasCarryTheMultiplier) {
  Summary from = MakeSummary(FilterWithFill(9, 2, 0.05, 6, 13));
  Summary to = from;
  ++to.version;
  std::mt19937_64 rng(3);
  for (int i = 0; i < 40; ++i) to.filter.FlipBit(rng() % to.filter.bits());
  SummaryDelta d;
  ASSERT_TRUE(ComputeDelta(from, to, &d).ok());
  EXPECT_EQ(d.multiplier, 13u);
  std::string bytes;
  ASSERT_TRUE(EncodeDelta(d, &bytes).ok());
  EXPECT_EQ(bytes[5], 2);
  SummaryDelta back;
  ASSERT_TRUE(DecodeDelta(bytes, DecodeLimits{}, &back).ok());
  ASSERT_TRUE(ApplyDelta(back, &from).ok());
  EXPECT_EQ(from.filter, to.filter);
  // The same positions against a base of another size: a gap, never a guess.
  Summary other = MakeSummary(FilterWithFill(9, 2, 0.05, 6, 11));
  other.version = back.base_version;
  EXPECT_TRUE(ApplyDelta(back, &other).IsOutOfRange());
  // A position beyond 13 x 2^9 is refused.
  d.flipped.push_back(13 * 512);
  EXPECT_EQ(EncodeDelta(d, &bytes).message(),
            "delta positions are not strictly ascending below 13 x 2^9");
}

// A node whose counting filter is 15 x 2^J: summaries take the sizes d x 2^j, d | 15, that
// fit the item count; a receiver following fulls and deltas matches the builder, and every
// held key stays present.
TEST(ExactSizeSummary, BuilderOfAnExactSizeFilterFeedsAReceiverExactly) {
  SummaryBuilderOptions options;
  options.origin = "n1";
  options.min_log2_bits = 8;
  testing_util::Node node(16, 2, options, 15);
  testing_util::Receiver receiver;
  std::mt19937_64 rng(8);
  std::vector<uint64_t> seen_sizes;
  for (int round = 0; round < 40; ++round) {
    const int adds = round < 25 ? 900 : 0;
    for (int i = 0; i < adds; ++i) node.Add(KeyHash{rng(), rng()});
    for (int i = 0; round >= 25 && i < 1500 && !node.held.empty(); ++i) {
      node.RemoveAt(rng() % node.held.size());
    }
    Publication p;
    ASSERT_TRUE(node.builder.Publish(&p).ok());
    if (p.changed) receiver.Take(node.builder, p, BodyEncoding::kGolombRice);
    const BloomFilter& f = node.builder.current().filter;
    EXPECT_EQ(15u % f.multiplier(), 0u);
    if (seen_sizes.empty() || seen_sizes.back() != f.bits()) seen_sizes.push_back(f.bits());
    ASSERT_EQ(receiver.summary.filter, f) << round;
    BloomFilter direct;
    ASSERT_TRUE(node.filter.Project(f.log2_bits(), f.multiplier(), &direct).ok());
    ASSERT_EQ(direct, f) << round;
    for (const KeyHash& h : node.held) ASSERT_TRUE(receiver.summary.filter.MayContain(h));
  }
  // It grew and shrank through sizes that are not all powers of two.
  EXPECT_GE(seen_sizes.size(), 3u);
  bool non_power = false;
  for (uint64_t bits : seen_sizes) non_power |= (bits & (bits - 1)) != 0;
  EXPECT_TRUE(non_power);
}

}  // namespace
}  // namespace peerbloom
