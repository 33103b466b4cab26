// Signed origins against a hostile member: a client holding one authorized CURVE key (and its
// own sign key) sends frames that speak for another node. Real daemons, all signing; each
// forgery must be refused and counted, and the victim's content must stay listed everywhere
// (docs/security.md, "Signed origins").
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "peerbloom/client/curve_keys.h"
#include "peerbloom/origin_sig.h"
#include "peerbloom/summary.h"
#include "peerbloom/wire.h"
#include "tests/support/cluster_harness.h"
#include "tests/support/hostile_client.h"
#include "tests/support/process.h"

namespace peerbloom::testing {
namespace {

constexpr int kUrls = 50;

std::unique_ptr<OriginSigner> SignerFromKeyFile(const std::string& path) {
  client::CurveKeyPair pair;
  std::string raw;
  std::unique_ptr<OriginSigner> signer;
  if (!client::ReadKeyFile(path, &pair).ok() ||
      !client::Z85Decode32(pair.sign_secret_key, &raw).ok() ||
      !OriginSigner::Create(raw, &signer).ok()) {
    return nullptr;
  }
  return signer;
}

class AttackSign : public ::testing::Test {
 protected:
  void SetUp() override {
    victim_ = cluster_.AddSigningNode("victim");
    a_ = cluster_.AddSigningNode("a");
    b_ = cluster_.AddSigningNode("b");
    std::string sign_secret;
    std::string client_public, client_secret;
    cluster_.AuthorizeExtraSigningKey("mallory", &client_public, &client_secret, &sign_secret);
    mallory_.SetKeys(client_public, client_secret);
    std::string raw;
    ASSERT_TRUE(client::Z85Decode32(sign_secret, &raw).ok());
    ASSERT_TRUE(OriginSigner::Create(raw, &mallory_signer_).ok());
    victim_signer_ = SignerFromKeyFile(cluster_.dir() + "/victim.key");
    ASSERT_NE(victim_signer_, nullptr);
    ASSERT_TRUE(victim_->Start(options_, {})) << victim_->log_tail();
    ASSERT_TRUE(a_->Start(options_, {victim_})) << a_->log_tail();
    ASSERT_TRUE(b_->Start(options_, {a_})) << b_->log_tail();
    for (int i = 0; i < kUrls; ++i) urls_.push_back("http://victim.example/" + std::to_string(i));
    ASSERT_TRUE(victim_->Add(urls_));
    for (Node* n : {a_, b_}) {
      ASSERT_TRUE(WaitFor([&] { return AllListVictim(n); }, kWaitDeadline)) << n->name();
    }
    ASSERT_TRUE(
        WaitFor([&] { return VictimAt(a_).value("version", uint64_t{0}) > 0; }, kWaitDeadline));
  }

  bool AllListVictim(Node* n) {
    const auto answers = n->WhoHas(urls_);
    if (answers.size() != urls_.size()) return false;
    for (const auto& holders : answers) {
      if (std::find(holders.begin(), holders.end(), "victim") == holders.end()) return false;
    }
    return true;
  }

  json VictimAt(Node* n) {
    for (const json& p : n->Peers()) {
      if (p.value("node_id", "") == "victim") return p;
    }
    return json::object();
  }

  static uint64_t Gossip(Node* n, const char* name) { return StatsCounter(n, "gossip", name); }

  // A CURVE client connected to `target` with the extra key: it speaks as "mallory".
  zmq::socket_t Client(Node* target) { return mallory_.Connect(target); }

  WireHeader Header() { return mallory_.NextHeader(); }

  // An empty summary of the victim: what erased its URLs before origins were signed.
  Summary EmptyVictimSummary(uint64_t epoch, uint64_t version) {
    Summary s;
    s.origin = "victim";
    s.epoch = epoch;
    s.version = version;
    s.key_scheme = KeyScheme::kRaw;
    s.filter = BloomFilter(10, 3);
    return s;
  }

