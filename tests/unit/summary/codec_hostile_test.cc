// Untrusted bytes: every truncation, corrupted bytes, lying lengths and limits are refused
// with a Status, never a crash or an unbounded allocation.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "peerbloom/summary.h"
#include "tests/unit/summary/message_edit.h"
#include "tests/unit/summary/summary_test_util.h"

namespace peerbloom {
namespace {

using testing_util::FilterWithFill;
using testing_util::MakeSummary;
using testing_util::Reseal;
using testing_util::WithBody;

constexpr BodyEncoding kAllEncodings[] = {BodyEncoding::kRaw, BodyEncoding::kZstd,
                                          BodyEncoding::kGolombRice};

std::string Encode(const Summary& s, BodyEncoding e) {
  std::string bytes;
  EXPECT_TRUE(EncodeSummary(s, &bytes, e).ok());
  return bytes;
}

std::string EncodedDelta() {
  const Summary a = MakeSummary(FilterWithFill(12, 2, 0.05, 1), 1);
  Summary b = MakeSummary(FilterWithFill(12, 2, 0.05, 2), 2);
  SummaryDelta d;
  EXPECT_TRUE(ComputeDelta(a, b, &d).ok());
  std::string bytes;
  EXPECT_TRUE(EncodeDelta(d, &bytes).ok());
  return bytes;
}

Status DecodeAny(std::string_view bytes, bool delta) {
  if (delta) {
    SummaryDelta d;
    return DecodeDelta(bytes, DecodeLimits{}, &d);
  }
  Summary s;
  return DecodeSummary(bytes, DecodeLimits{}, &s);
}

std::vector<std::pair<std::string, bool>> ValidMessages() {
  std::vector<std::pair<std::string, bool>> out;
  for (double fill : {0.0, 0.01, 0.5}) {
    const Summary s = MakeSummary(FilterWithFill(11, 1, fill, 17));
    for (BodyEncoding e : kAllEncodings) out.emplace_back(Encode(s, e), false);
  }
  out.emplace_back(EncodedDelta(), true);
  return out;
}

TEST(SummaryCodecHostile, EveryTruncatedPrefixIsRefused) {
  for (const auto& [msg, delta] : ValidMessages()) {
    ASSERT_TRUE(DecodeAny(msg, delta).ok());
    for (size_t len = 0; len < msg.size(); ++len) {
      EXPECT_FALSE(DecodeAny(std::string_view(msg).substr(0, len), delta).ok()) << len;
    }
  }
}

// The same with the framing repaired, so the body decoders meet the truncation themselves.
TEST(SummaryCodecHostile, EveryTruncatedBodyIsRefusedBehindAValidFrame) {
  for (const auto& [msg, delta] : ValidMessages()) {
    const std::string_view body = testing_util::Body(msg);
    for (size_t len = 0; len < body.size(); ++len) {
      const Status st = DecodeAny(WithBody(msg, body.substr(0, len)), delta);
      EXPECT_TRUE(st.IsCorruption()) << len << ": " << st.ToString();
    }
  }
}

TEST(SummaryCodecHostile, RandomByteCorruptionIsRefused) {
  std::mt19937_64 rng(2024);
  for (const auto& [msg, delta] : ValidMessages()) {
    for (int trial = 0; trial < 300; ++trial) {
      std::string bad = msg;
      const size_t at = rng() % bad.size();
      bad[at] = static_cast<char>(bad[at] ^ (1 + rng() % 255));
      EXPECT_FALSE(DecodeAny(bad, delta).ok()) << "byte " << at;
    }
  }
}

// Behind a resealed checksum a changed body byte may decode (a free parameter such as the
// divisor of an empty body), but never to different bits: full summaries check their digest
// on decode, deltas when applied.
TEST(SummaryCodecHostile, BodyCorruptionNeverChangesTheBitsSilently) {
  std::mt19937_64 rng(7);
  const Summary base = MakeSummary(FilterWithFill(12, 2, 0.05, 1), 1);
  for (const auto& [msg, delta] : ValidMessages()) {
    const size_t start = testing_util::HeaderLength(msg);
    const size_t body = testing_util::Body(msg).size();
    Summary want_full;
    SummaryDelta want_delta;
    ASSERT_TRUE(delta ? DecodeDelta(msg, DecodeLimits{}, &want_delta).ok()
                      : DecodeSummary(msg, DecodeLimits{}, &want_full).ok());
    for (int trial = 0; trial < 300; ++trial) {
      std::string bad = msg;
      const size_t at = start + rng() % body;
      bad[at] = static_cast<char>(bad[at] ^ (1 + rng() % 255));
      Reseal(&bad);
      if (!delta) {
        Summary got;
        if (DecodeSummary(bad, DecodeLimits{}, &got).ok()) {
          EXPECT_TRUE(got.filter == want_full.filter) << "body byte " << at - start;
        }
        continue;
      }
      SummaryDelta got;
      if (!DecodeDelta(bad, DecodeLimits{}, &got).ok()) continue;
      Summary applied = base;
      const Status st = ApplyDelta(got, &applied);
      if (st.ok()) {
        EXPECT_EQ(got.flipped, want_delta.flipped) << "body byte " << at - start;
      } else {
        EXPECT_TRUE(st.IsCorruption()) << st.ToString();
        EXPECT_TRUE(applied.filter == base.filter);
      }
    }
  }
}

// Header bytes behind a resealed checksum: whatever decodes must still be self-consistent.
TEST(SummaryCodecHostile, HeaderCorruptionBehindAValidChecksumNeverCrashes) {
  const std::string msg = Encode(MakeSummary(FilterWithFill(10, 1, 0.02, 3)), BodyEncoding::kRaw);
  for (size_t at = 0; at < testing_util::HeaderLength(msg); ++at) {
    for (int x : {0x01, 0x80, 0xff}) {
      std::string bad = msg;
      bad[at] = static_cast<char>(bad[at] ^ x);
      Reseal(&bad);
      Summary s;
      if (DecodeSummary(bad, DecodeLimits{}, &s).ok()) {
        EXPECT_TRUE(IsValidNodeId(s.origin));
        EXPECT_EQ(s.filter.words().size() * 64, s.filter.bits());
      }
    }
  }
}

TEST(SummaryCodecHostile, LimitsAreEnforced) {
  const std::string msg = Encode(MakeSummary(FilterWithFill(16, 1, 0.01, 4)), BodyEncoding::kRaw);
  Summary s;
  DecodeLimits small_message;
  small_message.max_encoded_bytes = msg.size() - 1;
  Status st = DecodeSummary(msg, small_message, &s);
  EXPECT_TRUE(st.IsResourceExhausted());
  EXPECT_EQ(st.message(), "summary message of '" + std::to_string(msg.size()) +
                              "' bytes exceeds the limit of '" + std::to_string(msg.size() - 1) +
                              "'");
  DecodeLimits small_filter;
  small_filter.max_log2_bits = 15;
  st = DecodeSummary(msg, small_filter, &s);
  EXPECT_TRUE(st.IsResourceExhausted());
  EXPECT_EQ(st.message(), "summary of 2^16 bits exceeds the limit of 2^15");
}

TEST(SummaryCodecHostile, DeltaPositionLimitIsEnforced) {
  const std::string msg = EncodedDelta();
  SummaryDelta d;
  ASSERT_TRUE(DecodeDelta(msg, DecodeLimits{}, &d).ok());
  DecodeLimits limits;
  limits.max_delta_positions = d.flipped.size() - 1;
  const Status st = DecodeDelta(msg, limits, &d);
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
}

// A gap-coded body that claims more positions than its bytes can hold is refused before
// anything is allocated for them.
TEST(SummaryCodecHostile, GapCountBeyondTheBodyIsRefused) {
  const std::string msg = EncodedDelta();
  std::string body(testing_util::Body(msg));
  testing_util::StoreFixed(&body, 0, uint64_t{1} << 40, 8);
  const Status st = DecodeAny(WithBody(msg, body), /*delta=*/true);
  EXPECT_TRUE(st.IsCorruption());
  EXPECT_NE(st.message().find("claims"), std::string::npos) << st.message();
}

TEST(SummaryCodecHostile, UnknownEnumValuesAreNotSupported) {
  const std::string msg = Encode(MakeSummary(FilterWithFill(8, 1, 0.1, 5)), BodyEncoding::kRaw);
  struct Case {
    size_t offset;
    uint8_t value;
    const char* message;
  } cases[] = {{8, 9, "unknown summary message kind '9'"},
               {9, 3, "unknown key scheme '3'"},
               {9, 7, "unknown key scheme '7'"},
               {10, 0, "unknown hash scheme '0'"},
               {13, 3, "unknown summary body encoding '3'"}};
  for (const auto& c : cases) {
    std::string bad = msg;
    bad[c.offset] = static_cast<char>(c.value);
    Reseal(&bad);
    Summary s;
    const Status st = DecodeSummary(bad, DecodeLimits{}, &s);
    EXPECT_TRUE(st.IsNotSupported()) << st.ToString();
    EXPECT_EQ(st.message(), c.message);
  }
}

// Every key scheme this build knows decodes (2, nginx-md5, was refused before it existed).
TEST(SummaryCodecHostile, EveryKnownKeySchemeDecodes) {
  const std::string msg = Encode(MakeSummary(FilterWithFill(8, 1, 0.1, 5)), BodyEncoding::kRaw);
  for (KeyScheme scheme : {KeyScheme::kRaw, KeyScheme::kSquidMd5, KeyScheme::kNginxMd5}) {
    std::string bytes = msg;
    bytes[9] = static_cast<char>(scheme);
    Reseal(&bytes);
    Summary s;
    const Status st = DecodeSummary(bytes, DecodeLimits{}, &s);
    ASSERT_TRUE(st.ok()) << KeySchemeName(scheme) << ": " << st.ToString();
    EXPECT_EQ(s.key_scheme, scheme);
  }
}

TEST(SummaryCodecHostile, WrongKindAndBadOriginAreRefused) {
  Summary s;
  EXPECT_TRUE(DecodeSummary(EncodedDelta(), DecodeLimits{}, &s).IsInvalidArgument());
  SummaryDelta d;
  const std::string full = Encode(MakeSummary(FilterWithFill(8, 1, 0.1, 5)), BodyEncoding::kRaw);
  EXPECT_TRUE(DecodeDelta(full, DecodeLimits{}, &d).IsInvalidArgument());
  std::string bad = full;
  bad[64] = ' ';
  Reseal(&bad);
  const Status st = DecodeSummary(bad, DecodeLimits{}, &s);
  EXPECT_TRUE(st.IsCorruption());
  EXPECT_EQ(st.message(), "summary origin is not a node id");
}

}  // namespace
}  // namespace peerbloom
