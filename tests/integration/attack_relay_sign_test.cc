// Signed broadcasts against a hostile member: a client holding one authorized CURVE key (and
// its own sign key), listed as a relay link of every node, sends broadcasts that name another
// origin. Real daemons, all signing. Each forgery must be refused and counted at every node
// and never reach a listener, while the genuine broadcast sent after them is delivered
// everywhere (docs/relay.md, "Origin signatures"; docs/security.md, "Signed origins").
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "peerbloom/client/curve_keys.h"
#include "peerbloom/hash.h"
#include "peerbloom/origin_sig.h"
#include "peerbloom/relay.h"
#include "peerbloom/wire.h"
#include "tests/support/cluster_harness.h"
#include "tests/support/hostile_client.h"
#include "tests/support/relay_listen.h"

namespace peerbloom::testing {
namespace {

struct Delivery {
  std::string origin;
  uint64_t id = 0;
  std::string kind;
  std::string body;
  bool operator==(const Delivery&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Delivery& d) {
  return os << "(" << d.origin << ", " << d.id << ", " << d.kind << ", '" << d.body << "')";
}

// Every delivery the node made since it started, oldest first (`listen` from cursor 0).
std::vector<Delivery> Deliveries(Node* node) {
  std::vector<Delivery> out;
  for (const Listened& d : ListenAll(node)) {
    out.push_back({d.entry["origin"], d.entry["id"], d.entry["kind"], d.payload});
  }
  return out;
}

uint64_t Relay(Node* n, const char* name) { return StatsCounter(n, "relay", name); }

class AttackRelaySign : public ::testing::Test {
 protected:
  void SetUp() override {
    victim_ = cluster_.AddSigningNode("victim");
    a_ = cluster_.AddSigningNode("a");
    b_ = cluster_.AddSigningNode("b");
    std::string sign_secret, raw;
    std::string client_public, client_secret;
    cluster_.AuthorizeExtraSigningKey("mallory", &client_public, &client_secret, &sign_secret);
    mallory_.SetKeys(client_public, client_secret);
    ASSERT_TRUE(client::Z85Decode32(sign_secret, &raw).ok());
    ASSERT_TRUE(OriginSigner::Create(raw, &mallory_signer_).ok());
    // A triangle of relay links, and mallory linked to every node.
    const std::vector<std::pair<Node*, std::string>> links = {
        {victim_, R"(relay_links = ["a", "b", "mallory"])"},
        {a_, R"(relay_links = ["victim", "b", "mallory"])"},
        {b_, R"(relay_links = ["victim", "a", "mallory"])"},
    };
    Node* seed = nullptr;
    for (const auto& [node, line] : links) {
      NodeOptions o;
      o.extra = line + "\n";
      std::vector<Node*> seeds;
      if (seed != nullptr) seeds.push_back(seed);
      ASSERT_TRUE(node->Start(o, seeds)) << node->log_tail();
      seed = victim_;
    }
    ASSERT_TRUE(WaitFor([&] { return RelayLinksUp(); }, kWaitDeadline)) << victim_->log_tail();
  }

  std::vector<Node*> Nodes() { return {victim_, a_, b_}; }

  // Each node's relay links to the two others are up (mallory is no gossip member: never up).
  bool RelayLinksUp() {
    for (Node* n : Nodes()) {
      if (n->Stats()["relay"]["links_up"] != 2) return false;
    }
    return true;
  }

  // A CURVE client connected to `target` with the extra key: its link is bound to "mallory".
  zmq::socket_t Client(Node* target) { return mallory_.Connect(target); }

  std::string Frame(const std::string& sender, const RelayData& data) {
    RelayPacket p;
    p.data = data;
    return Frame(sender, p);
  }
  std::string Frame(const std::string& sender, const RelayPacket& p) {
    const WireHeader h = mallory_.NextHeaderAs(sender);
    std::string packet, frame;
    EXPECT_TRUE(EncodeRelayPacket(p, RelayLimits(), &packet).ok());
    EXPECT_TRUE(EncodeBroadcastFrame(h, packet, &frame).ok());
    return frame;
  }

  // A fresh broadcast of `origin` (unsigned): payload kind byte `kind` (0 a message, 1 a
  // purge), then `body`; an empty visited filter.
  static RelayData Data(const std::string& origin, uint64_t id, char kind,
                        const std::string& body) {
    RelayData d;
    d.origin = origin;
    d.id = id;
    d.hop_limit = 16;
    d.filter_k = 7;
    d.filter = std::string(20, '\0');
    d.payload = std::string(1, kind) + body;
    return d;
  }

