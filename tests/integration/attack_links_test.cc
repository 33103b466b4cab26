// A member gone bad: a client that holds one authorized key (listed as 'test-client') and
// speaks the wire protocol to real daemons on loopback. Whatever it sends, the other nodes
// stay listed everywhere, memory and links stay bounded, and every refusal is counted
// (docs/security.md). Key rotation without downtime is here too: it exercises the same
// allow-list paths.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "peerbloom/wire.h"
#include "tests/support/cluster_harness.h"
#include "tests/support/hostile_client.h"

namespace peerbloom::testing {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
const std::string kUrl = "http://victim.example.com/object";

uint64_t NowUnixMs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

class AttackLinks : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = cluster_.AddNode("a");
    b_ = cluster_.AddNode("b");
    victim_ = cluster_.AddNode("victim");
    late_ = cluster_.AddNode("late");
    cluster_.AuthorizeExtraKey(&bad_public_, &bad_secret_);
    client_.SetKeys(bad_public_, bad_secret_);
    ASSERT_TRUE(a_->Start(options_, {})) << a_->log_tail();
    ASSERT_TRUE(b_->Start(options_, {a_})) << b_->log_tail();
    ASSERT_TRUE(victim_->Start(options_, {a_})) << victim_->log_tail();
    ASSERT_TRUE(victim_->Add({kUrl}));
    ASSERT_TRUE(WaitFor([&] { return VictimListed(a_) && VictimListed(b_); }, kWaitDeadline));
    epoch_ = NowUnixMs();
  }

  static bool VictimListed(Node* n) {
    const auto who = n->WhoHas({kUrl});
    if (who.size() != 1) return false;
    for (const std::string& id : who[0]) {
      if (id == "victim") return true;
    }
    return false;
  }

  static WireHeader Header(const std::string& sender, uint64_t epoch, uint64_t heartbeat) {
    return PeerHeader(WireType::kDigest, sender, epoch, heartbeat);
  }

  static std::string Digest(const WireHeader& h, std::vector<DigestEntry> entries) {
    DigestBody body;
    body.entries = std::move(entries);
    std::string frame;
    EXPECT_TRUE(EncodeDigestFrame(h, body, &frame).ok());
    return frame;
  }

  static DigestEntry Entry(const std::string& origin, uint64_t epoch, uint64_t heartbeat) {
    DigestEntry e;
    e.origin = origin;
    e.epoch = epoch;
    e.heartbeat = heartbeat;
    e.alive = true;
    return e;
  }

  static uint64_t Reloads(Node* n) { return n->Stats().value("reloads", uint64_t{0}); }

  static json PeerOf(Node* observer, const std::string& id) {
    for (const json& p : observer->Peers()) {
      if (p.value("node_id", "") == id) return p;
    }
    return json();
  }

  bool VictimFineEverywhere() {
    return VictimListed(a_) && VictimListed(b_) && SeesAlive(a_, "victim") &&
           SeesAlive(b_, "victim");
  }

  // A window of four failure timeouts.
  std::chrono::milliseconds Window() const {
    return std::chrono::milliseconds(4 * options_.failure_timeout_ms);
  }

  Cluster cluster_;
  NodeOptions options_;
  Node* a_ = nullptr;
  Node* b_ = nullptr;
  Node* victim_ = nullptr;
  Node* late_ = nullptr;
  std::string bad_public_, bad_secret_;
  uint64_t epoch_ = 0;
  HostileClient client_{"test-client"};  // the node id the harness lists the extra key for
};

