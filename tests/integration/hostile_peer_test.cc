// What a daemon does with bytes it should not accept on its peer endpoint: each is refused,
// counted in stats, and the daemon keeps answering.
#include <gtest/gtest.h>

#include "tests/support/cluster_harness.h"
#include "tests/support/hostile_client.h"

namespace peerbloom::testing {
namespace {

class HostilePeer : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = cluster_.AddNode("target");
    std::string public_key, secret_key;
    cluster_.AuthorizeExtraKey(&public_key, &secret_key);
    client_.SetKeys(public_key, secret_key);
    options_.max_message_bytes = 64 * 1024;
    options_.key_scheme = "squid-md5";
    ASSERT_TRUE(node_->Start(options_, {})) << node_->log_tail();
  }

  uint64_t Counter(const char* group, const char* name) { return StatsCounter(node_, group, name); }

  bool StillServes() {
    json reply;
    std::string body;
    return node_->Call({{"op", "who-has"}}, "http://example.com/x\n", &reply, &body) &&
           reply["count"] == 1;
  }

  Cluster cluster_;
  NodeOptions options_;
  Node* node_ = nullptr;
  HostileClient client_{"test-client"};
};

TEST_F(HostilePeer, MalformedFrameIsRefusedByGossipAndCounted) {
  zmq::socket_t s = client_.Connect(node_);
  const uint64_t before = Counter("transport", "refused_by_gossip");
  s.send(zmq::str_buffer("this is not a peerbloom frame"));
  EXPECT_TRUE(WaitFor([&] { return Counter("transport", "refused_by_gossip") == before + 1; },
                      kWaitDeadline));
  EXPECT_GE(Counter("gossip", "malformed_in"), 1u);
  EXPECT_TRUE(StillServes());
}

TEST_F(HostilePeer, MultiFrameMessageIsDrainedAndCounted) {
  zmq::socket_t s = client_.Connect(node_);
  s.send(zmq::str_buffer("one"), zmq::send_flags::sndmore);
  s.send(zmq::str_buffer("two"), zmq::send_flags::sndmore);
  s.send(zmq::str_buffer("three"));
  EXPECT_TRUE(WaitFor([&] { return Counter("transport", "refused_frames") == 1; }, kWaitDeadline));
  // The next message starts at a boundary again: it reaches the gossip engine whole.
  s.send(zmq::str_buffer("garbage after the drain"));
  EXPECT_TRUE(
      WaitFor([&] { return Counter("transport", "refused_by_gossip") == 1; }, kWaitDeadline));
  EXPECT_EQ(Counter("transport", "refused_frames"), 1u);
  EXPECT_TRUE(StillServes());
}

TEST_F(HostilePeer, OversizedFrameClosesTheLinkAndIsNeverDelivered) {
  zmq::socket_t s = client_.Connect(node_);
  s.send(zmq::str_buffer("small first"));
  ASSERT_TRUE(
      WaitFor([&] { return Counter("transport", "refused_by_gossip") == 1; }, kWaitDeadline));
  const uint64_t disconnects = Counter("transport", "links_disconnected");
  const std::string big(static_cast<size_t>(options_.max_message_bytes) + 1, 'x');
  s.send(zmq::buffer(big));
  EXPECT_TRUE(WaitFor([&] { return Counter("transport", "links_disconnected") > disconnects; },
                      kWaitDeadline));
  EXPECT_EQ(Counter("transport", "messages_in"), 1u) << "the oversized frame was delivered";
  EXPECT_TRUE(StillServes());
}

TEST_F(HostilePeer, UnauthorizedCurveKeyIsDeniedAndCounted) {
  char pub[41] = {};
  char sec[41] = {};
  ASSERT_EQ(zmq_curve_keypair(pub, sec), 0);
  zmq::socket_t s = client_.Connect(node_, pub, sec);
  s.send(zmq::str_buffer("knock knock"), zmq::send_flags::dontwait);
  EXPECT_TRUE(WaitFor([&] { return Counter("transport", "zap_denied") >= 1; }, kWaitDeadline));
  EXPECT_EQ(Counter("transport", "messages_in"), 0u);
  EXPECT_TRUE(StillServes());
}

TEST_F(HostilePeer, PlaintextClientCannotTalkToACurveServer) {
  zmq::socket_t s = client_.ConnectPlaintext(node_);
  s.send(zmq::str_buffer("plaintext"), zmq::send_flags::dontwait);
  EXPECT_TRUE(
      WaitFor([&] { return Counter("transport", "handshakes_failed") >= 1; }, kWaitDeadline));
  EXPECT_EQ(Counter("transport", "messages_in"), 0u);
  EXPECT_TRUE(StillServes());
}

TEST_F(HostilePeer, MalformedControlRequestsGetErrorsNotSilence) {
  json reply;
  std::string body, error;
  EXPECT_FALSE(node_->Call({{"no-op", 1}}, "", &reply, &body, &error));
  EXPECT_EQ(error, "request header must be a JSON object with an 'op'");
  EXPECT_FALSE(node_->Call({{"op", "who-has"}, {"input", "bytes"}}, "x\n", &reply, &body, &error));
  EXPECT_EQ(error, "'input' must be 'url' or 'key', got 'bytes'");
  EXPECT_TRUE(node_->Call({{"op", "add"}, {"input", "key"}}, "not-hex\n", &reply, &body));
  EXPECT_EQ(reply["invalid"], 1);
  EXPECT_EQ(reply["first_error"], "line 1: key 'not-hex' is not 32 hex digits");
  EXPECT_TRUE(StillServes());
}

}  // namespace
}  // namespace peerbloom::testing