  std::string SignState(const OriginSigner& signer, const Summary& s) {
    OriginClaim c;
    c.kind = SignedKind::kSummaryState;
    c.origin = s.origin;
    c.epoch = s.epoch;
    c.version = s.version;
    c.body_hash = StateHash(s);
    std::string sig;
    EXPECT_TRUE(signer.Sign(ClusterTag(kClusterSecret), c, &sig).ok());
    return sig;
  }

  std::string FullFrame(const Summary& s, std::string_view state_sig) {
    std::string codec, frame;
    EXPECT_TRUE(EncodeSummary(s, &codec).ok());
    EXPECT_TRUE(
        EncodeSummaryFrame(Header(), WireType::kFullSummary, codec, &frame, state_sig).ok());
    return frame;
  }

  // Frames from one client are handled in order: once a malformed marker sent after them is
  // counted, they were handled. For frames the engine takes without refusing.
  bool Sync(zmq::socket_t* s, Node* target) {
    const uint64_t before = Gossip(target, "malformed_in");
    s->send(zmq::str_buffer("marker"));
    return WaitFor([&] { return Gossip(target, "malformed_in") > before; }, kWaitDeadline);
  }

  void ExpectVictimListedEverywhere() {
    for (Node* n : {victim_, a_, b_}) EXPECT_TRUE(AllListVictim(n)) << n->name();
  }