// (a) Speaking for another node: a frame naming the victim as its sender, with the largest
// epoch and heartbeat, and digest entries claiming them for it.
TEST_F(AttackLinks, SpeakingForAnotherNodeIsRefused) {
  const uint64_t victim_epoch = PeerOf(a_, "victim").value("epoch", uint64_t{0});
  ASSERT_GT(victim_epoch, 0u);
  for (Node* target : {a_, b_}) {
    zmq::socket_t s = client_.Connect(target);
    s.send(zmq::buffer(Digest(Header("victim", kMax, kMax), {})));
    s.send(zmq::buffer(Digest(Header("victim", victim_epoch, kMax), {})));
    // As itself, claiming things about the victim.
    s.send(zmq::buffer(Digest(Header("test-client", epoch_, 1),
                              {Entry("victim", kMax, kMax), Entry("victim", victim_epoch, kMax),
                               Entry("victim", victim_epoch + 1, 1)})));
    ASSERT_TRUE(WaitFor([&] { return StatsCounter(target, "gossip", "sender_mismatch") >= 2; },
                        kWaitDeadline));
    ASSERT_TRUE(WaitFor([&] { return !PeerOf(target, "test-client").is_null(); }, kWaitDeadline));
  }
  EXPECT_TRUE(HoldsFor([&] { return VictimFineEverywhere(); }, Window()));
  for (Node* n : {a_, b_}) {
    EXPECT_EQ(PeerOf(n, "victim").value("epoch", uint64_t{0}), victim_epoch) << n->name();
    EXPECT_GE(StatsCounter(n, "gossip", "sender_mismatch"), 2u) << n->name();
  }
}

// (a) continued: unsigned claims about a node this one has not heard yet (the late node has
// no sign key), beyond the clock bounds, are refused. What the attacker says of itself on its
// own link is its own word and harms only itself.
TEST_F(AttackLinks, ImplausibleClaimsAboutOthersAreRefused) {
  zmq::socket_t s = client_.Connect(a_);
  s.send(zmq::buffer(Digest(Header("test-client", epoch_, 1), {})));
  ASSERT_TRUE(WaitFor([&] { return !PeerOf(a_, "test-client").is_null(); }, kWaitDeadline));
  // Its own heartbeat jumping, then a far-future epoch of its own.
  s.send(zmq::buffer(Digest(Header("test-client", epoch_, kMax), {})));
  s.send(zmq::buffer(Digest(Header("test-client", kMax, 1), {})));
  EXPECT_TRUE(WaitFor([&] { return PeerOf(a_, "test-client").value("epoch", uint64_t{0}) == kMax; },
                      kWaitDeadline));
  // Claims about a node this one has not heard yet.
  s.send(zmq::buffer(Digest(Header("test-client", kMax, 2),
                            {Entry("late", kMax, 1), Entry("late", epoch_, kMax)})));
  EXPECT_TRUE(WaitFor([&] { return StatsCounter(a_, "gossip", "implausible_epochs") >= 1; },
                      kWaitDeadline));
  EXPECT_TRUE(WaitFor([&] { return StatsCounter(a_, "gossip", "implausible_heartbeats") >= 1; },
                      kWaitDeadline));
  // The real late node joins and is a live member everywhere.
  ASSERT_TRUE(late_->Start(options_, {a_})) << late_->log_tail();
  EXPECT_TRUE(
      WaitFor([&] { return SeesAlive(a_, "late") && SeesAlive(b_, "late"); }, kWaitDeadline));
  EXPECT_TRUE(VictimFineEverywhere());
}

