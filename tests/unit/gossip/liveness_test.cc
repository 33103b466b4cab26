// Who speaks for a node's liveness (docs/gossip.md): one GossipEngine ("rx") fed frames on
// authenticated links from the node itself ("victim"), an honest relay and a member that lies
// ("mallory"). A node's own frames are never refused; a node that signs its beats is kept
// alive by its signed beats whatever others claim; unsigned claims are bounded by the clock
// only, never by an earlier (perhaps stale) claim.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "peerbloom/gossip.h"
#include "peerbloom/origin_sig.h"
#include "peerbloom/summary.h"
#include "peerbloom/wire.h"

namespace peerbloom {
namespace {

constexpr uint64_t kTag = 0x5eed;
constexpr int64_t kTimeout = 10000;       // failure timeout; heartbeats every 2,500 ms
constexpr int64_t kWall = 1800000000000;  // rx's wall clock at monotonic 0
constexpr int64_t kHour = 3600 * 1000;

std::shared_ptr<OriginSigner> NewSigner(std::string* pub) {
  std::string sec;
  EXPECT_TRUE(GenerateSignKeyPair(pub, &sec).ok());
  std::unique_ptr<OriginSigner> s;
  EXPECT_TRUE(OriginSigner::Create(sec, &s).ok());
  return std::shared_ptr<OriginSigner>(std::move(s));
}

class Liveness : public ::testing::Test {
 protected:
  // `victim_signs`: the victim has a listed sign key (else the cluster runs unsigned for it).
  void Build(bool victim_signs) {
    auto ring = std::make_shared<SignKeyRing>();
    std::string pub;
    victim_ = NewSigner(&pub);
    if (victim_signs) {
      ASSERT_TRUE(ring->Add("victim", pub).ok());
    }
    mallory_ = NewSigner(&pub);
    ASSERT_TRUE(ring->Add("mallory", pub).ok());
    GossipOptions o;
    o.node_id = "rx";
    o.endpoint = "tcp://rx:1";
    o.cluster_tag = kTag;
    o.failure_timeout_ms = kTimeout;
    o.sign_keys = ring;
    o.listed_only = true;
    o.max_clock_skew_ms = kHour;
    int port = 1;
    for (const char* id : {"victim", "relay", "mallory"}) {
      o.listed.push_back({id,
                          {std::string(40, 'a' + port)},
                          "tcp://" + std::string(id) + ":" + std::to_string(++port)});
    }
    engine_ = std::make_unique<GossipEngine>(o);
    engine_->SetWallClock(kWall, 0);
    epoch_ = static_cast<uint64_t>(kWall - 30000);  // the victim started 30 s ago
  }

  static WireHeader Header(const std::string& sender, uint64_t epoch, uint64_t heartbeat) {
    WireHeader h;
    h.cluster_tag = kTag;
    h.sender_id = sender;
    h.sender_epoch = epoch;
    h.sender_heartbeat = heartbeat;
    return h;
  }

  std::string BeatSig(const OriginSigner& by, uint64_t epoch, uint64_t heartbeat) {
    OriginClaim c;
    c.kind = SignedKind::kBeat;
    c.origin = "victim";
    c.epoch = epoch;
    c.version = heartbeat;
    std::string sig;
    EXPECT_TRUE(by.Sign(kTag, c, &sig).ok());
    return sig;
  }

  std::string EpochCert(uint64_t epoch) {
    OriginClaim c;
    c.kind = SignedKind::kEpoch;
    c.origin = "victim";
    c.epoch = epoch;
    std::string sig;
    EXPECT_TRUE(victim_->Sign(kTag, c, &sig).ok());
    return sig;
  }

  DigestEntry VictimEntry(uint64_t epoch, uint64_t heartbeat, std::string beat_sig = "") {
    DigestEntry e;
    e.origin = "victim";
    e.epoch = epoch;
    e.heartbeat = heartbeat;
    e.alive = true;
    e.beat_sig = std::move(beat_sig);
    return e;
  }

  // A digest from `sender` on its own authenticated link.
  Status Digest(const std::string& sender, std::vector<DigestEntry> entries) {
    DigestBody body;
    body.entries = std::move(entries);
    std::string frame;
    EXPECT_TRUE(EncodeDigestFrame(Header(sender, 1, ++beats_[sender]), body, &frame).ok());
    return engine_->OnMessage(frame, now_, sender);
  }

  Status Frame(const WireHeader& h) {
    std::string frame;
    EXPECT_TRUE(EncodeDigestFrame(h, DigestBody(), &frame).ok());
    return engine_->OnMessage(frame, now_, h.sender_id);
  }