  Cluster cluster_;
  NodeOptions options_;
  Node* victim_ = nullptr;
  Node* a_ = nullptr;
  Node* b_ = nullptr;
  std::vector<std::string> urls_;
  std::unique_ptr<OriginSigner> mallory_signer_;
  std::unique_ptr<OriginSigner> victim_signer_;
  HostileClient mallory_{"mallory"};
};

TEST_F(AttackSign, ForgedEmptyFullSummaryWithAHigherVersionIsRefused) {
  const json held = VictimAt(a_);
  const uint64_t epoch = held["epoch"];
  const uint64_t version = held["version"];
  const Summary forged = EmptyVictimSummary(epoch, version + 100);
  zmq::socket_t s = Client(a_);
  std::mt19937_64 rng(3);
  std::string junk(kSignatureBytes, '\0');
  for (char& c : junk) c = static_cast<char>(rng());
  const std::vector<std::pair<const char*, std::string>> attempts = {
      {"unsigned", FullFrame(forged, "")},
      {"junk signature", FullFrame(forged, junk)},
      {"signed by mallory", FullFrame(forged, SignState(*mallory_signer_, forged))},
  };
  for (const auto& [what, frame] : attempts) {
    const uint64_t before = Gossip(a_, "signatures_refused");
    EXPECT_TRUE(SendAndCount(&s, a_, frame, "gossip", "signatures_refused", before)) << what;
  }
  EXPECT_LT(VictimAt(a_).value("version", uint64_t{0}), version + 100);
  ExpectVictimListedEverywhere();
}

TEST_F(AttackSign, ForgedRelayedEpochIsRefused) {
  const uint64_t epoch = VictimAt(a_)["epoch"];
  zmq::socket_t s = Client(a_);
  DigestEntry e;
  e.origin = "victim";
  e.epoch = epoch + 1000;
  e.heartbeat = uint64_t{1} << 40;
  e.alive = true;
  OriginClaim mallory_cert;
  mallory_cert.kind = SignedKind::kEpoch;
  mallory_cert.origin = "victim";
  mallory_cert.epoch = e.epoch;
  std::string by_mallory;
  ASSERT_TRUE(mallory_signer_->Sign(ClusterTag(kClusterSecret), mallory_cert, &by_mallory).ok());
  for (const std::string& cert : {std::string(), std::string(kSignatureBytes, 'x'), by_mallory}) {
    e.epoch_cert = cert;
    DigestBody body;
    body.entries = {e};
    std::string frame;
    ASSERT_TRUE(EncodeDigestFrame(Header(), body, &frame).ok());
    const uint64_t before = Gossip(a_, "epochs_refused");
    EXPECT_TRUE(SendAndCount(&s, a_, frame, "gossip", "epochs_refused", before)) << cert.size();
    EXPECT_EQ(VictimAt(a_).value("epoch", uint64_t{0}), epoch);
  }
  ExpectVictimListedEverywhere();
  EXPECT_TRUE(SeesAlive(a_, "victim"));
}

TEST_F(AttackSign, AlteredRelayedDeltaIsRefused) {
  const json held = VictimAt(a_);
  const uint64_t epoch = held["epoch"];
  const uint64_t version = held["version"];
  SummaryDelta d;
  d.origin = "victim";
  d.epoch = epoch;
  d.base_version = version + 50;  // past what anyone holds: a genuine one only asks for repair
  d.version = version + 51;
  d.key_scheme = KeyScheme::kRaw;
  d.k = 3;
  d.log2_bits = 10;
  d.flipped = {1, 2, 3};
  std::string codec;
  ASSERT_TRUE(EncodeDelta(d, &codec).ok());
  const std::string state_sig = SignState(*victim_signer_, EmptyVictimSummary(epoch, d.version));
  auto delta_sig = [&](const std::string& bytes) {
    OriginClaim c;
    c.kind = SignedKind::kDelta;
    c.origin = "victim";
    c.epoch = epoch;
    c.base_version = d.base_version;
    c.version = d.version;
    c.body_hash = Sha256(bytes + state_sig);
    std::string sig;
    EXPECT_TRUE(victim_signer_->Sign(ClusterTag(kClusterSecret), c, &sig).ok());
    return sig;
  };
  const std::string genuine_sig = delta_sig(codec);
  zmq::socket_t s = Client(a_);
  std::string frame;
  // The genuine delta verifies (the control: the check is what refuses the others).
  ASSERT_TRUE(
      EncodeSummaryFrame(Header(), WireType::kDelta, codec, &frame, state_sig, genuine_sig).ok());
  EXPECT_TRUE(SendAndCount(&s, a_, frame, "gossip", "signatures_verified",
                           Gossip(a_, "signatures_verified")));
  // Other positions under the same signatures.
  SummaryDelta altered = d;
  altered.flipped = {1, 2, 4};
  std::string altered_codec;
  ASSERT_TRUE(EncodeDelta(altered, &altered_codec).ok());
  ASSERT_TRUE(
      EncodeSummaryFrame(Header(), WireType::kDelta, altered_codec, &frame, state_sig, genuine_sig)
          .ok());
  EXPECT_TRUE(SendAndCount(&s, a_, frame, "gossip", "signatures_refused",
                           Gossip(a_, "signatures_refused")));
  // The state signature swapped for another of the victim's: covered by the delta signature.
  const std::string other_state =
      SignState(*victim_signer_, EmptyVictimSummary(epoch, d.version + 1));
  ASSERT_TRUE(
      EncodeSummaryFrame(Header(), WireType::kDelta, codec, &frame, other_state, genuine_sig).ok());
  EXPECT_TRUE(SendAndCount(&s, a_, frame, "gossip", "signatures_refused",
                           Gossip(a_, "signatures_refused")));
  ExpectVictimListedEverywhere();
}

TEST_F(AttackSign, ReplayedOldSummaryIsRefused) {
  const json held = VictimAt(a_);
  const uint64_t epoch = held["epoch"];
  const uint64_t version = held["version"];
  zmq::socket_t s = Client(a_);
  // Genuinely signed by the victim, but older than what a holds: an old version of this epoch,
  // and a newer version of an older epoch.
  for (const Summary& old : {EmptyVictimSummary(epoch, version - 1 > 0 ? version - 1 : 1),
                             EmptyVictimSummary(epoch - 1, version + 100)}) {
    if (old.epoch == epoch && old.version >= version) continue;
    const std::string frame = FullFrame(old, SignState(*victim_signer_, old));
    const uint64_t stale = Gossip(a_, "stale_dropped");
    const uint64_t verified = Gossip(a_, "signatures_verified");
    s.send(zmq::buffer(frame));
    ASSERT_TRUE(Sync(&s, a_));
    EXPECT_GT(Gossip(a_, "signatures_verified"), verified) << old.epoch << "/" << old.version;
    EXPECT_GT(Gossip(a_, "stale_dropped"), stale) << old.epoch << "/" << old.version;
  }
  EXPECT_EQ(VictimAt(a_).value("epoch", uint64_t{0}), epoch);
  EXPECT_GE(VictimAt(a_).value("version", uint64_t{0}), version);
  ExpectVictimListedEverywhere();
}

// Before: a member kept a SIGKILLed node listed alive for 30 s by claiming fresh heartbeats
// for it in its digests. Now a node's liveness is taken only from its own frames or from
// beats it signed: mallory claims the dead victim's epoch with heartbeats advancing at the
// documented rate (one per failure_timeout / 4) at a and b, and both still declare the victim
// dead. Bound: within 10 failure timeouts (the claims run throughout), where the attack held
// it alive for 20.
TEST_F(AttackSign, ClaimedHeartbeatsCannotKeepAKilledNodeAlive) {
  const json at_a = VictimAt(a_);
  const uint64_t epoch = at_a.value("epoch", uint64_t{0});
  const uint64_t heartbeat = at_a.value("heartbeat", uint64_t{0});
  ASSERT_GT(epoch, 0u);
  victim_->Kill9();
  std::atomic<bool> stop{false};
  std::thread claimer([&] {
    zmq::socket_t to_a = Client(a_);
    zmq::socket_t to_b = Client(b_);
    const auto beat = std::chrono::milliseconds(options_.failure_timeout_ms / 4);
    for (uint64_t i = 1; !stop.load(); ++i) {
      WireHeader h = Header();
      h.type = WireType::kDigest;
      DigestBody body;
      DigestEntry e;
      e.origin = "victim";
      e.epoch = epoch;
      e.heartbeat = heartbeat + i;
      e.alive = true;
      body.entries.push_back(e);
      std::string frame;
      ASSERT_TRUE(EncodeDigestFrame(h, body, &frame).ok());
      to_a.send(zmq::buffer(frame), zmq::send_flags::dontwait);
      to_b.send(zmq::buffer(frame), zmq::send_flags::dontwait);
      std::this_thread::sleep_for(beat);
    }
  });
  const bool dead = WaitFor([&] { return !SeesAlive(a_, "victim") && !SeesAlive(b_, "victim"); },
                            std::chrono::milliseconds(10 * options_.failure_timeout_ms));
  stop = true;
  claimer.join();
  EXPECT_TRUE(dead) << "victim at a: " << VictimAt(a_) << "\nat b: " << VictimAt(b_);
  EXPECT_TRUE(SeesAlive(a_, "b"));
  EXPECT_TRUE(SeesAlive(b_, "a"));
}

// A daemon told to require signatures without sign keys refuses to start, and says how.
TEST(SignedOriginsConfig, RequireSignaturesWithoutSignKeysRefusesToStart) {
  Cluster cluster;
  Node* n = cluster.AddNode("unsigned");
  NodeOptions o;
  o.extra = "require_signatures = true";
  EXPECT_FALSE(n->Start(o, {}));
  const std::string key_file = cluster.dir() + "/unsigned.key";
  EXPECT_NE(n->log_tail().find("key file '" + key_file +
                               "' has no sign keys, needed by 'require_signatures' (add them "
                               "with 'peerbloom keygen --add-sign-key " +
                               key_file + "')"),
            std::string::npos)
      << n->log_tail();
}

// The upgrade path of docs/security.md ("Upgrading a cluster without sign keys"), end to end:
// a cluster whose keys have no sign keys is refused by the new default, and says how to go on;
// with `require_signatures = false` it runs; sign keys are added to each key file and the
// `sign=` lines to authorized_keys; then, back at the default, it runs with signatures
// required, and a URL held by one node is listed at the other at every step.
TEST(SignedOriginsUpgrade, AClusterWithoutSignKeysMovesToRequiredSignatures) {
  Cluster cluster;
  Node* a = cluster.AddNode("a");
  Node* b = cluster.AddNode("b");
  const std::string a_key = cluster.dir() + "/a.key";
  const std::string b_key = cluster.dir() + "/b.key";
  NodeOptions by_default;
  by_default.signatures_default = true;
  EXPECT_FALSE(a->Start(by_default, {}));
  EXPECT_NE(a->log_tail().find("key file '" + a_key + "' has no sign keys"), std::string::npos)
      << a->log_tail();
  EXPECT_NE(a->log_tail().find("set 'require_signatures = false'"), std::string::npos)
      << a->log_tail();

  // While upgrading: signatures off, set by hand as the docs say.
  NodeOptions upgrading;
  upgrading.extra = "require_signatures = false\n";
  ASSERT_TRUE(a->Start(upgrading, {})) << a->log_tail();
  ASSERT_TRUE(b->Start(upgrading, {a})) << b->log_tail();
  ASSERT_TRUE(b->Add({"http://b.example/1"}));
  auto listed_at_a = [&](const std::string& url) {
    return WaitFor(
        [&] {
          const auto who = a->WhoHas({url});
          return who.size() == 1 && who[0] == std::vector<std::string>{"b"};
        },
        kWaitDeadline);
  };
  ASSERT_TRUE(listed_at_a("http://b.example/1"));

  // Step 1: sign keys in each key file; the nodes restart and sign what they originate.
  for (const std::string& key : {a_key, b_key}) {
    const ProcessResult r = RunCli("keygen --add-sign-key " + key, Merged());
    ASSERT_EQ(r.exit_code, 0) << r.out;
  }
  // Signing now, but listed without sign= lines: the default still refuses, naming them.
  ASSERT_TRUE(a->Stop());
  EXPECT_FALSE(a->Start(by_default, {}));
  EXPECT_NE(a->log_tail().find("lists nodes without a sign key ('a', 'b')"), std::string::npos)
      << a->log_tail();
  ASSERT_TRUE(a->Start(upgrading, {})) << a->log_tail();
  ASSERT_TRUE(b->Stop());  // step 1 restarts every node: b signs from now on too
  ASSERT_TRUE(b->Start(upgrading, {a})) << b->log_tail();
  ASSERT_TRUE(listed_at_a("http://b.example/1"));
  // Step 2: every node's sign= line in authorized_keys (from the key files themselves).
  std::string lines;
  for (const auto& [key, id] : {std::pair{a_key, "a"}, std::pair{b_key, "b"}}) {
    const ProcessResult r = RunCli("keygen --authorized-line " + key + " " + id, Merged());
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find(" sign="), std::string::npos) << r.out;
    lines += r.out;
  }
  std::ofstream(cluster.dir() + "/authorized_keys") << lines;
  for (Node* n : {a, b}) {
    const uint64_t reloads = n->Stats().value("reloads", uint64_t{0});
    ASSERT_TRUE(n->Reload(upgrading, n == a ? std::vector<Node*>{} : std::vector<Node*>{a}));
    ASSERT_TRUE(
        WaitFor([&] { return n->Stats().value("reloads", uint64_t{0}) > reloads; }, kWaitDeadline));
  }
  ASSERT_TRUE(listed_at_a("http://b.example/1"));
  // Step 3: the line removed, the default: signatures required.
  for (Node* n : {a, b}) {
    ASSERT_TRUE(n->Stop());
    ASSERT_TRUE(n->Start(by_default, n == a ? std::vector<Node*>{} : std::vector<Node*>{a}))
        << n->log_tail();
    EXPECT_NE(n->log_tail().find("signatures required"), std::string::npos) << n->log_tail();
  }
  ASSERT_TRUE(b->Add({"http://b.example/2"}));
  EXPECT_TRUE(listed_at_a("http://b.example/1"));
  EXPECT_TRUE(listed_at_a("http://b.example/2"));
  EXPECT_GT(a->Stats()["gossip"].value("signatures_verified", uint64_t{0}), 0u);
  EXPECT_EQ(a->Stats()["gossip"].value("signatures_refused", uint64_t{0}), 0u);
}

}  // namespace
}  // namespace peerbloom::testing