// (a) continued: claims about the victim sent to the victim itself. A node once took the
// highest heartbeat others showed it of its own and beat on from there; one entry with
// heartbeat 10^12 then made every other node refuse its frames as implausible, and it
// vanished from their who-has until it restarted. Now a node's heartbeat is its own.
TEST_F(AttackLinks, ClaimsAboutANodeSentToItselfChangeNothing) {
  const json before = PeerOf(a_, "victim");
  const uint64_t epoch = before.value("epoch", uint64_t{0});
  ASSERT_GT(epoch, 0u);
  zmq::socket_t s = client_.Connect(victim_);
  const uint64_t huge = 1000000000000;
  s.send(zmq::buffer(Digest(Header("test-client", epoch_, 1), {Entry("victim", epoch, huge)})));
  s.send(
      zmq::buffer(Digest(Header("test-client", epoch_, 2), {Entry("victim", epoch + 1000, huge)})));
  ASSERT_TRUE(WaitFor([&] { return !PeerOf(victim_, "test-client").is_null(); }, kWaitDeadline));
  EXPECT_TRUE(HoldsFor([&] { return VictimFineEverywhere(); }, Window()));
  for (Node* n : {a_, b_}) {
    const json p = PeerOf(n, "victim");
    EXPECT_EQ(p.value("epoch", uint64_t{0}), epoch) << n->name();
    EXPECT_LT(p.value("heartbeat", uint64_t{0}), 1000u) << n->name();
    EXPECT_EQ(StatsCounter(n, "gossip", "implausible_heartbeats"), 0u) << n->name();
  }
  EXPECT_EQ(victim_->Stats()["summary"].value("epoch", uint64_t{0}), epoch);
}

// (b) Filling the member table: one digest naming 1,100 invented members.
TEST_F(AttackLinks, InventedMembersNeverEnterTheTable) {
  std::vector<DigestEntry> ghosts;
  for (int i = 0; i < 1100; ++i) {
    DigestEntry e = Entry("ghost-" + std::to_string(i), epoch_, 1);
    e.has_contact = true;
    e.endpoint = "tcp://127.0.0.1:" + std::to_string(20000 + i);
    ghosts.push_back(e);
  }
  const std::string frame = Digest(Header("test-client", epoch_, 1), ghosts);
  for (Node* target : {a_, b_}) {
    zmq::socket_t s = client_.Connect(target);
    s.send(zmq::buffer(frame));
    EXPECT_TRUE(WaitFor([&] { return StatsCounter(target, "gossip", "members_unlisted") >= 1100; },
                        kWaitDeadline));
    // a, b, victim, test-client: at most the allow-list's other nodes.
    EXPECT_LE(target->Peers().size(), 4u);
  }
  ASSERT_TRUE(late_->Start(options_, {a_})) << late_->log_tail();
  EXPECT_TRUE(
      WaitFor([&] { return SeesAlive(a_, "late") && SeesAlive(b_, "late"); }, kWaitDeadline));
  EXPECT_LE(a_->Peers().size(), 4u + 1);
  EXPECT_LE(StatsCounter(a_, "transport", "links_open"), 4u);
  EXPECT_TRUE(VictimFineEverywhere());
}

// (c) Connecting anywhere: 300 frames, each moving the attacker's own endpoint, plus claims
// of other endpoints for the victim.
TEST_F(AttackLinks, EndpointsInFramesDoNotOpenLinks) {
  const std::string victim_endpoint = PeerOf(a_, "victim").value("endpoint", "");
  ASSERT_EQ(victim_endpoint, victim_->endpoint());
  zmq::socket_t s = client_.Connect(a_);
  for (int i = 0; i < 300; ++i) {
    WireHeader h = Header("test-client", epoch_ + i, 1);
    h.flags = kWireFlagContact | kWireFlagNeighbour;
    h.sender_endpoint = "tcp://127.0.0.1:" + std::to_string(30000 + i);
    h.sender_public_key = bad_public_;
    // A listed node a has not heard yet, at an address and key that are not its own.
    DigestEntry e = Entry("late", epoch_, 1);
    e.has_contact = true;
    e.endpoint = "tcp://127.0.0.1:" + std::to_string(40000 + i);
    e.public_key = bad_public_;
    s.send(zmq::buffer(Digest(h, {e})));
  }
  ASSERT_TRUE(
      WaitFor([&] { return StatsCounter(a_, "transport", "messages_in") >= 300; }, kWaitDeadline));
  // Several gossip rounds go out after the flood.
  const uint64_t out = StatsCounter(a_, "gossip", "messages_out");
  ASSERT_TRUE(WaitFor([&] { return StatsCounter(a_, "gossip", "messages_out") >= out + 20; },
                      kWaitDeadline));
  // b, victim and the attacker's latest endpoint.
  EXPECT_LE(StatsCounter(a_, "transport", "links_open"), 3u);
  EXPECT_GE(StatsCounter(a_, "gossip", "contacts_refused"), 300u);
  EXPECT_EQ(PeerOf(a_, "late").value("endpoint", ""), "");
  EXPECT_EQ(PeerOf(a_, "victim").value("endpoint", ""), victim_endpoint);
  EXPECT_TRUE(HoldsFor([&] { return VictimFineEverywhere(); }, Window()));
  EXPECT_LE(StatsCounter(a_, "transport", "links_open"), 3u);
}

