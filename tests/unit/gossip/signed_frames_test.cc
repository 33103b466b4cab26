// One GossipEngine fed crafted frames from a member ("mallory") that speaks for others: what
// signed origins refuse, with which message, and what it leaves unchanged (docs/security.md,
// "Signed origins"). The cluster-level behaviour is in signed_origins_test.cc and
// tests/integration/attack_sign_test.cc.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "peerbloom/gossip.h"
#include "peerbloom/origin_sig.h"
#include "peerbloom/summary.h"
#include "peerbloom/wire.h"

namespace peerbloom {
namespace {

constexpr uint64_t kTag = 0xabcdef;

std::unique_ptr<OriginSigner> NewSigner(std::string* pub) {
  std::string sec;
  EXPECT_TRUE(GenerateSignKeyPair(pub, &sec).ok());
  std::unique_ptr<OriginSigner> s;
  EXPECT_TRUE(OriginSigner::Create(sec, &s).ok());
  return s;
}

class SignedFrames : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pub;
    victim_ = NewSigner(&pub);
    auto ring = std::make_shared<SignKeyRing>();
    ASSERT_TRUE(ring->Add("victim", pub).ok());
    mallory_ = NewSigner(&pub);
    ASSERT_TRUE(ring->Add("mallory", pub).ok());
    own_ = NewSigner(&pub);
    ASSERT_TRUE(ring->Add("rx", pub).ok());
    GossipOptions o;
    o.node_id = "rx";
    o.endpoint = "tcp://rx:1";
    o.key_scheme = KeyScheme::kSquidMd5;
    o.cluster_tag = kTag;
    o.sign_keys = ring;
    o.signer = own_;
    engine_ = std::make_unique<GossipEngine>(o);
  }

  WireHeader Header() {
    WireHeader h;
    h.cluster_tag = kTag;
    h.sender_id = "mallory";
    h.sender_epoch = 1;
    h.sender_heartbeat = ++beat_;
    return h;
  }

  Summary VictimSummary(uint64_t epoch, uint64_t version, int bits_set) {
    Summary s;
    s.origin = "victim";
    s.epoch = epoch;
    s.version = version;
    s.key_scheme = KeyScheme::kSquidMd5;
    s.filter = BloomFilter(10, 3);
    for (int i = 0; i < bits_set; ++i) s.filter.SetBit(static_cast<uint64_t>(i) * 7);
    s.estimated_items = static_cast<uint64_t>(bits_set);
    return s;
  }

  std::string StateSig(const OriginSigner& by, const Summary& s) {
    OriginClaim c;
    c.kind = SignedKind::kSummaryState;
    c.origin = s.origin;
    c.epoch = s.epoch;
    c.version = s.version;
    c.body_hash = StateHash(s);
    std::string sig;
    EXPECT_TRUE(by.Sign(kTag, c, &sig).ok());
    return sig;
  }

  Status SendFull(const Summary& s, const std::string& sig) {
    std::string codec, frame;
    EXPECT_TRUE(EncodeSummary(s, &codec).ok());
    EXPECT_TRUE(EncodeSummaryFrame(Header(), WireType::kFullSummary, codec, &frame, sig).ok());
    return engine_->OnMessage(frame, now_ += 10);
  }

  Status SendEntry(uint64_t epoch, const std::string& cert) {
    DigestEntry e;
    e.origin = "victim";
    e.epoch = epoch;
    e.heartbeat = 1000;
    e.alive = true;
    e.epoch_cert = cert;
    DigestBody body;
    body.entries = {e};
    std::string frame;
    EXPECT_TRUE(EncodeDigestFrame(Header(), body, &frame).ok());
    return engine_->OnMessage(frame, now_ += 10);
  }

  std::string EpochCert(const OriginSigner& by, uint64_t epoch) {
    OriginClaim c;
    c.kind = SignedKind::kEpoch;
    c.origin = "victim";
    c.epoch = epoch;
    std::string sig;
    EXPECT_TRUE(by.Sign(kTag, c, &sig).ok());
    return sig;
  }

  uint64_t VictimEpoch() {
    for (const PeerInfo& p : engine_->Peers(now_)) {
      if (p.node_id == "victim") return p.epoch;
    }
    return 0;
  }

  std::unique_ptr<OriginSigner> victim_, mallory_;
  std::shared_ptr<OriginSigner> own_;
  std::unique_ptr<GossipEngine> engine_;
  uint64_t beat_ = 0;
  int64_t now_ = 1000;
};