  // A cluster purge of `url` naming the victim as its origin.
  static RelayData ForgedPurge(uint64_t id, const std::string& url) {
    return Data("victim", id, '\x01', url);
  }

  Cluster cluster_;
  Node* victim_ = nullptr;
  Node* a_ = nullptr;
  Node* b_ = nullptr;
  std::unique_ptr<OriginSigner> mallory_signer_;
  HostileClient mallory_{"mallory"};
};

TEST_F(AttackRelaySign, ForgedPurgeForAnotherOriginIsRefusedEverywhere) {
  // Ids far above any the victim uses, and one per forgery, so none is a duplicate of another.
  uint64_t id = uint64_t{1} << 62;
  for (Node* target : Nodes()) {
    zmq::socket_t s = Client(target);
    RelayData unsigned_purge = ForgedPurge(++id, "http://victim.example/unsigned");
    RelayData junk = ForgedPurge(++id, "http://victim.example/junk");
    junk.flags = kRelayFlagSigned;
    junk.signature = std::string(kRelaySignatureBytes, 'x');
    RelayData by_mallory = ForgedPurge(++id, "http://victim.example/mallory");
    ASSERT_TRUE(SignRelayData(*mallory_signer_, ClusterTag(kClusterSecret), &by_mallory).ok());
    for (const RelayData& forged : {unsigned_purge, junk, by_mallory}) {
      EXPECT_TRUE(SendAndCount(&s, target, Frame("mallory", forged), "relay", "signatures_refused",
                               Relay(target, "signatures_refused")))
          << target->name() << " " << forged.payload;
    }
    // On mallory's link, a frame that names another member as its sender is refused before
    // its packet is read (the links are bound to node ids).
    const uint64_t refused = Relay(target, "signatures_refused");
    const std::string other = target == victim_ ? "a" : "victim";
    EXPECT_TRUE(SendAndCount(&s, target, Frame(other, ForgedPurge(++id, "http://x/")), "relay",
                             "sender_mismatch", Relay(target, "sender_mismatch")))
        << target->name();
    EXPECT_EQ(Relay(target, "signatures_refused"), refused) << target->name();
    EXPECT_EQ(Relay(target, "purges"), 0u) << target->name();
  }
  // The genuine broadcast, sent after every forgery was refused, reaches every listener; the
  // forgeries never did: each node's deliveries are exactly the genuine one.
  json reply;
  std::string body;
  ASSERT_TRUE(victim_->Call({{"op", "broadcast"}}, std::string("genuine"), &reply, &body));
  const uint64_t genuine_id = reply["id"];
  const std::vector<Delivery> expected = {{"victim", genuine_id, "message", "genuine"}};
  for (Node* n : Nodes()) {
    ASSERT_TRUE(WaitFor([&] { return Relay(n, "delivered") >= 1; }, kWaitDeadline)) << n->name();
    EXPECT_EQ(Deliveries(n), expected) << n->name();
    EXPECT_EQ(Relay(n, "signatures_refused"), 3u) << n->name();
    EXPECT_EQ(Relay(n, "purges"), 0u) << n->name();
  }
}

// The value of `field = ` in a key file.
std::string KeyFileField(const std::string& path, const std::string& field) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + " = ", 0) == 0) return line.substr(field.size() + 3);
  }
  return "";
}

