#include "peerbloom/origin_sig.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace peerbloom {
namespace {

constexpr uint64_t kTag = 0x1122334455667788;

struct Keys {
  std::string pub;
  std::string sec;
};

Keys NewKeys() {
  Keys k;
  EXPECT_TRUE(GenerateSignKeyPair(&k.pub, &k.sec).ok());
  return k;
}

OriginClaim SampleClaim() {
  OriginClaim c;
  c.kind = SignedKind::kDelta;
  c.origin = "node-a";
  c.epoch = 7;
  c.base_version = 41;
  c.version = 42;
  c.body_hash = Sha256("delta bytes");
  return c;
}

TEST(OriginSig, SignedClaimVerifies) {
  const Keys k = NewKeys();
  std::unique_ptr<OriginSigner> signer;
  ASSERT_TRUE(OriginSigner::Create(k.sec, &signer).ok());
  EXPECT_EQ(signer->public_key(), k.pub);
  std::string sig;
  ASSERT_TRUE(signer->Sign(kTag, SampleClaim(), &sig).ok());
  EXPECT_EQ(sig.size(), kSignatureBytes);
  SignKeyRing ring;
  ASSERT_TRUE(ring.Add("node-a", k.pub).ok());
  EXPECT_EQ(ring.Verify(kTag, SampleClaim(), sig), SigVerdict::kValid);
}

TEST(OriginSig, EveryTamperedFieldIsRefused) {
  const Keys k = NewKeys();
  std::unique_ptr<OriginSigner> signer;
  ASSERT_TRUE(OriginSigner::Create(k.sec, &signer).ok());
  std::string sig;
  ASSERT_TRUE(signer->Sign(kTag, SampleClaim(), &sig).ok());
  SignKeyRing ring;
  ASSERT_TRUE(ring.Add("node-a", k.pub).ok());
  ASSERT_TRUE(ring.Add("node-b", k.pub).ok());  // same key under another id
  const std::string other_origin = "node-b";
  std::vector<std::pair<std::string, OriginClaim>> tampered;
  auto with = [&](std::string name, auto change) {
    OriginClaim c = SampleClaim();
    change(&c);
    tampered.emplace_back(std::move(name), c);
  };
  with("kind", [](OriginClaim* c) { c->kind = SignedKind::kSummaryState; });
  with("origin", [&](OriginClaim* c) { c->origin = other_origin; });
  with("epoch", [](OriginClaim* c) { ++c->epoch; });
  with("base", [](OriginClaim* c) { --c->base_version; });
  with("version", [](OriginClaim* c) { ++c->version; });
  for (size_t i = 0; i < 32; ++i) {
    with("hash byte " + std::to_string(i), [i](OriginClaim* c) { c->body_hash[i] ^= 0x01; });
  }
  for (const auto& [name, claim] : tampered) {
    EXPECT_EQ(ring.Verify(kTag, claim, sig), SigVerdict::kInvalid) << name;
  }
  EXPECT_EQ(ring.Verify(kTag + 1, SampleClaim(), sig), SigVerdict::kInvalid) << "cluster tag";
  for (size_t i = 0; i < sig.size(); ++i) {
    std::string bad = sig;
    bad[i] = static_cast<char>(bad[i] ^ 0x40);
    EXPECT_EQ(ring.Verify(kTag, SampleClaim(), bad), SigVerdict::kInvalid) << "sig byte " << i;
  }
  EXPECT_EQ(ring.Verify(kTag, SampleClaim(), sig.substr(0, 63)), SigVerdict::kInvalid);
}

TEST(OriginSig, VerdictsForUnknownOriginsAndMissingSignatures) {
  const Keys k = NewKeys();
  SignKeyRing ring;
  ASSERT_TRUE(ring.Add("node-a", k.pub).ok());
  OriginClaim c = SampleClaim();
  EXPECT_EQ(ring.Verify(kTag, c, ""), SigVerdict::kMissing);
  c.origin = "node-z";
  EXPECT_EQ(ring.Verify(kTag, c, std::string(64, 'x')), SigVerdict::kNoKey);
  EXPECT_EQ(SigVerdictName(SigVerdict::kInvalid), "bad signature");
}

TEST(OriginSig, AnyKeyOfARotatingNodeIsAccepted) {
  const Keys old_key = NewKeys();
  const Keys new_key = NewKeys();
  const Keys stranger = NewKeys();
  SignKeyRing ring;
  ASSERT_TRUE(ring.Add("node-a", old_key.pub).ok());
  ASSERT_TRUE(ring.Add("node-a", new_key.pub).ok());
  for (const Keys* k : {&old_key, &new_key}) {
    std::unique_ptr<OriginSigner> signer;
    ASSERT_TRUE(OriginSigner::Create(k->sec, &signer).ok());
    std::string sig;
    ASSERT_TRUE(signer->Sign(kTag, SampleClaim(), &sig).ok());
    EXPECT_EQ(ring.Verify(kTag, SampleClaim(), sig), SigVerdict::kValid);
  }
  std::unique_ptr<OriginSigner> signer;
  ASSERT_TRUE(OriginSigner::Create(stranger.sec, &signer).ok());
  std::string sig;
  ASSERT_TRUE(signer->Sign(kTag, SampleClaim(), &sig).ok());
  EXPECT_EQ(ring.Verify(kTag, SampleClaim(), sig), SigVerdict::kInvalid);
}

TEST(OriginSig, BadKeysAreRefused) {
  SignKeyRing ring;
  EXPECT_EQ(ring.Add("a", "short").message(), "sign public key of '5' bytes");
  std::unique_ptr<OriginSigner> signer;
  EXPECT_EQ(OriginSigner::Create("short", &signer).message(), "sign secret key of '5' bytes");
}

TEST(OriginSig, StateHashCoversEveryFieldAndBit) {
  Summary s;
  s.origin = "node-a";
  s.filter = BloomFilter(10, 3);
  s.filter.SetBit(17);
  s.estimated_items = 5;
  const Sha256Hash base = StateHash(s);
  Summary t = s;
  t.origin = "other";  // the origin is in the claim, not the state
  t.epoch = 9;
  t.version = 9;
  EXPECT_EQ(StateHash(t), base);
  t = s;
  t.filter.FlipBit(1023);
  EXPECT_NE(StateHash(t), base);
  t = s;
  t.estimated_items = 6;
  EXPECT_NE(StateHash(t), base);
  t = s;
  t.key_scheme = KeyScheme::kSquidMd5;
  EXPECT_NE(StateHash(t), base);
  t = s;
  t.filter = BloomFilter(10, 4);
  t.filter.SetBit(17);
  EXPECT_NE(StateHash(t), base);
}

TEST(OriginSig, MessageLayoutIsPinned) {
  OriginClaim c = SampleClaim();
  c.body_hash = Sha256Hash{};
  const std::string m = OriginSigMessage(kTag, c);
  std::string expected("peerbloom origin sig v1\0", 24);
  expected += std::string("\x88\x77\x66\x55\x44\x33\x22\x11", 8);
  expected += '\x02';
  expected += std::string("\x06node-a", 7);
  expected += std::string("\x07\0\0\0\0\0\0\0", 8);
  expected += std::string("\x29\0\0\0\0\0\0\0", 8);
  expected += std::string("\x2a\0\0\0\0\0\0\0", 8);
  expected += std::string(32, '\0');
  EXPECT_EQ(m, expected);
}

}  // namespace
}  // namespace peerbloom