TEST_F(SignedFrames, ForgedFullSummariesAreRefusedAndTheHeldOneStays) {
  const Summary genuine = VictimSummary(7, 5, 40);
  ASSERT_TRUE(SendFull(genuine, StateSig(*victim_, genuine)).ok());
  const Summary forged = VictimSummary(7, 9, 0);
  Status s = SendFull(forged, "");
  EXPECT_EQ(s.message(), "full summary of 'victim' epoch '7' version '9': unsigned");
  s = SendFull(forged, StateSig(*mallory_, forged));
  EXPECT_EQ(s.message(), "full summary of 'victim' epoch '7' version '9': bad signature");
  // The victim's signature of other bits does not cover these.
  s = SendFull(forged, StateSig(*victim_, VictimSummary(7, 9, 1)));
  EXPECT_EQ(s.message(), "full summary of 'victim' epoch '7' version '9': bad signature");
  Summary held;
  ASSERT_TRUE(engine_->GetSummary("victim", &held).ok());
  EXPECT_EQ(held.version, 5u);
  EXPECT_EQ(held.filter, genuine.filter);
  EXPECT_EQ(engine_->stats().signatures_refused, 3u);
  EXPECT_EQ(engine_->stats().signatures_verified, 1u);
  EXPECT_EQ(engine_->stats().malformed_in, 3u);
}

TEST_F(SignedFrames, ARelayedEpochNeedsTheOriginsCertificate) {
  const Summary genuine = VictimSummary(7, 5, 40);
  ASSERT_TRUE(SendFull(genuine, StateSig(*victim_, genuine)).ok());
  ASSERT_EQ(VictimEpoch(), 7u);
  ASSERT_TRUE(SendEntry(8, "").ok());
  ASSERT_TRUE(SendEntry(8, std::string(kSignatureBytes, 'x')).ok());
  ASSERT_TRUE(SendEntry(8, EpochCert(*mallory_, 8)).ok());
  EXPECT_EQ(VictimEpoch(), 7u);
  EXPECT_EQ(engine_->stats().epochs_refused, 3u);
  ASSERT_TRUE(SendEntry(8, EpochCert(*victim_, 8)).ok());
  EXPECT_EQ(VictimEpoch(), 8u);
  // An old certificate cannot roll it back.
  ASSERT_TRUE(SendEntry(7, EpochCert(*victim_, 7)).ok());
  EXPECT_EQ(VictimEpoch(), 8u);
}

TEST_F(SignedFrames, ImportsMustBeSignedByTheirImporter) {
  std::ifstream in(std::string(PEERBLOOM_SOURCE_DIR) + "/tests/data/squid/store_digest_A.bin",
                   std::ios::binary);
  const std::string digest((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(digest.empty());
  // Imports are taken only from known members (the per-importer quota): make victim one.
  ASSERT_TRUE(SendEntry(7, EpochCert(*victim_, 7)).ok());
  ASSERT_EQ(VictimEpoch(), 7u);
  ImportedDigestEntry e;
  e.origin = "squid:127.0.0.2:3128";
  e.importer = "victim";
  e.version = 10;
  e.fetched_unix_ms = 10;
  e.lifetime_ms = 60000;
  e.source_url = "http://127.0.0.2:3128/squid-internal-periodic/store_digest";
  e.flags = kImportHasDigest;
  e.digest = digest;
  auto send = [&](const std::string& sig) {
    ImportedDigestEntry x = e;
    x.signature = sig;
    std::string frame;
    EXPECT_TRUE(EncodeImportedDigestFrame(Header(), {x}, &frame).ok());
    return engine_->OnMessage(frame, now_ += 10);
  };
  EXPECT_EQ(send("").message(),
            "import of 'squid:127.0.0.2:3128' version '10' by 'victim': unsigned");
  // What the importer signs: the kind, its id, the version and the hash of the import.
  OriginClaim c;
  c.kind = SignedKind::kImport;
  c.origin = "victim";
  c.version = 10;
  std::string body;
  body += static_cast<char>(e.origin.size());
  body += e.origin;
  body += static_cast<char>(e.source_url.size());
  body += e.source_url;
  body += std::string("\x0a\0\0\0\0\0\0\0", 8);
  body += digest;
  c.body_hash = Sha256(body);
  std::string by_mallory, by_victim;
  ASSERT_TRUE(mallory_->Sign(kTag, c, &by_mallory).ok());
  ASSERT_TRUE(victim_->Sign(kTag, c, &by_victim).ok());
  EXPECT_EQ(send(by_mallory).message(),
            "import of 'squid:127.0.0.2:3128' version '10' by 'victim': bad signature");
  EXPECT_EQ(engine_->stats().imports_in, 0u);
  EXPECT_TRUE(send(by_victim).ok());
  EXPECT_EQ(engine_->stats().imports_in, 1u);
}

}  // namespace
}  // namespace peerbloom
