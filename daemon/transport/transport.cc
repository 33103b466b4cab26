// Peer sockets. Everything read here comes from outside: frames are counted before use and
// every refusal is counted and logged at a limited rate; nothing a peer sends stops the loop.
#include "daemon/transport/transport.h"

#include <spdlog/spdlog.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstdlib>
#include <cstring>

namespace peerbloom::daemon {
namespace {

constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";
constexpr const char* kMonitorEndpoint = "inproc://peerbloom.peer-monitor";
constexpr int kMessagesPerWakeup = 512;
constexpr int kMonitorEvents = ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_CLOSED |
                               ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                               ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                               ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;

// The local TCP port of a socket, 0 when `fd` is not a bound IPv4/IPv6 socket.
int LocalPort(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return 0;
  if (address.ss_family == AF_INET) {
    return ntohs(reinterpret_cast<const sockaddr_in*>(&address)->sin_port);
  }
  if (address.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&address)->sin6_port);
  }
  return 0;
}

// The port of a bound "tcp://host:port" endpoint, 0 for any other transport.
int EndpointPort(const std::string& endpoint) {
  if (endpoint.rfind("tcp://", 0) != 0) return 0;
  const size_t colon = endpoint.rfind(':');
  if (colon == std::string::npos || colon + 1 >= endpoint.size()) return 0;
  return std::atoi(endpoint.c_str() + colon + 1);
}

std::string Z85(const void* bytes32) {
  char text[41] = {};
  zmq_z85_encode(text, static_cast<const uint8_t*>(bytes32), 32);
  return text;
}

// Reads the rest of a multipart message so the next recv starts at a message boundary.
void Drain(zmq::socket_t& socket) {
  while (socket.get(zmq::sockopt::rcvmore)) {
    zmq::message_t part;
    if (!socket.recv(part, zmq::recv_flags::dontwait)) return;
  }
}

void SetCommon(zmq::socket_t& s, const TransportOptions& o) {
  s.set(zmq::sockopt::linger, 0);
  s.set(zmq::sockopt::maxmsgsize, o.max_message_bytes);
  if (o.heartbeat_interval_ms > 0) {
    s.set(zmq::sockopt::heartbeat_ivl, o.heartbeat_interval_ms);
    s.set(zmq::sockopt::heartbeat_timeout, o.heartbeat_timeout_ms);
    s.set(zmq::sockopt::heartbeat_ttl, o.heartbeat_timeout_ms);
  }
}

}  // namespace

Transport::Transport(zmq::context_t* context, TransportOptions options)
    : context_(context),
      options_(std::move(options)),
      router_(*context_, zmq::socket_type::router),
      monitor_(*context_, zmq::socket_type::pair) {}

Status Transport::Start(std::string* bound) {
  try {
    if (options_.curve) {
      // Without a ZAP handler libzmq admits any client key: bind the handler first.
      zap_ = zmq::socket_t(*context_, zmq::socket_type::rep);
      zap_.set(zmq::sockopt::linger, 0);
      zap_.bind(kZapEndpoint);
      router_.set(zmq::sockopt::zap_domain, "peerbloom");
      router_.set(zmq::sockopt::curve_server, 1);
      router_.set(zmq::sockopt::curve_secretkey, options_.keys.secret_key);
    }
    SetCommon(router_, options_);
    router_.set(zmq::sockopt::rcvhwm, 10000);
    if (zmq_socket_monitor(router_.handle(), kMonitorEndpoint, kMonitorEvents) != 0) {
      return Status::IOError("cannot monitor the peer socket: " +
                             std::string(zmq_strerror(zmq_errno())));
    }
    monitor_.connect(kMonitorEndpoint);
    router_.bind(options_.listen);
    *bound = router_.get(zmq::sockopt::last_endpoint);
    listen_port_ = EndpointPort(*bound);
  } catch (const zmq::error_t& e) {
    return Status::IOError("cannot bind peer endpoint '" + options_.listen + "': " + e.what());
  }
  return Status::Ok();
}