// Sign key rotation (docs/security.md, "Key rotation") without restarting the receivers: a
// SIGHUP gives their relay the new sign key, so the rotated node's broadcasts are delivered;
// and once the old key's line is gone, a broadcast signed with it is refused. Before, the
// relay kept the keys it started with: the first was refused and the second delivered.
TEST_F(AttackRelaySign, RotatedAndRevokedSignKeysApplyToBroadcastsAfterAReload) {
  const std::string old_key_file = cluster_.dir() + "/victim.key";
  const std::string old_public = victim_->public_key();
  std::string raw;
  ASSERT_TRUE(client::Z85Decode32(KeyFileField(old_key_file, "sign-secret-key"), &raw).ok());
  std::unique_ptr<OriginSigner> old_signer;
  ASSERT_TRUE(OriginSigner::Create(raw, &old_signer).ok());

  // A new key file for the victim, listed beside the old one; a and b reload.
  client::CurveKeyPair fresh;
  ASSERT_TRUE(client::GenerateCurveKeyPair(&fresh).ok());
  ASSERT_TRUE(client::GenerateSignKeys(&fresh).ok());
  const std::string new_key_file = cluster_.dir() + "/victim.key.new";
  ASSERT_TRUE(client::WriteKeyFile(new_key_file, fresh, false).ok());
  std::ofstream(cluster_.dir() + "/authorized_keys", std::ios::app)
      << fresh.public_key << " victim sign=" << fresh.sign_public_key << "\n";
  const std::vector<std::pair<Node*, std::string>> others = {
      {a_, R"(relay_links = ["victim", "b", "mallory"])"},
      {b_, R"(relay_links = ["victim", "a", "mallory"])"},
  };
  auto reload_others = [&] {
    for (const auto& entry : others) {
      Node* node = entry.first;  // not a structured binding: the lambda below captures it
      NodeOptions o;
      o.extra = entry.second + "\n";
      const uint64_t reloads = node->Stats()["reloads"];
      ASSERT_TRUE(node->Reload(o, {victim_}));
      ASSERT_TRUE(WaitFor([&] { return node->Stats()["reloads"] > reloads; }, kWaitDeadline))
          << node->log_tail();
    }
  };
  reload_others();

  // The victim restarts with its new keys; a and b keep running.
  ASSERT_TRUE(victim_->Stop());
  victim_->set_key_file(new_key_file);
  NodeOptions victim_options;
  victim_options.extra = R"(relay_links = ["a", "b", "mallory"])"
                         "\n";
  ASSERT_TRUE(victim_->Start(victim_options, {a_})) << victim_->log_tail();
  ASSERT_EQ(victim_->public_key(), fresh.public_key);
  ASSERT_TRUE(WaitFor([&] { return RelayLinksUp(); }, kWaitDeadline)) << a_->log_tail();
  json reply;
  std::string body;
  ASSERT_TRUE(victim_->Call({{"op", "broadcast"}}, std::string("rotated"), &reply, &body));
  const Delivery rotated{"victim", reply["id"], "message", "rotated"};
  for (Node* n : {a_, b_}) {
    EXPECT_TRUE(WaitFor(
        [&] {
          const std::vector<Delivery> got = Deliveries(n);
          return std::find(got.begin(), got.end(), rotated) != got.end();
        },
        kWaitDeadline))
        << n->name() << " refused " << Relay(n, "signatures_refused") << " signature(s)";
  }

  // While the old key is listed, a broadcast it signed is taken (mallory only relays it);
  // after its line is removed and a and b reload, one is refused.
  auto signed_by_old_key = [&](uint64_t id, const std::string& text) {
    RelayData d = Data("victim", id, '\0', text);
    EXPECT_TRUE(SignRelayData(*old_signer, ClusterTag(kClusterSecret), &d).ok());
    return d;
  };
  const uint64_t id = uint64_t{1} << 62;
  zmq::socket_t s = Client(a_);
  const uint64_t delivered = Relay(a_, "delivered");
  ASSERT_TRUE(SendAndCount(&s, a_, Frame("mallory", signed_by_old_key(id, "listed")), "relay",
                           "delivered", delivered));
  cluster_.RemoveKey(old_public);
  reload_others();
  const uint64_t refused = Relay(a_, "signatures_refused");
  EXPECT_TRUE(SendAndCount(&s, a_, Frame("mallory", signed_by_old_key(id + 1, "revoked")), "relay",
                           "signatures_refused", refused));
  const std::vector<Delivery> got = Deliveries(a_);
  EXPECT_EQ(std::count(got.begin(), got.end(), Delivery{"victim", id, "message", "listed"}), 1);
  EXPECT_EQ(std::count(got.begin(), got.end(), Delivery{"victim", id + 1, "message", "revoked"}),
            0);
}

