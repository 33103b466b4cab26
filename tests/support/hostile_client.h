// A hostile member of a test cluster: a CURVE client holding a key pair the cluster
// authorizes (Cluster::AuthorizeExtraKey, AuthorizeExtraSigningKey), that sends frames of its
// own making to the daemons' peer endpoints. The attack tests build the frames; this class
// owns the links and the sender's heartbeat, so every header it makes is news to a daemon.
// Not thread-safe: one test thread drives it.
#ifndef PEERBLOOM_TESTS_SUPPORT_HOSTILE_CLIENT_H_
#define PEERBLOOM_TESTS_SUPPORT_HOSTILE_CLIENT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <zmq.hpp>

#include "peerbloom/wire.h"
#include "tests/support/cluster_harness.h"

namespace peerbloom::testing {

class HostileClient {
 public:
  // `sender_id`: the node id its headers name.
  explicit HostileClient(std::string sender_id) : sender_id_(std::move(sender_id)) {}
  HostileClient(const HostileClient&) = delete;
  HostileClient& operator=(const HostileClient&) = delete;

  // The key pair its links present (Z85). REQUIRES: set before Connect.
  void SetKeys(std::string public_key, std::string secret_key);

  // A DEALER connected to `target`'s peer endpoint with its key pair (or the one given):
  // linger 0, a high-water mark of 100000 frames, and sends that give up after 10 s, so that
  // a link the daemon refused (it has no pipe) never blocks the test for long.
  zmq::socket_t Connect(Node* target);
  zmq::socket_t Connect(Node* target, const std::string& public_key, const std::string& secret_key);
  // A DEALER connected to `target` without CURVE (a plaintext client).
  zmq::socket_t ConnectPlaintext(Node* target);

  // The header of its next frame: the harness's cluster tag, its sender id, epoch 1 and the
  // next heartbeat.
  WireHeader NextHeader(WireType type = WireType::kDigest);
  // The same naming another sender (a frame that claims to come from someone else).
  WireHeader NextHeaderAs(const std::string& sender, WireType type = WireType::kDigest);

  const std::string& sender_id() const { return sender_id_; }

 private:
  std::string sender_id_;
  std::string public_key_, secret_key_;
  uint64_t heartbeat_ = 0;
  zmq::context_t context_{1};
};

// A header as `sender` with these values and the harness's cluster tag.
WireHeader PeerHeader(WireType type, const std::string& sender, uint64_t epoch, uint64_t heartbeat);

// Sends `frame` on `link` and waits (kWaitDeadline) until `target`'s stats counter
// group.name passes `before`: the daemon has handled the frame.
bool SendAndCount(zmq::socket_t* link, Node* target, const std::string& frame, const char* group,
                  const char* name, uint64_t before);

}  // namespace peerbloom::testing

#endif  // PEERBLOOM_TESTS_SUPPORT_HOSTILE_CLIENT_H_