void Transport::AppendPollItems(std::vector<zmq::pollitem_t>* items) {
  items->push_back({router_.handle(), 0, ZMQ_POLLIN, 0});
  items->push_back({monitor_.handle(), 0, ZMQ_POLLIN, 0});
  items->push_back({zap_ ? zap_.handle() : nullptr, -1, zap_ ? short{ZMQ_POLLIN} : short{0}, 0});
}

void Transport::Process(const zmq::pollitem_t* items, int64_t now_ms, const Handler& handler) {
  try {
    if (items[2].revents & ZMQ_POLLIN) ServeZap(now_ms);
    if (items[0].revents & ZMQ_POLLIN) ReceivePeerMessages(now_ms, handler);
    if (items[1].revents & ZMQ_POLLIN) ReadMonitor();
  } catch (const zmq::error_t& e) {
    if (e.num() != EINTR && e.num() != ETERM) {
      spdlog::error("peer transport: {}", e.what());
    }
  }
}

void Transport::ReceivePeerMessages(int64_t now_ms, const Handler& handler) {
  for (int i = 0; i < kMessagesPerWakeup; ++i) {
    if (!ReceiveOne(now_ms, handler)) return;
  }
}

bool Transport::ReceiveOne(int64_t now_ms, const Handler& handler) {
  zmq::message_t identity;
  if (!router_.recv(identity, zmq::recv_flags::dontwait)) return false;
  zmq::message_t payload;
  if (!router_.get(zmq::sockopt::rcvmore) || !router_.recv(payload, zmq::recv_flags::dontwait) ||
      router_.get(zmq::sockopt::rcvmore)) {
    Drain(router_);
    ++stats_.refused_frames;
    Refused(now_ms, "a message of more or less than one frame");
    return true;
  }
  ++stats_.messages_in;
  stats_.bytes_in += payload.size();
  std::string link_node;
  if (options_.curve) {
    // The ZAP handler made the client's key the link's user id; the key is looked up in the
    // allow-list in force now, so a reload that drops it stops the link at once.
    const char* user = payload.gets("User-Id");
    auto it = user == nullptr ? options_.authorized.end() : options_.authorized.find(user);
    if (it == options_.authorized.end()) {
      ++stats_.frames_revoked;
      Refused(now_ms, std::string("a frame on the link of key '") + (user ? user : "?") +
                          "', no longer authorized");
      return true;
    }
    link_node = it->second;
  }
  Status s = handler(payload.to_string_view(), link_node);
  if (!s.ok()) {
    ++stats_.refused_by_gossip;
    Refused(now_ms, "a gossip message: " + s.ToString());
  }
  return true;
}

void Transport::Refused(int64_t now_ms, const std::string& why) {
  uint64_t suppressed = 0;
  if (!refused_log_.Allow(now_ms, &suppressed)) return;
  if (suppressed > 0) {
    spdlog::warn("refused {} ({} similar lines suppressed)", why, suppressed);
  } else {
    spdlog::warn("refused {}", why);
  }
}