  // The victim's full summary, relayed by the honest relay (signed when the victim signs).
  Status RelayedSummary(uint64_t epoch) {
    Summary s;
    s.origin = "victim";
    s.epoch = epoch;
    s.version = 1;
    s.key_scheme = KeyScheme::kSquidMd5;
    s.filter = BloomFilter(10, 3);
    s.filter.SetBit(7);
    s.estimated_items = 1;
    OriginClaim c;
    c.kind = SignedKind::kSummaryState;
    c.origin = s.origin;
    c.epoch = s.epoch;
    c.version = s.version;
    c.body_hash = StateHash(s);
    std::string sig, codec, frame;
    EXPECT_TRUE(victim_->Sign(kTag, c, &sig).ok());
    EXPECT_TRUE(EncodeSummary(s, &codec).ok());
    EXPECT_TRUE(EncodeSummaryFrame(Header("relay", 1, ++beats_["relay"]), WireType::kFullSummary,
                                   codec, &frame, sig)
                    .ok());
    return engine_->OnMessage(frame, now_, "relay");
  }

  PeerInfo Victim() const {
    for (const PeerInfo& p : engine_->Peers(now_)) {
      if (p.node_id == "victim") return p;
    }
    return PeerInfo();
  }

  const GossipStats& stats() const { return engine_->stats(); }