// A purge whose URL is not UTF-8, signed by its own origin (mallory, a member): once, quoting
// the URL into the purge's JSON result ended the event loop of every node it reached, or the
// purge worker where the URL was held (no final snapshot). Now every node handles it: the
// node that holds the URL runs its purge command with the URL's bytes as they came, every
// node broadcasts a result, and all keep serving.
TEST_F(AttackRelaySign, APurgeWhoseUrlIsNotUtf8EndsNoNode) {
  const std::string hook = cluster_.dir() + "/record.sh";
  const std::string args = cluster_.dir() + "/a.args";
  std::ofstream(hook) << "#!/bin/sh\nprintf '%s' \"$3\" > \"$1.tmp\" && mv \"$1.tmp\" \"$1\"\n";
  ASSERT_EQ(::chmod(hook.c_str(), 0755), 0);
  // a restarts with a purge command: its state file, then the URL (appended last).
  ASSERT_TRUE(a_->Stop());
  NodeOptions o;
  o.extra = "relay_links = [\"victim\", \"b\", \"mallory\"]\npurge_command = [\"" + hook +
            "\", \"" + args + "\"]\n";
  ASSERT_TRUE(a_->Start(o, {victim_})) << a_->log_tail();
  const std::string url = std::string("http://bytes.example/caf\xe9-\xff\xfe");
  ASSERT_TRUE(a_->Add({url}));
  ASSERT_TRUE(WaitFor([&] { return RelayLinksUp(); }, kWaitDeadline)) << a_->log_tail();
  RelayData purge = Data("mallory", uint64_t{1} << 61, '\x01', url);
  ASSERT_TRUE(SignRelayData(*mallory_signer_, ClusterTag(kClusterSecret), &purge).ok());
  zmq::socket_t s = Client(victim_);
  s.send(zmq::buffer(Frame("mallory", purge)));
  // Each node delivers the purge and the three results (its own and the others').
  for (Node* n : Nodes()) {
    EXPECT_TRUE(WaitFor([&] { return Relay(n, "purges") == 1 && Relay(n, "delivered") >= 4; },
                        kWaitDeadline))
        << n->name() << " " << n->log_tail();
    EXPECT_EQ(Relay(n, "purge_errors"), 0u) << n->name();
    const auto who = n->WhoHas({"http://still.serving/"});
    EXPECT_EQ(who.size(), 1u) << n->name();
  }
  // The hook got the URL's bytes; its state file is written before the result goes out.
  std::ifstream recorded(args);
  std::string got((std::istreambuf_iterator<char>(recorded)), std::istreambuf_iterator<char>());
  EXPECT_EQ(got, url);
}

// A genuine signed purge, captured and replayed after the receiver restarts. Before, the seen
// set lived in memory only: the replay was delivered again and the purge command ran again.
// Now the seen messages are on disk (relay.seen) before a purge's action runs: after a
// SIGTERM restart and after a kill -9 restart, the replay is stale, the command ran once, and
// a new purge of the same origin is still delivered.
TEST_F(AttackRelaySign, APurgeReplayedAfterARestartRunsNoCommandAgain) {
  const std::string hook = cluster_.dir() + "/count.sh";
  const std::string runs = cluster_.dir() + "/runs";
  std::ofstream(hook) << "#!/bin/sh\nprintf '%s\\n' \"$3\" >> \"$1\"\n";
  ASSERT_EQ(::chmod(hook.c_str(), 0755), 0);
  NodeOptions o;
  o.extra = "relay_links = [\"victim\", \"b\", \"mallory\"]\npurge_command = [\"" + hook +
            "\", \"" + runs + "\"]\n";
  ASSERT_TRUE(a_->Stop());
  ASSERT_TRUE(a_->Start(o, {victim_})) << a_->log_tail();
  const std::string url = "http://replayed.example/object";
  ASSERT_TRUE(a_->Add({url}));
  auto purge_with_id = [&](uint64_t id) {
    RelayData purge = Data("mallory", id, '\x01', url);
    EXPECT_TRUE(SignRelayData(*mallory_signer_, ClusterTag(kClusterSecret), &purge).ok());
    return Frame("mallory", purge);
  };
  auto runs_so_far = [&] {
    std::ifstream in(runs);
    size_t n = 0;
    for (std::string line; std::getline(in, line);) n += line == url ? 1 : 0;
    return n;
  };
  const uint64_t id = uint64_t{1} << 60;
  const std::string captured = purge_with_id(id);
  {
    zmq::socket_t s = Client(a_);  // kept until the purge is in: it does not linger
    s.send(zmq::buffer(captured));
    ASSERT_TRUE(WaitFor([&] { return runs_so_far() == 1; }, kWaitDeadline)) << a_->log_tail();
  }

  for (const bool kill : {false, true}) {
    SCOPED_TRACE(kill ? "kill -9" : "SIGTERM");
    if (kill) {
      a_->Kill9();
    } else {
      ASSERT_TRUE(a_->Stop());
    }
    ASSERT_TRUE(a_->Start(o, {victim_})) << a_->log_tail();
    ASSERT_TRUE(WaitFor([&] { return Relay(a_, "links_up") == 2; }, kWaitDeadline));
    const uint64_t stale = Relay(a_, "stale");
    zmq::socket_t s = Client(a_);
    ASSERT_TRUE(SendAndCount(&s, a_, captured, "relay", "stale", stale)) << a_->log_tail();
    EXPECT_EQ(Relay(a_, "purges"), 0u);
  }
  // The command ran once; a new purge of the same origin is delivered and runs it again.
  zmq::socket_t s = Client(a_);
  s.send(zmq::buffer(purge_with_id(id + 1)));
  EXPECT_TRUE(WaitFor([&] { return runs_so_far() == 2; }, kWaitDeadline)) << a_->log_tail();
  EXPECT_EQ(Relay(a_, "purges"), 1u);
}

