// The peer transport over real ZeroMQ sockets on 127.0.0.1, with CURVE, in one process.
#include "daemon/transport/transport.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>
#include <zmq.hpp>

#include "tests/support/wait.h"

namespace peerbloom::daemon {
namespace {

struct Node {
  zmq::context_t context;
  client::CurveKeyPair keys;
  std::unique_ptr<Transport> transport;
  std::string bound;
};

// Two transports, each admitting the other's key.
void StartPair(Node* a, Node* b) {
  ASSERT_TRUE(client::GenerateCurveKeyPair(&a->keys).ok());
  ASSERT_TRUE(client::GenerateCurveKeyPair(&b->keys).ok());
  for (auto [self, other, id] : {std::tuple{a, b, "node-b"}, std::tuple{b, a, "node-a"}}) {
    TransportOptions o;
    o.listen = "tcp://127.0.0.1:0";
    o.keys = self->keys;
    o.authorized = {{other->keys.public_key, id}};
    self->transport = std::make_unique<Transport>(&self->context, o);
    ASSERT_TRUE(self->transport->Start(&self->bound).ok());
  }
}

// Serves both transports until `done` or the deadline.
bool PumpUntil(Node* a, Node* b, std::vector<std::string>* received,
               const std::function<bool()>& done) {
  const Transport::Handler keep = [&](std::string_view payload, const std::string& from) {
    received->push_back(from + ":" + std::string(payload));
    return Status::Ok();
  };
  const Transport::Handler ignore = [](std::string_view, const std::string&) {
    return Status::Ok();
  };
  return testing::WaitFor(
      [&] {
        std::vector<zmq::pollitem_t> items;
        a->transport->AppendPollItems(&items);
        b->transport->AppendPollItems(&items);
        zmq::poll(items.data(), items.size(), std::chrono::milliseconds(10));
        a->transport->Process(items.data(), 0, ignore);
        b->transport->Process(items.data() + 3, 0, keep);
        return done();
      },
      testing::kWaitDeadline, std::chrono::milliseconds(0));
}

// The engine closes a link in the same turn as it queues a last frame on it (the UNLINK to a
// member no longer linked, three rounds running). That frame is delivered, and the far side
// sees no failed handshake: each close here follows a send on a link not yet connected, the
// case a close without linger lost every time.
TEST(Transport, AFrameQueuedBeforeACloseIsDelivered) {
  Node a, b;
  StartPair(&a, &b);
  constexpr int kFrames = 10;
  std::vector<std::string> received;
  for (int i = 0; i < kFrames; ++i) {
    a.transport->Send(Outgoing{b.bound, b.keys.public_key, "frame " + std::to_string(i)}, 0);
    a.transport->Close(b.bound);
    EXPECT_EQ(a.transport->stats().links_open, 0u);
    ASSERT_TRUE(PumpUntil(&a, &b, &received, [&] { return received.size() == size_t(i) + 1; }))
        << "frame " << i << " was lost with its link";
    EXPECT_EQ(received.back(), "node-a:frame " + std::to_string(i));
  }
  EXPECT_EQ(b.transport->stats().handshakes_failed, 0u);
  EXPECT_EQ(b.transport->stats().messages_in, uint64_t{kFrames});
}

}  // namespace
}  // namespace peerbloom::daemon
