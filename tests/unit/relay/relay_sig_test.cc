// Origin signatures of broadcasts: what they cover, and how RelayNode uses its sign and
// verify hooks (docs/relay.md, "Origin signatures").
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "peerbloom/origin_sig.h"
#include "peerbloom/relay.h"

namespace peerbloom {
namespace {

constexpr uint64_t kTag = 0x1234;

struct Keys {
  std::unique_ptr<OriginSigner> a;        // the origin "a"
  std::unique_ptr<OriginSigner> mallory;  // another member's key
  std::shared_ptr<SignKeyRing> ring = std::make_shared<SignKeyRing>();
};

Keys MakeKeys() {
  Keys k;
  std::string pub, secret;
  EXPECT_TRUE(GenerateSignKeyPair(&pub, &secret).ok());
  EXPECT_TRUE(OriginSigner::Create(secret, &k.a).ok());
  EXPECT_TRUE(k.ring->Add("a", pub).ok());
  EXPECT_TRUE(GenerateSignKeyPair(&pub, &secret).ok());
  EXPECT_TRUE(OriginSigner::Create(secret, &k.mallory).ok());
  EXPECT_TRUE(k.ring->Add("m", pub).ok());
  return k;
}

RelayData Message() {
  RelayData d;
  d.origin = "a";
  d.id = 77;
  d.hop_limit = 6;
  d.filter_k = 7;
  d.filter = std::string(8, '\0');
  d.payload = std::string("\x01http://example.com/x", 21);
  return d;
}

TEST(RelaySig, SignedMessageVerifies) {
  Keys k = MakeKeys();
  RelayData d = Message();
  ASSERT_TRUE(SignRelayData(*k.a, kTag, &d).ok());
  EXPECT_EQ(d.flags, kRelayFlagSigned);
  EXPECT_EQ(d.signature.size(), kRelaySignatureBytes);
  EXPECT_EQ(VerifyRelayData(*k.ring, kTag, d), SigVerdict::kValid);
  // It still encodes and decodes to the same message.
  RelayPacket p, back;
  p.data = d;
  std::string bytes;
  ASSERT_TRUE(EncodeRelayPacket(p, RelayLimits(), &bytes).ok());
  ASSERT_TRUE(DecodeRelayPacket(bytes, RelayLimits(), &back).ok());
  EXPECT_EQ(VerifyRelayData(*k.ring, kTag, back.data), SigVerdict::kValid);
}

TEST(RelaySig, FieldsRelaysChangeDoNotBreakIt) {
  Keys k = MakeKeys();
  RelayData d = Message();
  ASSERT_TRUE(SignRelayData(*k.a, kTag, &d).ok());
  d.hops = 5;
  d.filter = std::string("\x13\x00\xff\x01\x00\x80\x00\x02", 8);
  EXPECT_EQ(VerifyRelayData(*k.ring, kTag, d), SigVerdict::kValid);
}

TEST(RelaySig, TamperedFieldsAreRefused) {
  Keys k = MakeKeys();
  RelayData signed_msg = Message();
  ASSERT_TRUE(SignRelayData(*k.a, kTag, &signed_msg).ok());
  {
    RelayData d = signed_msg;
    d.origin = "m";  // another origin with a key: its keys did not sign it
    EXPECT_EQ(VerifyRelayData(*k.ring, kTag, d), SigVerdict::kInvalid);
  }
  {
    RelayData d = signed_msg;
    d.id = 78;
    EXPECT_EQ(VerifyRelayData(*k.ring, kTag, d), SigVerdict::kInvalid);
  }
  {
    RelayData d = signed_msg;
    d.payload.back() = 'y';
    EXPECT_EQ(VerifyRelayData(*k.ring, kTag, d), SigVerdict::kInvalid);
  }
  {
    RelayData d = signed_msg;
    d.hop_limit = 60;  // a relay must not raise the reach of a message
    EXPECT_EQ(VerifyRelayData(*k.ring, kTag, d), SigVerdict::kInvalid);
  }
  {
    RelayData d = signed_msg;
    d.signature[10] ^= 1;
    EXPECT_EQ(VerifyRelayData(*k.ring, kTag, d), SigVerdict::kInvalid);
  }
  // Another cluster's signature does not pass here.
  EXPECT_EQ(VerifyRelayData(*k.ring, kTag + 1, signed_msg), SigVerdict::kInvalid);
  // Unsigned: missing for an origin with keys, no key for one without.
  RelayData unsigned_msg = Message();
  EXPECT_EQ(VerifyRelayData(*k.ring, kTag, unsigned_msg), SigVerdict::kMissing);
  unsigned_msg.origin = "z";
  EXPECT_EQ(VerifyRelayData(*k.ring, kTag, unsigned_msg), SigVerdict::kNoKey);
}

TEST(RelaySig, ForgedBySomeoneElsesKeyIsInvalid) {
  Keys k = MakeKeys();
  RelayData d = Message();  // names origin "a", signed with m's key
  ASSERT_TRUE(SignRelayData(*k.mallory, kTag, &d).ok());
  EXPECT_EQ(VerifyRelayData(*k.ring, kTag, d), SigVerdict::kInvalid);
}

// A node verifies a message once: the first copy that passes is delivered and remembered as
// seen; later copies (duplicates, GRAFT answers) are not verified again. A refused copy is
// neither delivered, forwarded nor remembered, so the genuine message still gets through.
TEST(RelaySig, NodeVerifiesOncePerMessageAndForgeriesDoNotBlockIt) {
  Keys k = MakeKeys();
  RelayOptions o;
  o.node_id = "x";
  o.hop_limit = 6;
  o.flow.max_per_window = 0;
  int verified = 0;
  o.verify = [&](const RelayData& d) {
    ++verified;
    return VerifyRelayData(*k.ring, kTag, d) == SigVerdict::kValid;
  };
  RelayNode node(o);
  node.SetLinks({"m", "b"});

  RelayPacket forged;
  forged.data = Message();
  forged.data.payload = std::string("\x01http://example.com/forged", 26);
  ASSERT_TRUE(SignRelayData(*k.mallory, kTag, &forged.data).ok());
  std::string forged_bytes;
  ASSERT_TRUE(EncodeRelayPacket(forged, RelayLimits(), &forged_bytes).ok());
  node.OnPacket("m", forged_bytes, 1000);
  EXPECT_TRUE(node.TakeDeliveries().empty());
  for (const RelaySend& s : node.TakeSends()) EXPECT_NE(s.kind, RelayKind::kData);
  EXPECT_EQ(node.stats().signatures_refused, 1u);
  EXPECT_EQ(verified, 1);

  RelayPacket genuine;
  genuine.data = Message();
  genuine.data.hops = 1;
  ASSERT_TRUE(SignRelayData(*k.a, kTag, &genuine.data).ok());
  std::string genuine_bytes;
  ASSERT_TRUE(EncodeRelayPacket(genuine, RelayLimits(), &genuine_bytes).ok());
  node.OnPacket("b", genuine_bytes, 1001);
  const std::vector<RelayDelivery> got = node.TakeDeliveries();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].origin, "a");
  EXPECT_EQ(got[0].id, 77u);
  EXPECT_EQ(got[0].payload, Message().payload);
  EXPECT_EQ(verified, 2);
  // The genuine copy is forwarded with its signature; copies after it are not verified.
  size_t forwarded = 0;
  for (const RelaySend& s : node.TakeSends()) {
    if (s.kind != RelayKind::kData) continue;
    RelayPacket out;
    ASSERT_TRUE(DecodeRelayPacket(s.packet, RelayLimits(), &out).ok());
    EXPECT_EQ(s.to, "m");
    EXPECT_EQ(VerifyRelayData(*k.ring, kTag, out.data), SigVerdict::kValid);
    ++forwarded;
  }
  EXPECT_EQ(forwarded, 1u);
  node.OnPacket("b", genuine_bytes, 1002);
  node.OnPacket("m", forged_bytes, 1003);
  EXPECT_TRUE(node.TakeDeliveries().empty());
  EXPECT_EQ(verified, 2);
  EXPECT_EQ(node.stats().duplicates, 2u);
  EXPECT_EQ(node.stats().signatures_refused, 1u);
}

TEST(RelaySig, OriginSignsItsBroadcasts) {
  Keys k = MakeKeys();
  RelayOptions o;
  o.node_id = "a";
  o.hop_limit = 6;
  o.flow.max_per_window = 0;
  o.sign = [&](RelayData* d) { return SignRelayData(*k.a, kTag, d); };
  RelayNode node(o);
  node.SetLinks({"b"});
  uint64_t id = 0;
  ASSERT_TRUE(node.Broadcast("hello", 5, &id).ok());
  size_t sent = 0;
  for (const RelaySend& s : node.TakeSends()) {
    if (s.kind != RelayKind::kData) continue;
    RelayPacket out;
    ASSERT_TRUE(DecodeRelayPacket(s.packet, RelayLimits(), &out).ok());
    EXPECT_EQ(out.data.id, id);
    EXPECT_EQ(out.data.hops, 1u);
    EXPECT_EQ(VerifyRelayData(*k.ring, kTag, out.data), SigVerdict::kValid);
    ++sent;
  }
  EXPECT_EQ(sent, 1u);
}

}  // namespace
}  // namespace peerbloom
