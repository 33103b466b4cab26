#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "lib/summary/format.h"
#include "peerbloom/summary.h"
#include "tests/unit/summary/message_edit.h"
#include "tests/unit/summary/summary_test_util.h"

namespace peerbloom {
namespace {

using testing_util::ExpectSameSummary;
using testing_util::FilterWithFill;
using testing_util::MakeSummary;

constexpr BodyEncoding kAllEncodings[] = {BodyEncoding::kRaw, BodyEncoding::kZstd,
                                          BodyEncoding::kGolombRice};

std::string Encode(const Summary& s, std::optional<BodyEncoding> force) {
  std::string bytes;
  EXPECT_TRUE(EncodeSummary(s, &bytes, force).ok());
  return bytes;
}

TEST(SummaryCodec, RoundTripsEveryEncodingAtEverySizeAndFill) {
  uint64_t seed = 0;
  for (unsigned log2_bits : {6u, 10u, 16u, 20u}) {
    for (double fill : {0.0, 0.0005, 0.01, 0.5, 1.0}) {
      for (unsigned k : {1u, 3u}) {
        const Summary s = MakeSummary(FilterWithFill(log2_bits, k, fill, ++seed));
        for (std::optional<BodyEncoding> force :
             {std::optional<BodyEncoding>(), std::optional(BodyEncoding::kRaw),
              std::optional(BodyEncoding::kZstd), std::optional(BodyEncoding::kGolombRice)}) {
          SCOPED_TRACE("log2 " + std::to_string(log2_bits) + " fill " + std::to_string(fill) +
                       " k " + std::to_string(k) + " encoding " +
                       (force ? std::string(BodyEncodingName(*force)) : "auto"));
          Summary back;
          const Status st = DecodeSummary(Encode(s, force), DecodeLimits{}, &back);
          ASSERT_TRUE(st.ok()) << st.ToString();
          ExpectSameSummary(s, back);
        }
      }
    }
  }
}

TEST(SummaryCodec, AutomaticEncodingIsTheSmallest) {
  for (double fill : {0.0, 0.002, 0.02, 0.3, 0.5, 1.0}) {
    const Summary s = MakeSummary(FilterWithFill(16, 1, fill, 99));
    size_t smallest = SIZE_MAX;
    for (BodyEncoding e : kAllEncodings) smallest = std::min(smallest, Encode(s, e).size());
    const std::string chosen = Encode(s, std::nullopt);
    EXPECT_EQ(chosen.size(), smallest) << "fill " << fill;
  }
  // Sparse filters pick the gap coder; random half-full ones cannot beat raw.
  MessageHeader h;
  ASSERT_TRUE(PeekHeader(Encode(MakeSummary(FilterWithFill(16, 1, 0.01, 5)), std::nullopt),
                         DecodeLimits{}, &h)
                  .ok());
  EXPECT_EQ(h.body_encoding, BodyEncoding::kGolombRice);
  ASSERT_TRUE(PeekHeader(Encode(MakeSummary(FilterWithFill(16, 1, 0.5, 5)), std::nullopt),
                         DecodeLimits{}, &h)
                  .ok());
  EXPECT_EQ(h.body_encoding, BodyEncoding::kRaw);
}

// The header's byte layout, field by field, as docs/summary-format.md draws it.
TEST(SummaryCodec, HeaderLayoutMatchesTheSpecification) {
  Summary s = MakeSummary(FilterWithFill(8, 3, 0.1, 3), 0x0102030405060708ULL);
  s.epoch = 0x1112131415161718ULL;
  s.estimated_items = 0x2122232425262728ULL;
  const std::string m = Encode(s, BodyEncoding::kRaw);
  const auto u8 = [&](size_t off) { return static_cast<uint8_t>(m[off]); };
  const auto u64 = [&](size_t off) { return LoadFixed(m.data() + off, 8); };
  EXPECT_EQ(m.substr(0, 4), "PBSM");
  EXPECT_EQ(u8(4), 1);  // format version
  EXPECT_EQ(u8(5), 1);  // minimum reader version
  EXPECT_EQ(LoadFixed(m.data() + 6, 2), 64 + s.origin.size());
  EXPECT_EQ(u8(8), 1);   // kind: full summary
  EXPECT_EQ(u8(9), 1);   // key scheme: squid-md5
  EXPECT_EQ(u8(10), 1);  // hash scheme: siphash-1-3 x2
  EXPECT_EQ(u8(11), 3);  // k
  EXPECT_EQ(u8(12), 8);  // log2 bits
  EXPECT_EQ(u8(13), 0);  // body encoding: raw
  EXPECT_EQ(u8(14), s.origin.size());
  EXPECT_EQ(u8(15), 0);  // reserved
  EXPECT_EQ(u64(16), s.epoch);
  EXPECT_EQ(u64(24), s.version);
  EXPECT_EQ(u64(32), 0u);  // base version
  EXPECT_EQ(u64(40), s.estimated_items);
  EXPECT_EQ(u64(48), FilterDigest(s.filter));
  EXPECT_EQ(u64(56), 32u);  // body: 256 bits
  EXPECT_EQ(m.substr(64, s.origin.size()), s.origin);
  EXPECT_EQ(u64(64 + s.origin.size()), s.filter.words()[0]);
  EXPECT_EQ(m.size(), 64 + s.origin.size() + 32 + 8);
  EXPECT_EQ(u64(m.size() - 8),
            summary_internal::MessageChecksum(std::string_view(m).substr(0, m.size() - 8)));
}

TEST(SummaryCodec, RefusesAMinimumReaderVersionAboveItsOwn) {
  std::string m = Encode(MakeSummary(FilterWithFill(10, 1, 0.05, 4)), std::nullopt);
  m[4] = 4;
  m[5] = 3;
  testing_util::Reseal(&m);
  Summary out;
  const Status st = DecodeSummary(m, DecodeLimits{}, &out);
  EXPECT_TRUE(st.IsNotSupported());
  EXPECT_EQ(st.message(),
            "summary format version '4' needs reader version '3', this reader is version '2'");
  MessageHeader h;
  EXPECT_TRUE(PeekHeader(m, DecodeLimits{}, &h).IsNotSupported());
}

// A newer writer appends a header field after the origin and says it older readers may read
// it: they skip the field by the header length and decode the rest.
TEST(SummaryCodec, ReadsANewerFormatThatAllowsIt) {
  const Summary s = MakeSummary(FilterWithFill(12, 2, 0.02, 8));
  for (BodyEncoding e : kAllEncodings) {
    const std::string old = Encode(s, e);
    const size_t header = testing_util::HeaderLength(old);
    std::string m =
        old.substr(0, header) + std::string("\x05\x06\x07\x08\x09", 5) + old.substr(header);
    m[4] = 2;
    testing_util::StoreFixed(&m, testing_util::kHeaderLengthOffset, header + 5, 2);
    testing_util::Reseal(&m);
    Summary back;
    const Status st = DecodeSummary(m, DecodeLimits{}, &back);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ExpectSameSummary(s, back);
    MessageHeader h;
    ASSERT_TRUE(PeekHeader(m, DecodeLimits{}, &h).ok());
    EXPECT_EQ(h.format_version, 2);
  }
}

TEST(SummaryCodec, PeekHeaderTellsWhatAMessageIs) {
  const Summary s = MakeSummary(FilterWithFill(12, 2, 0.02, 8), 9);
  MessageHeader h;
  ASSERT_TRUE(PeekHeader(Encode(s, BodyEncoding::kZstd), DecodeLimits{}, &h).ok());
  EXPECT_EQ(h.kind, MessageKind::kFullSummary);
  EXPECT_EQ(h.format_version, 1);
  EXPECT_EQ(h.origin, s.origin);
  EXPECT_EQ(h.epoch, 7u);
  EXPECT_EQ(h.version, 9u);
  EXPECT_EQ(h.base_version, 0u);
  EXPECT_EQ(h.k, 2u);
  EXPECT_EQ(h.log2_bits, 12u);
  EXPECT_EQ(h.body_encoding, BodyEncoding::kZstd);
}

TEST(SummaryCodec, EncodeRefusesWhatCannotTravel) {
  Summary s = MakeSummary(FilterWithFill(8, 1, 0.1, 1));
  std::string out;
  for (const char* bad : {"", "has space", "slash/", "é"}) {
    s.origin = bad;
    const Status st = EncodeSummary(s, &out);
    EXPECT_TRUE(st.IsInvalidArgument()) << bad;
  }
  s.origin = std::string(kMaxNodeIdBytes + 1, 'a');
  EXPECT_TRUE(EncodeSummary(s, &out).IsInvalidArgument());
  s.origin = std::string(kMaxNodeIdBytes, 'a');
  EXPECT_TRUE(EncodeSummary(s, &out).ok());
}

TEST(SummaryCodec, NodeIdsAndEncodingNames) {
  EXPECT_TRUE(IsValidNodeId("cache-1.example.org:7000"));
  EXPECT_TRUE(IsValidNodeId("A_b"));
  EXPECT_FALSE(IsValidNodeId(""));
  EXPECT_FALSE(IsValidNodeId("a b"));
  EXPECT_FALSE(IsValidNodeId(std::string("a\0b", 3)));
  for (BodyEncoding e : kAllEncodings) EXPECT_EQ(ParseBodyEncoding(BodyEncodingName(e)), e);
  EXPECT_EQ(BodyEncodingName(BodyEncoding::kGolombRice), "golomb-rice");
  EXPECT_FALSE(ParseBodyEncoding("gzip").has_value());
}

TEST(SummaryCodec, DigestIsTheXorOfPositionTerms) {
  BloomFilter f(8, 1);
  EXPECT_EQ(FilterDigest(f), 0u);
  f.SetBit(3);
  f.SetBit(200);
  EXPECT_EQ(FilterDigest(f), PositionDigest(3) ^ PositionDigest(200));
  // SplitMix64's first output for seed 0 (Vigna's reference): the finalizer of 0 + gamma.
  EXPECT_EQ(PositionDigest(0), 0xe220a8397b1dcdafULL);
}

}  // namespace
}  // namespace peerbloom
