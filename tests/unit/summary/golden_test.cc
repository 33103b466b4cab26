// Byte-exact encodings of a small fixed summary and delta. If one of these changes, the
// format changed: bump kFormatVersion (and kMinReaderVersion if old readers would misread)
// in lib/summary/format.h, update docs/summary-format.md, then the bytes here.
#include <zstd.h>

#include <gtest/gtest.h>

#include <string>

#include "peerbloom/summary.h"

namespace peerbloom {
namespace {

std::string Unhex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

// 256 bits, k = 1, bits {3, 17, 64, 200, 255}, from "n1", epoch 7, version 42.
Summary GoldenSummary() {
  Summary s;
  s.origin = "n1";
  s.epoch = 7;
  s.version = 42;
  s.key_scheme = KeyScheme::kSquidMd5;
  s.hash_scheme = HashScheme::kSipHash13x2;
  s.estimated_items = 5;
  s.filter = BloomFilter(8, 1);
  for (uint64_t pos : {3, 17, 64, 200, 255}) s.filter.SetBit(pos);
  return s;
}

// Version 43: bit 17 cleared, bit 100 set.
Summary GoldenNext() {
  Summary s = GoldenSummary();
  s.version = 43;
  s.filter.FlipBit(17);
  s.filter.FlipBit(100);
  return s;
}

constexpr std::string_view kRaw =
    "5042534d01014200010101010800020007000000000000002a00000000000000"
    "0000000000000000050000000000000030dde980ceb786472000000000000000"
    "6e31080002000000000001000000000000000000000000000000000100000000"
    "00800b2307abd68e3b22";
constexpr std::string_view kZstd =
    "5042534d01014200010101010801020007000000000000002a00000000000000"
    "0000000000000000050000000000000030dde980ceb786471d00000000000000"
    "6e3128b52ffd2020a5000068080002000100010000000000800200a0b1058827"
    "082af1ab39fd40";
constexpr std::string_view kGolomb =
    "5042534d01014200010101010802020007000000000000002a00000000000000"
    "0000000000000000050000000000000030dde980ceb786471500000000000000"
    "6e310500000000000000230000000000000086d6babe097f73c7e0928cae80";
constexpr std::string_view kDelta =
    "5042534d01014200020101010802020007000000000000002b00000000000000"
    "2a000000000000000500000000000000175b365faa5927e41200000000000000"
    "6e3102000000000000005800000000000000223dc38b40df579f81bb";

std::string Encode(BodyEncoding e) {
  std::string out;
  EXPECT_TRUE(EncodeSummary(GoldenSummary(), &out, e).ok());
  return out;
}

void ExpectDecodesToGolden(std::string_view hex) {
  Summary s;
  const Status st = DecodeSummary(Unhex(hex), DecodeLimits{}, &s);
  ASSERT_TRUE(st.ok()) << st.ToString();
  const Summary want = GoldenSummary();
  EXPECT_EQ(s.origin, want.origin);
  EXPECT_EQ(s.epoch, want.epoch);
  EXPECT_EQ(s.version, want.version);
  EXPECT_EQ(s.key_scheme, want.key_scheme);
  EXPECT_EQ(s.estimated_items, want.estimated_items);
  EXPECT_TRUE(s.filter == want.filter);
}

TEST(SummaryGolden, RawBytes) {
  EXPECT_EQ(Encode(BodyEncoding::kRaw), Unhex(kRaw));
  ExpectDecodesToGolden(kRaw);
}

TEST(SummaryGolden, GolombBytes) {
  EXPECT_EQ(Encode(BodyEncoding::kGolombRice), Unhex(kGolomb));
  ExpectDecodesToGolden(kGolomb);
}

// zstd's compressed bytes are the library's choice, not the format's: the pinned message
// must always decode; the encoder reproduces it byte for byte with the zstd it was made by.
TEST(SummaryGolden, ZstdBytes) {
  ExpectDecodesToGolden(kZstd);
  if (ZSTD_versionNumber() == 10504) {
    EXPECT_EQ(Encode(BodyEncoding::kZstd), Unhex(kZstd));
  }
}

TEST(SummaryGolden, DeltaBytes) {
  SummaryDelta d;
  ASSERT_TRUE(ComputeDelta(GoldenSummary(), GoldenNext(), &d).ok());
  std::string out;
  ASSERT_TRUE(EncodeDelta(d, &out).ok());
  EXPECT_EQ(out, Unhex(kDelta));
  SummaryDelta back;
  ASSERT_TRUE(DecodeDelta(Unhex(kDelta), DecodeLimits{}, &back).ok());
  EXPECT_EQ(back.flipped, (std::vector<uint64_t>{17, 100}));
  EXPECT_EQ(back.base_version, 42u);
  EXPECT_EQ(back.version, 43u);
  EXPECT_EQ(back.result_digest, FilterDigest(GoldenNext().filter));
}

}  // namespace
}  // namespace peerbloom
