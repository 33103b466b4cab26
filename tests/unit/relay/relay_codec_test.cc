#include <string>

#include "gtest/gtest.h"
#include "peerbloom/relay_message.h"

namespace peerbloom {
namespace {

RelayPacket SampleData() {
  RelayPacket p;
  p.kind = RelayKind::kData;
  p.data.origin = "a";
  p.data.id = 300;
  p.data.hop_limit = 16;
  p.data.hops = 2;
  p.data.filter_k = 7;
  p.data.filter = std::string(20, '\0');
  p.data.filter[3] = 0x10;
  p.data.payload = "purge http://x/";
  return p;
}

RelayPacket SampleIHave() {
  RelayPacket p;
  p.kind = RelayKind::kIHave;
  p.refs = {{"a", 300, 3}, {"node-b", 1, 1}};
  return p;
}

std::string Encode(const RelayPacket& p) {
  std::string out;
  EXPECT_TRUE(EncodeRelayPacket(p, RelayLimits(), &out).ok());
  return out;
}

TEST(RelayCodec, RoundTripsEveryKind) {
  RelayPacket graft;
  graft.kind = RelayKind::kGraft;
  graft.refs = {{"a", 5, 0}};
  RelayPacket prune;
  prune.kind = RelayKind::kPrune;
  RelayPacket signed_data = SampleData();
  signed_data.data.flags = kRelayFlagSigned;
  signed_data.data.signature = std::string(kRelaySignatureBytes, 's');
  for (const RelayPacket& p : {SampleData(), SampleIHave(), graft, prune, signed_data}) {
    RelayPacket back;
    ASSERT_TRUE(DecodeRelayPacket(Encode(p), RelayLimits(), &back).ok());
    EXPECT_EQ(back, p);
  }
}

TEST(RelayCodec, GoldenIHave) {
  EXPECT_EQ(Encode(SampleIHave()), std::string("\x01\x01\x02\x00\x02"
                                               "\x01"
                                               "a\xac\x02\x03"
                                               "\x06node-b\x01\x01",
                                               19));
}

TEST(RelayCodec, GoldenDataHeader) {
  const std::string bytes = Encode(SampleData());
  // version, min reader, kind DATA, flags, "a", id 300, hop limit 16, hops 2, k 7, 20 bytes.
  EXPECT_EQ(bytes.substr(0, 13), std::string("\x01\x01\x01\x00\x01"
                                             "a\xac\x02\x10\x02\x07\x14\x00",
                                             13));
  EXPECT_EQ(bytes.size(), 13u + 19 + 1 + 15);
}

TEST(RelayCodec, RefusesEveryTruncation) {
  for (const RelayPacket& p : {SampleData(), SampleIHave()}) {
    const std::string bytes = Encode(p);
    for (size_t n = 0; n < bytes.size(); ++n) {
      RelayPacket back;
      const Status s = DecodeRelayPacket(bytes.substr(0, n), RelayLimits(), &back);
      EXPECT_TRUE(s.IsCorruption()) << n << ": " << s.ToString();
    }
  }
}

TEST(RelayCodec, CorruptBytesNeverCrash) {
  const std::string bytes = Encode(SampleData());
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string c = bytes;
      c[i] = static_cast<char>(c[i] ^ (1 << bit));
      RelayPacket back;
      (void)DecodeRelayPacket(c, RelayLimits(), &back);
    }
  }
}

TEST(RelayCodec, RefusesTrailingBytesOfThisVersion) {
  RelayPacket back;
  const Status s = DecodeRelayPacket(Encode(SampleIHave()) + "x", RelayLimits(), &back);
  EXPECT_EQ(s.ToString(), "corruption: '1' trailing bytes after the relay packet");
}

TEST(RelayCodec, NewerVersionMayAppendFields) {
  std::string bytes = Encode(SampleData()) + "future";
  bytes[0] = 2;
  RelayPacket back;
  ASSERT_TRUE(DecodeRelayPacket(bytes, RelayLimits(), &back).ok());
  EXPECT_EQ(back.data, SampleData().data);
}

TEST(RelayCodec, RefusesPacketsForNewerReaders) {
  std::string bytes = Encode(SampleData());
  bytes[0] = 3;
  bytes[1] = 2;
  RelayPacket back;
  EXPECT_EQ(DecodeRelayPacket(bytes, RelayLimits(), &back).ToString(),
            "not supported: relay packet needs reader version '2', this is '1'");
  bytes = Encode(SampleData());
  bytes[2] = 9;
  EXPECT_EQ(DecodeRelayPacket(bytes, RelayLimits(), &back).ToString(),
            "not supported: unknown relay packet kind '9'");
}

TEST(RelayCodec, BoundsPayloadsAndLists) {
  RelayLimits small;
  small.max_payload_bytes = 4;
  small.max_refs = 1;
  RelayPacket back;
  EXPECT_EQ(DecodeRelayPacket(Encode(SampleData()), small, &back).ToString(),
            "resource exhausted: relay payload of '15' bytes exceeds the limit '4'");
  EXPECT_EQ(DecodeRelayPacket(Encode(SampleIHave()), small, &back).ToString(),
            "resource exhausted: relay entry count '2' exceeds the limit '1'");
  std::string out;
  EXPECT_TRUE(EncodeRelayPacket(SampleData(), small, &out).IsInvalidArgument());
}

TEST(RelayCodec, RefusesHopsPastTheLimit) {
  RelayPacket p = SampleData();
  p.data.hops = 17;
  std::string out;
  EXPECT_EQ(EncodeRelayPacket(p, RelayLimits(), &out).ToString(),
            "invalid argument: relay hops '17' exceed the hop limit");
  std::string bytes = Encode(SampleData());
  bytes[9] = 17;  // hops
  RelayPacket back;
  EXPECT_EQ(DecodeRelayPacket(bytes, RelayLimits(), &back).ToString(),
            "corruption: relay hops '17' of hop limit '16' out of range");
}

TEST(RelayCodec, SignedBytesIgnoreWhatRelaysChange) {
  RelayData a = SampleData().data;
  RelayData b = a;
  b.hops = 9;
  b.filter[0] = 0x7f;
  b.flags = kRelayFlagSigned;
  b.signature = std::string(kRelaySignatureBytes, 'z');
  std::string sa, sb;
  ASSERT_TRUE(RelaySignedBytes(a, &sa).ok());
  ASSERT_TRUE(RelaySignedBytes(b, &sb).ok());
  EXPECT_EQ(sa, sb);
  b.payload += "!";
  ASSERT_TRUE(RelaySignedBytes(b, &sb).ok());
  EXPECT_NE(sa, sb);
}

}  // namespace
}  // namespace peerbloom