  std::unique_ptr<GossipEngine> engine_;
  std::shared_ptr<OriginSigner> victim_, mallory_;
  std::map<std::string, uint64_t> beats_;
  uint64_t epoch_ = 0;
  int64_t now_ = 0;
};

// Whatever a node says of itself on its own link, its frame is taken: an epoch far ahead of
// this node's clock (its clock was stepped), a heartbeat no clock explains.
TEST_F(Liveness, TheNodesOwnFramesAreNeverRefused) {
  Build(/*victim_signs=*/true);
  const uint64_t ahead = static_cast<uint64_t>(kWall + 10 * kHour);
  EXPECT_TRUE(Frame(Header("victim", ahead, uint64_t{1} << 40)).ok());
  EXPECT_TRUE(Victim().alive);
  EXPECT_EQ(Victim().epoch, ahead);
  EXPECT_EQ(stats().implausible_epochs + stats().implausible_heartbeats, 0u);
}

// The restart bug: a relayed summary installs the victim's epoch before any heartbeat of it
// is heard (heartbeat 0); its own frames and its relayed beats, far above 0 because it has
// been up for minutes, are still taken, now and a minute later.
TEST_F(Liveness, BeatsAfterASummaryInstalledTheEpochAreTaken) {
  for (bool victim_signs : {true, false}) {
    SCOPED_TRACE(victim_signs ? "signed" : "unsigned");
    Build(victim_signs);
    epoch_ = static_cast<uint64_t>(kWall - 10 * 60 * 1000);  // up for 10 minutes: beat 240
    ASSERT_TRUE(RelayedSummary(epoch_).ok());
    EXPECT_EQ(Victim().epoch, epoch_);
    EXPECT_EQ(Victim().heartbeat, 0u);
    for (uint64_t beat = 240; beat < 280; ++beat) {
      now_ += 2500;
      const std::string sig = victim_signs ? BeatSig(*victim_, epoch_, beat) : "";
      if (beat % 2 == 0) {
        ASSERT_TRUE(Digest("relay", {VictimEntry(epoch_, beat, sig)}).ok());
      } else {
        // Its own frame: a digest with its own entry, as its heartbeat digests carry.
        DigestBody body;
        body.entries = {VictimEntry(epoch_, beat, sig)};
        std::string frame;
        ASSERT_TRUE(EncodeDigestFrame(Header("victim", epoch_, beat), body, &frame).ok());
        ASSERT_TRUE(engine_->OnMessage(frame, now_, "victim").ok());
      }
      EXPECT_TRUE(Victim().alive) << beat;
    }
    EXPECT_GE(Victim().heartbeat, 278u);
    EXPECT_EQ(stats().implausible_epochs + stats().implausible_heartbeats + stats().beats_refused,
              0u);
  }
}

// Mallory claims the victim's heartbeat far ahead, unsigned and with a forged signature. The
// victim is heard only through the honest relay (no link of its own here), which keeps
// relaying its signed beats: it stays alive for minutes, its heartbeat is its own.
TEST_F(Liveness, ClaimsOfOthersCannotSilenceANodeThatSignsItsBeats) {
  Build(/*victim_signs=*/true);
  uint64_t beat = 12;
  ASSERT_TRUE(Digest("relay", {VictimEntry(epoch_, beat, BeatSig(*victim_, epoch_, beat))}).ok());
  ASSERT_TRUE(Victim().alive);
  EXPECT_EQ(stats().epochs_refused, 0u);  // the beat vouches for the epoch
  const uint64_t lie = beat + 40;         // within what the epoch's age allows: not implausible
  ASSERT_TRUE(Digest("mallory", {VictimEntry(epoch_, lie)}).ok());
  ASSERT_TRUE(Digest("mallory", {VictimEntry(epoch_, lie, BeatSig(*mallory_, epoch_, lie))}).ok());
  EXPECT_EQ(stats().beats_refused, 1u);
  EXPECT_EQ(Victim().heartbeat, beat);
  for (int i = 0; i < 100; ++i) {  // 250 s: 25 failure timeouts
    now_ += 2500;
    ++beat;
    ASSERT_TRUE(Digest("relay", {VictimEntry(epoch_, beat, BeatSig(*victim_, epoch_, beat))}).ok());
    ASSERT_TRUE(Digest("mallory", {VictimEntry(epoch_, beat + 1000)}).ok());
    EXPECT_TRUE(Victim().alive) << i;
  }
  EXPECT_EQ(Victim().heartbeat, beat);
}

// Before the first signed beat arrives an unsigned claim counts (the node may run a version
// that does not sign); the first signed beat replaces it, though lower, and from then on
// unsigned claims of it are not taken.
TEST_F(Liveness, TheFirstSignedBeatReplacesUnsignedClaims) {
  Build(/*victim_signs=*/true);
  DigestEntry claim = VictimEntry(epoch_, 40);
  claim.epoch_cert = EpochCert(epoch_);  // certificates are public: anyone may relay one
  ASSERT_TRUE(Digest("mallory", {claim}).ok());
  EXPECT_EQ(Victim().heartbeat, 40u);
  now_ += 1000;
  ASSERT_TRUE(Digest("relay", {VictimEntry(epoch_, 13, BeatSig(*victim_, epoch_, 13))}).ok());
  EXPECT_EQ(Victim().heartbeat, 13u);
  ASSERT_TRUE(Digest("mallory", {VictimEntry(epoch_, 45)}).ok());
  EXPECT_EQ(Victim().heartbeat, 13u);
  ASSERT_TRUE(Digest("relay", {VictimEntry(epoch_, 14, BeatSig(*victim_, epoch_, 14))}).ok());
  EXPECT_EQ(Victim().heartbeat, 14u);
}

// Unsigned claims are bounded by the clock, and a clock stepped back never tightens the
// bound: what was plausible stays plausible.
TEST_F(Liveness, UnsignedClaimsAreBoundedByTheHighestClockSeen) {
  Build(/*victim_signs=*/false);
  const uint64_t up_ms = static_cast<uint64_t>(kWall) - epoch_ + kHour;
  const uint64_t bound = 4 * (up_ms / 2500) + 16;
  ASSERT_TRUE(Digest("relay", {VictimEntry(epoch_, bound + 1)}).ok());
  EXPECT_EQ(stats().implausible_heartbeats, 1u);
  EXPECT_FALSE(Victim().alive);
  engine_->SetWallClock(kWall - 2 * kHour, now_);  // stepped back two hours
  ASSERT_TRUE(Digest("relay", {VictimEntry(epoch_, bound)}).ok());
  EXPECT_TRUE(Victim().alive);
  EXPECT_EQ(stats().implausible_heartbeats, 1u);
  const uint64_t future = static_cast<uint64_t>(kWall + kHour + 1);
  ASSERT_TRUE(Digest("relay", {VictimEntry(future, 1)}).ok());
  EXPECT_EQ(stats().implausible_epochs, 1u);
  EXPECT_EQ(Victim().epoch, epoch_);
}

// What others say of this node's own heartbeat is never taken: its frames keep the
// heartbeat its own beats gave it.
TEST_F(Liveness, ThisNodesHeartbeatIgnoresClaimsAboutIt) {
  Build(/*victim_signs=*/true);
  DigestEntry about_rx = VictimEntry(0, uint64_t{1} << 40);
  about_rx.origin = "rx";
  engine_->OnTick(now_);
  ASSERT_TRUE(Digest("mallory", {about_rx}).ok());
  ASSERT_TRUE(Digest("relay", {VictimEntry(epoch_, 3)}).ok());
  now_ += 1000;
  engine_->OnTick(now_);
  const std::vector<Outgoing> out = engine_->TakeOutgoing();
  ASSERT_FALSE(out.empty());
  for (const Outgoing& o : out) {
    WireFrame f;
    ASSERT_TRUE(DecodeFrame(o.payload, WireLimits(), &f).ok());
    EXPECT_LE(f.header.sender_heartbeat, 2u);
  }
}

}  // namespace
}  // namespace peerbloom