// Broadcasts within the rate limit, from the member's own origin, with payloads at the 64 KiB
// cap. Before, each was cached for 30 s at every node: 7,580 raised node-a's RSS by 1,373 MiB
// and a node limited to 3 GiB died of bad_alloc. Now the relay cache holds at most 8 MiB of
// one origin (64 MiB in all) and the listen buffer 64 MiB. 4,000 of them (250 MiB of
// payload) are delivered at every node, and each node's peak RSS grows by less than 192 MiB
// (the two bounds, the copies in flight and the allocator's slack).
TEST_F(AttackRelaySign, LargeBroadcastsWithinTheRateStayWithinTheMemoryBounds) {
  std::map<std::string, uint64_t> peak_before;
  for (Node* n : Nodes()) {
    peak_before[n->name()] = ProcStatusBytes(DaemonPid(cluster_.dir() + "/" + n->name()), "VmHWM");
  }
  constexpr int kMessages = 4000;
  const uint64_t delivered_before = Relay(a_, "delivered");
  zmq::socket_t s = Client(a_);
  s.set(zmq::sockopt::sndhwm, 0);
  const std::string body(64 * 1024 - 1, 'p');  // with its kind byte: the 64 KiB cap
  const uint64_t first = uint64_t{1} << 59;
  for (int i = 0; i < kMessages; ++i) {
    RelayData d = Data("mallory", first + i, '\0', body);
    ASSERT_TRUE(SignRelayData(*mallory_signer_, ClusterTag(kClusterSecret), &d).ok());
    s.send(zmq::buffer(Frame("mallory", d)));
    // 800 a second: under the origin's limit of 1,000, so none is throttled.
    if (i % 40 == 39) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (Node* n : Nodes()) {
    EXPECT_TRUE(WaitFor(
        [&] { return Relay(n, "delivered") >= (n == a_ ? delivered_before : 0) + kMessages; },
        std::chrono::seconds(120)))
        << n->name() << " delivered " << Relay(n, "delivered") << ", throttled "
        << Relay(n, "throttled");
  }
  for (Node* n : Nodes()) {
    const uint64_t peak = ProcStatusBytes(DaemonPid(cluster_.dir() + "/" + n->name()), "VmHWM");
    std::printf("%s: peak RSS %.1f -> %.1f MiB, cache_evicted %llu\n", n->name().c_str(),
                peak_before[n->name()] / 1048576.0, peak / 1048576.0,
                static_cast<unsigned long long>(Relay(n, "cache_evicted")));
    EXPECT_LT(peak, peak_before[n->name()] + (uint64_t{192} << 20)) << n->name();
    EXPECT_GT(Relay(n, "cache_evicted"), 0u) << n->name();
  }
}

// Before, with require_signatures off by default, broadcasts of origins without a sign= key,
// invented names included, were taken unsigned: 30 invented origins delivered 30,000
// broadcasts at a node in under a second, each with a rate budget of its own. Signatures are
// now required by default: every one is refused and counted, none delivered, and the node's
// own broadcasts still go out.
TEST_F(AttackRelaySign, BroadcastsOfInventedOriginsAreRefusedByDefault) {
  const uint64_t refused = Relay(a_, "signatures_refused");
  const uint64_t delivered = Relay(a_, "delivered");
  zmq::socket_t s = Client(a_);
  constexpr int kOrigins = 30;
  constexpr int kEach = 20;
  for (int o = 0; o < kOrigins; ++o) {
    for (int i = 0; i < kEach; ++i) {
      const RelayData d =
          Data("invented-" + std::to_string(o),
               uint64_t{1} << 58 | static_cast<uint64_t>(o * kEach + i), '\0', "flood");
      s.send(zmq::buffer(Frame("mallory", d)));
    }
  }
  EXPECT_TRUE(WaitFor([&] { return Relay(a_, "signatures_refused") >= refused + kOrigins * kEach; },
                      kWaitDeadline))
      << Relay(a_, "signatures_refused") - refused;
  EXPECT_EQ(Relay(a_, "delivered"), delivered);
  json reply;
  std::string body;
  ASSERT_TRUE(a_->Call({{"op", "broadcast"}}, "own", &reply, &body)) << reply.dump();
  EXPECT_TRUE(
      WaitFor([&] { return Relay(b_, "delivered") >= 1 && Relay(victim_, "delivered") >= 1; },
              kWaitDeadline));
}

// One member's purges of a URL a node holds, against a purge command that takes a second.
// Before, the purge worker had one queue: 1,200 such purges left 1,022 pending, the
// operator's own purge not done after 15 s and a cluster purge's result not back after 16 s
// (a 17-minute backlog). Now each origin has a queue of its own (64 jobs; more are refused)
// and the queues take turns, the operator's first: the operator's purge and another origin's
// cluster purge each wait for the job under way and at most a job of each other queue. The
// answers to the flood (refusals above all) take at most a quarter of a's broadcast rate, so
// a's answer to the victim's purge is not throttled behind them.
TEST_F(AttackRelaySign, OneMembersPurgeFloodDelaysNoOtherPurge) {
  const std::string hook = cluster_.dir() + "/slow.sh";
  const std::string runs = cluster_.dir() + "/slow.runs";
  std::ofstream(hook) << "#!/bin/sh\nsleep 1\nprintf '%s\\n' \"$3\" >> \"$1\"\n";
  ASSERT_EQ(::chmod(hook.c_str(), 0755), 0);
  ASSERT_TRUE(a_->Stop());
  NodeOptions o;
  o.extra = "relay_links = [\"victim\", \"b\", \"mallory\"]\npurge_command = [\"" + hook +
            "\", \"" + runs + "\"]\n";
  ASSERT_TRUE(a_->Start(o, {victim_})) << a_->log_tail();
  const std::string flooded = "http://flooded.example/object";
  const std::string own = "http://operator.example/object";
  const std::string clustered = "http://victim.example/object";
  ASSERT_TRUE(a_->Add({flooded, own, clustered}));
  ASSERT_TRUE(WaitFor([&] { return RelayLinksUp(); }, kWaitDeadline)) << a_->log_tail();

  constexpr int kPurges = 1200;
  zmq::socket_t s = Client(a_);
  s.set(zmq::sockopt::sndhwm, 0);
  const uint64_t first = uint64_t{1} << 57;
  for (int i = 0; i < kPurges; ++i) {
    RelayData purge = Data("mallory", first + i, '\x01', flooded);
    ASSERT_TRUE(SignRelayData(*mallory_signer_, ClusterTag(kClusterSecret), &purge).ok());
    s.send(zmq::buffer(Frame("mallory", purge)));
    // 800 a second: under the origin's limit of 1,000, so each one is delivered.
    if (i % 40 == 39) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // Every purge delivered is accounted for: its command ran, it is queued or running, or it
  // was refused (a purge waits for relay.seen's next save before it is handed on).
  auto runs_of = [&](const std::string& url) {
    std::ifstream in(runs);
    size_t n = 0;
    for (std::string line; std::getline(in, line);) n += line == url ? 1 : 0;
    return n;
  };
  uint64_t pending = 0, refused = 0, ran = 0;
  ASSERT_TRUE(WaitFor(
      [&] {
        ran = runs_of(flooded);
        pending = Relay(a_, "purge_actions_pending");
        refused = Relay(a_, "purge_actions_refused");
        return ran + pending + refused == kPurges;
      },
      kWaitDeadline))
      << Relay(a_, "purges") << " delivered, " << ran << " ran, " << pending << " pending, "
      << refused << " refused";
  EXPECT_LE(pending, 65u);  // the job under way and one full queue
  EXPECT_GE(refused + ran, kPurges - 65u);

  using Clock = std::chrono::steady_clock;
  // The operator's own purge at a, and a cluster purge from the victim that a must answer.
  json reply;
  std::string body;
  const Clock::time_point start = Clock::now();
  ASSERT_TRUE(a_->Call({{"op", "purge"}, {"url", own}}, "", &reply, &body)) << reply.dump();
  ASSERT_TRUE(reply.contains("job")) << reply.dump();
  const uint64_t job = reply["job"];
  ASSERT_TRUE(
      victim_->Call({{"op", "purge"}, {"url", clustered}, {"cluster", true}}, "", &reply, &body))
      << reply.dump();
  const uint64_t cluster_id = reply["id"];
  double own_s = -1, cluster_s = -1;
  const bool done = WaitFor(
      [&] {
        if (own_s < 0) {
          json r;
          std::string b;
          if (a_->Call({{"op", "purge"}, {"job", job}}, "", &r, &b) && r.value("done", false)) {
            EXPECT_EQ(r["result"]["purged"], true) << r.dump();
            own_s = std::chrono::duration<double>(Clock::now() - start).count();
          }
        }
        if (cluster_s < 0) {
          for (const Delivery& d : Deliveries(victim_)) {
            if (d.kind != "purge-result") continue;
            const json result = json::parse(d.body, nullptr, false);
            if (result.is_object() && result.value("node", "") == "a" &&
                result.value("purge_id", uint64_t{0}) == cluster_id) {
              EXPECT_EQ(result["purged"], true) << d.body;
              cluster_s = std::chrono::duration<double>(Clock::now() - start).count();
            }
          }
        }
        return own_s >= 0 && cluster_s >= 0;
      },
      kWaitDeadline);
  std::printf(
      "flood of %d purges: %llu ran, %llu pending, %llu refused, %llu results not broadcast; "
      "operator's purge done after %.1f s, a's answer to the cluster purge after %.1f s\n",
      kPurges, static_cast<unsigned long long>(ran), static_cast<unsigned long long>(pending),
      static_cast<unsigned long long>(refused),
      static_cast<unsigned long long>(Relay(a_, "purge_results_dropped")), own_s, cluster_s);
  EXPECT_TRUE(done) << "operator " << own_s << " s, cluster " << cluster_s << " s";
}

// Before, the rate meter's counters were picked by a key derived from cluster_secret, which
// every member knows: a member could pick origin names whose counters cover those of node-b
// and, flooding them just under the limit, block node-b's own broadcasts and purges ("rate of
// this node exceeded") while node-b takes unsigned broadcasts (require_signatures = false).
// The meter is now keyed at random per node: the same aimed names share b's counters only by
// chance (about (9 / 4096)^3 for three names of three counters each, below 1e-7).
TEST_F(AttackRelaySign, OriginNamesAimedAtANodesRateCountersBlockNothing) {
  ASSERT_TRUE(b_->Stop());
  NodeOptions o;
  o.extra = "relay_links = [\"victim\", \"a\", \"mallory\"]\nrequire_signatures = false\n";
  ASSERT_TRUE(b_->Start(o, {victim_})) << b_->log_tail();
  ASSERT_TRUE(WaitFor([&] { return RelayLinksUp(); }, kWaitDeadline)) << b_->log_tail();

  // The counters "b" has under the cluster's key (RelayOptions defaults: 3 of 4,096), and one
  // name found for each that shares it.
  const IndexHasher cluster_hasher(DeriveIndexKey(kClusterSecret));
  auto counters = [&](const std::string& origin) {
    const KeyHash h = cluster_hasher.Hash(origin);
    std::vector<uint64_t> out;
    uint64_t g = h.h1;
    for (int i = 0; i < 3; ++i, g += h.h2 | 1) out.push_back(g & 4095);
    return out;
  };
  std::vector<std::string> aimed;
  uint64_t candidate = 0;
  for (const uint64_t target : counters("b")) {
    for (;; ++candidate) {
      const std::string name = "aim-" + std::to_string(candidate);
      const std::vector<uint64_t> c = counters(name);
      if (std::find(c.begin(), c.end(), target) != c.end()) {
        aimed.push_back(name);
        ++candidate;
        break;
      }
    }
  }
  ASSERT_EQ(aimed.size(), 3u);

  // Each aimed name at 1,100 a second for two seconds (past its own limit of 1,000, so its
  // counters stay at the limit), and b broadcasts while they do.
  zmq::socket_t s = Client(b_);
  s.set(zmq::sockopt::sndhwm, 0);
  uint64_t id = uint64_t{1} << 56;
  std::vector<uint64_t> own_ids;
  for (int slice = 0; slice < 40; ++slice) {
    for (int i = 0; i < 55; ++i) {
      for (const std::string& name : aimed)
        s.send(zmq::buffer(Frame("mallory", Data(name, ++id, '\0', "aimed"))));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (slice >= 20 && slice % 5 == 0) {
      json reply;
      std::string body;
      ASSERT_TRUE(b_->Call({{"op", "broadcast"}}, "own", &reply, &body)) << reply.dump();
      ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
      own_ids.push_back(reply["id"]);
    }
  }
  EXPECT_GT(Relay(b_, "throttled"), 0u);  // the aimed names themselves met the limit
  for (Node* n : {victim_, a_}) {
    EXPECT_TRUE(WaitFor(
        [&] {
          size_t got = 0;
          for (const Delivery& d : Deliveries(n)) {
            got +=
                d.origin == "b" && std::find(own_ids.begin(), own_ids.end(), d.id) != own_ids.end();
          }
          return got == own_ids.size();
        },
        kWaitDeadline))
        << n->name();
  }
  std::printf("aimed names %s %s %s: b throttled %llu of theirs, b's %zu broadcasts delivered\n",
              aimed[0].c_str(), aimed[1].c_str(), aimed[2].c_str(),
              static_cast<unsigned long long>(Relay(b_, "throttled")), own_ids.size());
}

// 50 IHAVE packets announcing 4,096 invented messages each once made a node await all 204,800
// and send 2,048,000 GRAFTs back. The messages a node awaits are now bounded (a quarter of
// them per link): the rest are dropped and counted, GRAFTs stay within attempts x bound, and
// a broadcast of another origin is still delivered everywhere.
TEST_F(AttackRelaySign, AnnouncementsOfInventedMessagesAreBoundedAtEveryNode) {
  zmq::socket_t s = Client(a_);
  s.set(zmq::sockopt::sndhwm, 0);
  constexpr int kPackets = 50;
  constexpr int kRefs = 4096;
  const uint64_t grafts_before = Relay(a_, "grafts_sent");
  uint64_t id = uint64_t{1} << 55;
  for (int packet = 0; packet < kPackets; ++packet) {
    RelayPacket ihave;
    ihave.kind = RelayKind::kIHave;
    for (int r = 0; r < kRefs; ++r) ihave.refs.push_back({"ghost", ++id, 1});
    s.send(zmq::buffer(Frame("mallory", ihave)));
  }
  // Each announcement is awaited or dropped; the awaited ones are at most max_missing (4,096).
  const uint64_t announced = uint64_t{kPackets} * kRefs;
  EXPECT_TRUE(
      WaitFor([&] { return Relay(a_, "ihave_dropped") >= announced - 4096; }, kWaitDeadline))
      << Relay(a_, "ihave_dropped");
  json reply;
  std::string body;
  ASSERT_TRUE(victim_->Call({{"op", "broadcast"}}, "after", &reply, &body)) << reply.dump();
  const Delivery after{"victim", reply["id"], "message", "after"};
  for (Node* n : {a_, b_}) {
    EXPECT_TRUE(WaitFor(
        [&] {
          const std::vector<Delivery> got = Deliveries(n);
          return std::find(got.begin(), got.end(), after) != got.end();
        },
        kWaitDeadline))
        << n->name();
  }
  const uint64_t grafts = Relay(a_, "grafts_sent") - grafts_before;
  std::printf("%llu invented announcements: %llu dropped, %llu GRAFTs sent\n",
              static_cast<unsigned long long>(announced),
              static_cast<unsigned long long>(Relay(a_, "ihave_dropped")),
              static_cast<unsigned long long>(grafts));
  EXPECT_LE(grafts, uint64_t{10} * 4096);  // max_graft_attempts x max_missing
}

}  // namespace
}  // namespace peerbloom::testing