// (d) Revocation: the attacker's key is removed and the node reloaded; the link it holds open
// delivers nothing more, the outgoing link to it closes, its TCP connection is shut down (with
// every other inbound one: the honest nodes reconnect), and it is no longer a member.
TEST_F(AttackLinks, RevokedKeyStopsAnOpenLinkAtOnce) {
  zmq::socket_t s = client_.Connect(a_);
  WireHeader h = Header("test-client", epoch_, 1);
  h.flags = kWireFlagContact | kWireFlagNeighbour;
  h.sender_endpoint = "tcp://127.0.0.1:1";
  h.sender_public_key = bad_public_;
  const std::string hello = Digest(h, {});
  // a links back to it (it chose a as a neighbour) while it keeps talking: a frame on its
  // own link keeps it alive.
  ASSERT_TRUE(WaitFor(
      [&] {
        s.send(zmq::buffer(hello));
        return StatsCounter(a_, "transport", "links_open") >= 3;
      },
      kWaitDeadline));
  cluster_.RemoveKey(bad_public_);
  const uint64_t reloads = Reloads(a_);
  const uint64_t frames_revoked = StatsCounter(a_, "transport", "frames_revoked");
  const uint64_t zap_denied = StatsCounter(a_, "transport", "zap_denied");
  const uint64_t zap_allowed = StatsCounter(a_, "transport", "zap_allowed");
  ASSERT_TRUE(a_->Reload(options_, {}));
  ASSERT_TRUE(WaitFor([&] { return Reloads(a_) > reloads; }, kWaitDeadline));
  EXPECT_GE(StatsCounter(a_, "transport", "links_revoked"), 1u);
  EXPECT_GE(StatsCounter(a_, "gossip", "members_revoked"), 1u);
  // Its TCP connection (and every other inbound one) was shut down.
  EXPECT_GE(StatsCounter(a_, "transport", "inbound_closed"), 1u);
  EXPECT_TRUE(PeerOf(a_, "test-client").is_null());
  // Whatever it sends next is dropped on the old link or refused when it reconnects.
  uint64_t heartbeat = 2;
  EXPECT_TRUE(WaitFor(
      [&] {
        s.send(zmq::buffer(Digest(Header("test-client", epoch_, heartbeat++), {})),
               zmq::send_flags::dontwait);
        return StatsCounter(a_, "transport", "frames_revoked") > frames_revoked ||
               StatsCounter(a_, "transport", "zap_denied") > zap_denied;
      },
      kWaitDeadline));
  EXPECT_TRUE(PeerOf(a_, "test-client").is_null());
  // The honest nodes (b and the victim) reconnect by themselves, pass the handshake again and
  // stay members everywhere.
  EXPECT_TRUE(WaitFor(
      [&] {
        return StatsCounter(a_, "transport", "zap_allowed") >= zap_allowed + 2 &&
               VictimFineEverywhere() && SeesAlive(a_, "b") && SeesAlive(b_, "a") &&
               SeesAlive(victim_, "a") && SeesAlive(victim_, "b");
      },
      kWaitDeadline));
  EXPECT_TRUE(PeerOf(a_, "test-client").is_null());
}