void Transport::ServeZap(int64_t now_ms) {
  std::vector<zmq::message_t> frames;
  do {
    zmq::message_t part;
    if (!zap_.recv(part, zmq::recv_flags::dontwait)) break;
    if (frames.size() < 8) frames.push_back(std::move(part));
  } while (zap_.get(zmq::sockopt::rcvmore));
  if (frames.size() < 2) return;  // REP needs a request id to answer; libzmq never sends less
  bool allowed = false;
  std::string who = "?";
  // 1.0, request id, domain, address, routing id, mechanism, client key.
  if (frames.size() >= 7 && frames[5].to_string_view() == "CURVE" && frames[6].size() == 32) {
    who = Z85(frames[6].data());
    allowed = options_.authorized.count(who) > 0;
  }
  if (allowed) {
    ++stats_.zap_allowed;
  } else {
    ++stats_.zap_denied;
    uint64_t suppressed = 0;
    if (refused_log_.Allow(now_ms, &suppressed)) {
      spdlog::warn("refused peer link from {} with unauthorized key '{}'",
                   frames.size() > 3 ? frames[3].to_string() : "?", who);
    }
  }
  zap_.send(zmq::str_buffer("1.0"), zmq::send_flags::sndmore);
  zap_.send(frames[1], zmq::send_flags::sndmore);
  zap_.send(allowed ? zmq::str_buffer("200") : zmq::str_buffer("400"), zmq::send_flags::sndmore);
  zap_.send(allowed ? zmq::str_buffer("OK") : zmq::str_buffer("unauthorized key"),
            zmq::send_flags::sndmore);
  zap_.send(zmq::buffer(allowed ? who : std::string()), zmq::send_flags::sndmore);
  zap_.send(zmq::message_t(), zmq::send_flags::none);
}

void Transport::ReadMonitor() {
  for (int i = 0; i < kMessagesPerWakeup; ++i) {
    zmq::message_t event;
    if (!monitor_.recv(event, zmq::recv_flags::dontwait)) return;
    const bool well_formed = event.size() >= 6;
    uint16_t id = 0;
    uint32_t value = 0;
    if (well_formed) {
      std::memcpy(&id, event.data(), sizeof(id));
      std::memcpy(&value, static_cast<const char*>(event.data()) + sizeof(id), sizeof(value));
    }
    Drain(monitor_);
    // For these three events the value is the connection's file descriptor.
    const int fd = static_cast<int>(value);
    if (id == ZMQ_EVENT_ACCEPTED) {
      ++stats_.links_accepted;
      inbound_fds_.insert(fd);
    }
    if (id == ZMQ_EVENT_DISCONNECTED) {
      ++stats_.links_disconnected;
      inbound_fds_.erase(fd);
    }
    if (id == ZMQ_EVENT_CLOSED) inbound_fds_.erase(fd);
    if (id == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL || id == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL ||
        id == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) {
      ++stats_.handshakes_failed;
    }
  }
}

Transport::Link* Transport::LinkFor(const Outgoing& out, int64_t now_ms) {
  auto it = links_.find(out.endpoint);
  if (it != links_.end() && it->second.public_key == out.public_key) return &it->second;
  if (it != links_.end()) links_.erase(it);  // the peer's key changed: reconnect with the new one
  if (links_.size() >= options_.max_links) {
    ++stats_.links_refused;
    uint64_t suppressed = 0;
    if (send_log_.Allow(now_ms, &suppressed)) {
      spdlog::warn("refused a link to '{}': {} links open, max_links", out.endpoint, links_.size());
    }
    return nullptr;
  }
  Link link{zmq::socket_t(*context_, zmq::socket_type::dealer), out.public_key};
  SetCommon(link.socket, options_);
  link.socket.set(zmq::sockopt::sndhwm, options_.send_queue_limit);
  link.socket.set(zmq::sockopt::reconnect_ivl, 100);
  link.socket.set(zmq::sockopt::reconnect_ivl_max, 2000);
  if (options_.curve) {
    link.socket.set(zmq::sockopt::curve_serverkey, out.public_key);
    link.socket.set(zmq::sockopt::curve_publickey, options_.keys.public_key);
    link.socket.set(zmq::sockopt::curve_secretkey, options_.keys.secret_key);
  }
  link.socket.connect(out.endpoint);
  auto [pos, inserted] = links_.emplace(out.endpoint, std::move(link));
  stats_.links_open = links_.size();
  return &pos->second;
}

void Transport::Send(const Outgoing& out, int64_t now_ms) {
  if (options_.faults.any()) {
    SendWithFaults(out, now_ms);
    return;
  }
  SendNow(out, now_ms);
}

