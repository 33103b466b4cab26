// The tcp control endpoint's sockets. See control_tcp.h for the bounds and why they need the
// header before the body.
#include "daemon/control/control_tcp.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "peerbloom/client/client_config.h"
#include "peerbloom/client/control_protocol.h"

namespace peerbloom::daemon {
namespace {

constexpr int kAcceptsPerTurn = 64;

// The IPv4 address of interface `name`, as libzmq binds "tcp://eth0:7400".
bool InterfaceAddress(const std::string& name, sockaddr_in* out) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return false;
  bool found = false;
  for (const ifaddrs* i = list; i != nullptr && !found; i = i->ifa_next) {
    if (i->ifa_addr != nullptr && i->ifa_addr->sa_family == AF_INET && name == i->ifa_name) {
      std::memcpy(out, i->ifa_addr, sizeof(*out));
      found = true;
    }
  }
  ::freeifaddrs(list);
  return found;
}

// The address libzmq (without ZMQ_IPV6) binds for HOST: "*" any IPv4 address, "[v6]" that
// IPv6 address, an interface's IPv4 address, else the first IPv4 address the name resolves to.
bool ResolveBindAddress(const std::string& host, int port, sockaddr_storage* out, socklen_t* len) {
  std::memset(out, 0, sizeof(*out));
  auto* v4 = reinterpret_cast<sockaddr_in*>(out);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(out);
  *len = sizeof(sockaddr_in);
  v4->sin_family = AF_INET;
  if (host == "*") {
    v4->sin_addr.s_addr = htonl(INADDR_ANY);
  } else if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    *len = sizeof(sockaddr_in6);
    v6->sin6_family = AF_INET6;
    if (::inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &v6->sin6_addr) != 1) {
      return false;
    }
  } else if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) != 1 &&
             !InterfaceAddress(host, v4)) {
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo* found = nullptr;
    if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return false;
    std::memcpy(v4, found->ai_addr, sizeof(*v4));
    ::freeaddrinfo(found);
  }
  const uint16_t net_port = htons(static_cast<uint16_t>(port));
  if (out->ss_family == AF_INET6) {
    v6->sin6_port = net_port;
  } else {
    v4->sin_port = net_port;
  }
  return true;
}

}  // namespace

ControlTcp::ControlTcp(std::string endpoint, size_t max_connections)
    : endpoint_(std::move(endpoint)), max_connections_(max_connections) {}

ControlTcp::~ControlTcp() {
  for (Connection& c : connections_) ::close(c.fd);
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

Status ControlTcp::Start() {
  std::string host;
  int port = 0;
  sockaddr_storage addr{};
  socklen_t len = 0;
  auto failed = [&](const std::string& why) {
    return Status::IOError("cannot bind control endpoint '" + endpoint_ + "': " + why);
  };
  if (!client::ParseTcpEndpoint(endpoint_, &host, &port)) return failed("not tcp://HOST:PORT");
  if (!ResolveBindAddress(host, port, &addr, &len)) return failed("No such device");
  listen_fd_ = ::socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return failed(std::strerror(errno));
  const int yes = 1;
  (void)::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      ::listen(listen_fd_, SOMAXCONN) != 0) {
    const std::string why = std::strerror(errno);
    ::close(listen_fd_);
    listen_fd_ = -1;
    return failed(why);
  }
  return Status::Ok();
}

void ControlTcp::AppendPollItems(std::vector<zmq::pollitem_t>* items) const {
  items->push_back({nullptr, listen_fd_, ZMQ_POLLIN, 0});
  for (const Connection& c : connections_) {
    short events = MayRead(c) ? ZMQ_POLLIN : 0;
    if (c.Pending() > 0) events |= ZMQ_POLLOUT;
    items->push_back({nullptr, c.fd, events, 0});
  }
}

bool ControlTcp::MayRead(const Connection& c) const {
  return !c.waiting && c.Pending() < kMaxPendingOutput;
}

int ControlTcp::Process(const zmq::pollitem_t* items, size_t count, const Admit& admit,
                        const Serve& serve) {
  ++turn_;
  int served = 0;
  // Connections accepted below are polled from the next turn on.
  const size_t polled = std::min(count - 1, connections_.size());
  for (size_t i = 0; i < polled; ++i) {
    Connection& c = connections_[i];
    const short revents = items[i + 1].revents;
    bool keep = true;
    if (revents & (ZMQ_POLLIN | ZMQ_POLLERR)) {
      keep = MayRead(c) ? Read(&c, admit, serve, &served) : (revents & ZMQ_POLLERR) == 0;
    }
    if (keep && (revents & ZMQ_POLLOUT)) keep = Flush(&c);
    if (!keep) Close(&c);
  }
  CloseMarked();
  Resume(admit, serve, &served);
  if (items[0].revents & ZMQ_POLLIN) Accept();
  return served;
}

int ControlTcp::ServeReady(const Admit& admit, const Serve& serve) {
  ++turn_;
  int served = 0;
  for (Connection& c : connections_) {
    if (MayRead(c) && !Read(&c, admit, serve, &served)) Close(&c);
  }
  CloseMarked();
  Resume(admit, serve, &served);
  return served;
}