// Key rotation: the victim's new key is listed beside the old one, the victim restarts with
// the new key and stays a member everywhere; then the old key is removed and the links that
// still use it stop.
TEST_F(AttackLinks, KeyRotationWithoutDowntime) {
  std::string new_public, new_secret;
  const std::string new_key = cluster_.AddKeyFor("victim", &new_public, &new_secret);
  const std::string old_public = victim_->public_key();
  std::string old_secret;
  {
    std::ifstream in(cluster_.dir() + "/victim.key");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("secret-key = ", 0) == 0) old_secret = line.substr(13);
    }
  }
  ASSERT_EQ(old_secret.size(), 40u);
  for (Node* n : {a_, b_}) {
    const uint64_t reloads = Reloads(n);
    ASSERT_TRUE(n->Reload(options_, n == a_ ? std::vector<Node*>{} : std::vector<Node*>{a_}));
    ASSERT_TRUE(WaitFor([&] { return Reloads(n) > reloads; }, kWaitDeadline));
  }
  ASSERT_TRUE(victim_->Stop());
  victim_->set_key_file(new_key);
  ASSERT_TRUE(victim_->Start(options_, {a_})) << victim_->log_tail();
  ASSERT_EQ(victim_->public_key(), new_public);
  EXPECT_TRUE(WaitFor(
      [&] {
        return PeerOf(a_, "victim").value("public_key", "") == new_public &&
               PeerOf(b_, "victim").value("public_key", "") == new_public && VictimFineEverywhere();
      },
      kWaitDeadline));
  // Someone still holding the old key keeps a link open to a.
  zmq::socket_t old_link = client_.Connect(a_, old_public, old_secret);
  // A frame of another cluster shows the link is up (refused_by_gossip counts only it), then
  // an old-incarnation frame of the victim, stale.
  const uint64_t refused = StatsCounter(a_, "transport", "refused_by_gossip");
  WireHeader other = Header("victim", 1, 1);
  other.cluster_tag = ClusterTag("another-cluster");
  ASSERT_TRUE(old_link.send(zmq::buffer(Digest(other, {}))));
  ASSERT_TRUE(WaitFor([&] { return StatsCounter(a_, "transport", "refused_by_gossip") > refused; },
                      kWaitDeadline));
  const uint64_t stale = StatsCounter(a_, "gossip", "stale_dropped");
  ASSERT_TRUE(old_link.send(zmq::buffer(Digest(Header("victim", 1, 1), {}))));
  ASSERT_TRUE(
      WaitFor([&] { return StatsCounter(a_, "gossip", "stale_dropped") > stale; }, kWaitDeadline));
  cluster_.RemoveKey(old_public);
  const uint64_t frames_revoked = StatsCounter(a_, "transport", "frames_revoked");
  const uint64_t zap_denied = StatsCounter(a_, "transport", "zap_denied");
  for (Node* n : {a_, b_}) {
    const uint64_t reloads = Reloads(n);
    ASSERT_TRUE(n->Reload(options_, n == a_ ? std::vector<Node*>{} : std::vector<Node*>{a_}));
    ASSERT_TRUE(WaitFor([&] { return Reloads(n) > reloads; }, kWaitDeadline));
  }
  EXPECT_GE(StatsCounter(a_, "transport", "inbound_closed"), 1u);
  // The old key's connection was shut down: what it sends is dropped on the old link or
  // refused when it reconnects.
  uint64_t heartbeat = 2;
  EXPECT_TRUE(WaitFor(
      [&] {
        old_link.send(zmq::buffer(Digest(Header("victim", 1, heartbeat++), {})),
                      zmq::send_flags::dontwait);
        return StatsCounter(a_, "transport", "frames_revoked") > frames_revoked ||
               StatsCounter(a_, "transport", "zap_denied") > zap_denied;
      },
      kWaitDeadline));
  EXPECT_TRUE(HoldsFor([&] { return VictimFineEverywhere(); }, Window()));
}

}  // namespace
}  // namespace peerbloom::testing