// Drop, duplicate and reorder are drawn independently per message; a held message goes out
// right after the next one to its endpoint, so it arrives late but is not lost by holding.
void Transport::SendWithFaults(const Outgoing& out, int64_t now_ms) {
  const FaultInjection& f = options_.faults;
  std::uniform_real_distribution<double> u(0, 1);
  if (f.blocked.count(out.endpoint) > 0 || u(fault_rng_) < f.drop) {
    ++stats_.fault_dropped;
    return;
  }
  auto held = held_.find(out.endpoint);
  if (held == held_.end() && u(fault_rng_) < f.reorder) {
    ++stats_.fault_reordered;
    held_.emplace(out.endpoint, out);
    return;
  }
  SendNow(out, now_ms);
  if (u(fault_rng_) < f.duplicate) {
    ++stats_.fault_duplicated;
    SendNow(out, now_ms);
  }
  if (held != held_.end()) {
    SendNow(held->second, now_ms);
    held_.erase(held);
  }
}

void Transport::SendNow(const Outgoing& out, int64_t now_ms) {
  if (options_.curve && !client::IsZ85Key(out.public_key)) {
    ++stats_.send_no_key;
    return;
  }
  if (options_.curve && options_.authorized.count(out.public_key) == 0) {
    ++stats_.send_unlisted;
    return;
  }
  try {
    Link* link = LinkFor(out, now_ms);
    if (link == nullptr ||
        !link->socket.send(zmq::buffer(out.payload), zmq::send_flags::dontwait)) {
      ++stats_.send_dropped;
      return;
    }
    ++stats_.messages_out;
    stats_.bytes_out += out.payload.size();
  } catch (const zmq::error_t& e) {
    ++stats_.send_dropped;
    uint64_t suppressed = 0;
    if (send_log_.Allow(now_ms, &suppressed)) {
      spdlog::warn("cannot send to '{}': {}", out.endpoint, e.what());
    }
  }
}

void Transport::SetAuthorized(std::map<std::string, std::string> keys) {
  bool removed = false;
  for (const auto& [key, node] : options_.authorized) {
    if (keys.count(key) == 0) removed = true;
  }
  options_.authorized = std::move(keys);
  if (!options_.curve) return;
  if (removed) CloseInbound();
  for (auto it = links_.begin(); it != links_.end();) {
    if (options_.authorized.count(it->second.public_key) > 0) {
      ++it;
      continue;
    }
    spdlog::info("closed the link to '{}': key '{}' is no longer authorized", it->first,
                 it->second.public_key);
    ++stats_.links_revoked;
    held_.erase(it->first);
    it = links_.erase(it);
  }
  stats_.links_open = links_.size();
}

void Transport::CloseInbound() {
  ReadMonitor();  // forget the connections that are already gone
  uint64_t closed = 0;
  for (const int fd : inbound_fds_) {
    // The fd still belongs to libzmq: shut the connection down and let libzmq see it end and
    // close the fd itself. The port check guards against a number reused for another socket.
    if (listen_port_ == 0 || LocalPort(fd) != listen_port_) continue;
    if (::shutdown(fd, SHUT_RDWR) == 0) ++closed;
  }
  stats_.inbound_closed += closed;
  if (closed > 0) spdlog::info("closed {} inbound connections after a key was revoked", closed);
}

void Transport::Close(const std::string& endpoint) {
  auto it = links_.find(endpoint);
  if (it != links_.end()) {
    // What was queued on it this turn (an UNLINK, a probe) still goes out: with no linger,
    // libzmq drops it, and a link closed before its handshake ends is one the far side counts
    // as a failed handshake.
    it->second.socket.set(zmq::sockopt::linger, kCloseLingerMs);
    links_.erase(it);
  }
  held_.erase(endpoint);
  stats_.links_open = links_.size();
}

}  // namespace peerbloom::daemon