void ControlTcp::Resume(const Admit& admit, const Serve& serve, int* served) {
  for (Connection& c : connections_) {
    if (c.waiting && (!Drive(&c, admit, serve, served) || !Flush(&c))) Close(&c);
  }
  CloseMarked();
}

void ControlTcp::Accept() {
  for (int i = 0; i < kAcceptsPerTurn; ++i) {
    int fd = -1;
    const AcceptResult r = acceptor_.Accept(listen_fd_, &fd);
    if (r == AcceptResult::kNone) return;
    if (r == AcceptResult::kShed) {
      ++stats_.shed;
      continue;
    }
    if (connections_.size() >= max_connections_) EvictOne();
    ++stats_.connections;
    Connection c;
    c.fd = fd;
    c.out = ZmtpServer::Hello();
    c.last_turn = turn_;
    connections_.push_back(std::move(c));
    if (!Flush(&connections_.back())) {
      Close(&connections_.back());
      connections_.pop_back();
    }
  }
}

// Whoever never showed the token goes first, then whoever holds no body, then whoever has
// been idle longest: an attacker's connections make room for an honest client, not the
// reverse.
void ControlTcp::EvictOne() {
  auto worse = [](const Connection& a, const Connection& b) {
    if (a.ever_admitted != b.ever_admitted) return !a.ever_admitted;
    if ((a.held == 0) != (b.held == 0)) return a.held == 0;
    return a.last_turn < b.last_turn;
  };
  auto victim = connections_.begin();
  for (auto it = connections_.begin(); it != connections_.end(); ++it) {
    if (worse(*it, *victim)) victim = it;
  }
  Close(&*victim);
  connections_.erase(victim);
  ++stats_.evicted;
}

bool ControlTcp::Read(Connection* c, const Admit& admit, const Serve& serve, int* served) {
  size_t got = 0;
  while (got < kReadPerTurn && MayRead(*c)) {
    const ssize_t n = ::read(c->fd, read_buffer_.data(), read_buffer_.size());
    if (n == 0) return false;  // the client is gone; its unanswered requests with it
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
      break;
    }
    c->in.append(read_buffer_.data(), static_cast<size_t>(n));
    got += static_cast<size_t>(n);
    if (!Drive(c, admit, serve, served)) return false;
    if (static_cast<size_t>(n) < read_buffer_.size()) break;
  }
  return Flush(c);
}

bool ControlTcp::Drive(Connection* c, const Admit& admit, const Serve& serve, int* served) {
  size_t at = 0;
  bool ok = true;
  for (;;) {
    size_t used = 0;
    const ZmtpServer::Event e = c->zmtp.Next(std::string_view(c->in).substr(at), &used, &c->out);
    at += used;
    if (e == ZmtpServer::Event::kNeedMore) break;
    if (e == ZmtpServer::Event::kError) {
      ok = false;
      break;
    }
    if (e == ZmtpServer::Event::kHeader) {
      c->admitted = admit(c->zmtp.request().header);
      c->ever_admitted |= c->admitted;
    } else if (e == ZmtpServer::Event::kBody) {
      const uint64_t size = c->zmtp.request().body_size;
      if (!c->admitted || size > client::kMaxControlBodyBytes) {
        c->zmtp.DropBody();
        continue;
      }
      c->waiting = held_ + size > kMaxHeldBodyBytes;
      if (c->waiting) break;  // read on when others' bodies are answered
      held_ += size;
      c->held = size;
      c->zmtp.KeepBody();
    } else {
      std::string head, body;
      serve(c->zmtp.request(), &head, &body);
      ZmtpServer::AppendReply(head, body, &c->out);
      c->zmtp.ForgetRequest();
      held_ -= c->held;
      c->held = 0;
      c->admitted = false;
      c->last_turn = turn_;
      ++*served;
    }
  }
  c->in.erase(0, at);
  stats_.dropped_bytes += c->zmtp.TakeDropped();
  return ok;
}

bool ControlTcp::Flush(Connection* c) {
  while (c->Pending() > 0) {
    const ssize_t n = ::send(c->fd, c->out.data() + c->sent, c->Pending(), MSG_NOSIGNAL);
    if (n > 0) {
      c->sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    return false;
  }
  if (c->Pending() == 0) {
    c->sent = 0;
    if (c->out.capacity() > read_buffer_.size()) {
      std::string().swap(c->out);  // a large reply's memory goes back
    } else {
      c->out.clear();
    }
  } else if (c->sent >= read_buffer_.size()) {
    c->out.erase(0, c->sent);  // what was written goes; a slow reader does not grow it
    c->sent = 0;
  }
  return true;
}

void ControlTcp::Close(Connection* c) {
  held_ -= c->held;
  c->held = 0;
  ::close(c->fd);
  c->fd = -1;
}

void ControlTcp::CloseMarked() {
  std::erase_if(connections_, [](const Connection& c) { return c.fd < 0; });
}

}  // namespace peerbloom::daemon
