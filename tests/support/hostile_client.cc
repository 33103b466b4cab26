#include "tests/support/hostile_client.h"

#include <utility>

namespace peerbloom::testing {

void HostileClient::SetKeys(std::string public_key, std::string secret_key) {
  public_key_ = std::move(public_key);
  secret_key_ = std::move(secret_key);
}

zmq::socket_t HostileClient::Connect(Node* target) {
  return Connect(target, public_key_, secret_key_);
}

zmq::socket_t HostileClient::Connect(Node* target, const std::string& public_key,
                                     const std::string& secret_key) {
  zmq::socket_t s(context_, zmq::socket_type::dealer);
  s.set(zmq::sockopt::linger, 0);
  s.set(zmq::sockopt::sndhwm, 100000);
  s.set(zmq::sockopt::sndtimeo, 10000);
  s.set(zmq::sockopt::curve_serverkey, target->public_key());
  s.set(zmq::sockopt::curve_publickey, public_key);
  s.set(zmq::sockopt::curve_secretkey, secret_key);
  s.connect(target->endpoint());
  return s;
}

zmq::socket_t HostileClient::ConnectPlaintext(Node* target) {
  zmq::socket_t s(context_, zmq::socket_type::dealer);
  s.set(zmq::sockopt::linger, 0);
  s.connect(target->endpoint());
  return s;
}

WireHeader HostileClient::NextHeader(WireType type) { return NextHeaderAs(sender_id_, type); }

WireHeader HostileClient::NextHeaderAs(const std::string& sender, WireType type) {
  return PeerHeader(type, sender, 1, ++heartbeat_);
}

WireHeader PeerHeader(WireType type, const std::string& sender, uint64_t epoch,
                      uint64_t heartbeat) {
  WireHeader h;
  h.type = type;
  h.cluster_tag = ClusterTag(kClusterSecret);
  h.sender_id = sender;
  h.sender_epoch = epoch;
  h.sender_heartbeat = heartbeat;
  return h;
}

bool SendAndCount(zmq::socket_t* link, Node* target, const std::string& frame, const char* group,
                  const char* name, uint64_t before) {
  link->send(zmq::buffer(frame));
  return WaitFor([&] { return StatsCounter(target, group, name) > before; }, kWaitDeadline);
}

}  // namespace peerbloom::testing
