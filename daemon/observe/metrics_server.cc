// The /metrics endpoint: one thread, one poll over the listening socket and every connection.
// See metrics_server.h for the threading contract and the bounds.
//
// Why not cpp-httplib's server, which served it before: its listener queues every accepted
// connection for a worker thread, and a worker blocks on one connection until that sends a
// whole request, each read waiting up to its timeout. Idle connections therefore piled up
// without limit (descriptors ran out and the daemon died in libzmq's accept), and two clients
// sending a request a byte at a time held both workers, so an honest scrape waited for them.
// An HTTP/1.x GET is small enough to serve here with every bound stated.
#include "daemon/observe/metrics_server.h"

#include <netdb.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>

#include "daemon/config/config.h"
#include "daemon/control/descriptors.h"
#include "daemon/observe/http_head.h"

namespace peerbloom::daemon {
namespace {

constexpr size_t kMaxHeadBytes = 8192;
constexpr size_t kMaxBodyBytes = 4096;
constexpr int kKeepAliveRequests = 100;
// Connections accepted per turn at most, so that answers are written between bursts.
constexpr int kAcceptsPerTurn = 64;
constexpr int64_t kMaxPollMs = 1000;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 413:
      return "Payload Too Large";
    case 431:
      return "Request Header Fields Too Large";
    default:
      return "Service Unavailable";
  }
}

// Binds the first address `host` resolves to that takes the port: SO_REUSEADDR so that a
// restart need not wait for old connections, never SO_REUSEPORT (a second daemon could
// otherwise bind the same port and take half the scrapes). The backlog is the kernel's
// largest: a burst of connections waits there, holding none of the daemon's descriptors,
// instead of being dropped and retried by its clients seconds later.
int BindListener(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (const addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int yes = 1;
    (void)::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  return fd;
}

int BoundPort(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return -1;
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

}  // namespace

struct MetricsServer::Connection {
  int fd = -1;
  std::string in;
  std::string head;                         // the answer's status line and headers
  std::shared_ptr<const std::string> body;  // the answer's body, null for none
  size_t sent = 0;                          // bytes of head and body written
  bool writing = false;
  bool close_after = false;  // close once the answer is written
  bool peer_closed = false;  // the client shut its side: answer what came, then close
  int requests = 0;
  int64_t since_ms = 0;     // when it began to wait for its current request
  int64_t deadline_ms = 0;  // for the request to arrive, or the answer to be taken
};

MetricsServer::MetricsServer(std::string listen, MetricsServerOptions options)
    : listen_(std::move(listen)), options_(options) {}

MetricsServer::~MetricsServer() {
  stop_ = true;
  if (wake_fd_ >= 0) {
    const uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof(one));
  }
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

Status MetricsServer::Start(std::string* bound) {
  std::string host;
  int port = 0;
  PEERBLOOM_RETURN_IF_ERROR(ParseListenAddress(listen_, &host, &port));
  listen_fd_ = BindListener(host, port);
  if (listen_fd_ < 0 || (port = BoundPort(listen_fd_)) <= 0) {
    return Status::IOError("cannot listen for metrics on '" + listen_ +
                           "' (address in use or not local)");
  }
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) return Status::IOError("cannot create the metrics server's eventfd");
  *bound =
      (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
  thread_ = std::thread([this] { Run(); });
  return Status::Ok();
}

void MetricsServer::Publish(std::string text) {
  auto shared = std::make_shared<const std::string>(std::move(text));
  std::lock_guard<std::mutex> lock(mu_);
  text_ = std::move(shared);
}

std::shared_ptr<const std::string> MetricsServer::Text() {
  std::lock_guard<std::mutex> lock(mu_);
  return text_;
}

MetricsServerStats MetricsServer::stats() const {
  MetricsServerStats s;
  s.scrapes = counters_.scrapes;
  s.connections = counters_.connections;
  s.evicted = counters_.evicted;
  s.timed_out = counters_.timed_out;
  s.shed = counters_.shed;
  s.bad_requests = counters_.bad_requests;
  s.open = counters_.open;
  return s;
}

void MetricsServer::Run() {
  std::vector<Connection> connections;
  std::vector<pollfd> fds;
  auto close_marked = [&] {
    std::erase_if(connections, [](const Connection& c) { return c.fd < 0; });
    counters_.open = connections.size();
  };
  auto drop = [](Connection* c) {
    ::close(c->fd);
    c->fd = -1;
  };
  while (!stop_) {
    int64_t now = NowMs();
    int64_t wait = kMaxPollMs;
    for (Connection& c : connections) {
      if (now >= c.deadline_ms) {
        ++counters_.timed_out;
        drop(&c);
      } else {
        wait = std::min(wait, c.deadline_ms - now);
      }
    }
    close_marked();
    fds.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    for (const Connection& c : connections) {
      fds.push_back({c.fd, static_cast<short>(c.writing ? POLLOUT : POLLIN), 0});
    }
    if (::poll(fds.data(), fds.size(), static_cast<int>(wait)) < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) break;
    now = NowMs();
    for (size_t i = 0; i < connections.size(); ++i) {
      Connection& c = connections[i];
      const short revents = fds[i + 2].revents;
      if (revents == 0) continue;
      const bool keep = c.writing ? Write(&c, now) && Answer(&c, now) : Read(&c, now);
      if (!keep) drop(&c);
    }
    close_marked();
    if (fds[1].revents & POLLIN) Accept(&connections, now);
  }
  for (Connection& c : connections) ::close(c.fd);
  counters_.open = 0;
}

void MetricsServer::Accept(std::vector<Connection>* connections, int64_t now) {
  for (int i = 0; i < kAcceptsPerTurn; ++i) {
    int fd = -1;
    const AcceptResult r = acceptor_.Accept(listen_fd_, &fd);
    if (r == AcceptResult::kNone) break;
    if (r == AcceptResult::kShed) {
      ++counters_.shed;
      continue;
    }
    if (connections->size() >= options_.max_connections) {
      // The one waiting longest for a request; if every one is being answered, the oldest.
      auto victim = std::min_element(
          connections->begin(), connections->end(), [](const Connection& a, const Connection& b) {
            if (a.writing != b.writing) return !a.writing;
            return a.writing ? a.deadline_ms < b.deadline_ms : a.since_ms < b.since_ms;
          });
      ::close(victim->fd);
      connections->erase(victim);
      ++counters_.evicted;
    }
    ++counters_.connections;
    Connection c;
    c.fd = fd;
    c.since_ms = now;
    c.deadline_ms = now + options_.request_timeout_ms;
    connections->push_back(std::move(c));
  }
  counters_.open = connections->size();
}

bool MetricsServer::Read(Connection* c, int64_t now) {
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(c->fd, buf, sizeof(buf), 0);
    if (n > 0) {
      c->in.append(buf, static_cast<size_t>(n));
      // Room for one whole request; what is past it waits in the kernel.
      if (c->in.size() > kMaxHeadBytes + kMaxBodyBytes) break;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) c->peer_closed = true;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
    break;
  }
  return Answer(c, now) && (c->writing || !c->peer_closed);
}

// Answers the whole requests of c->in, one after another, until an answer waits for the
// socket or no whole request is left. False when the connection is to be closed.
bool MetricsServer::Answer(Connection* c, int64_t now) {
  while (!c->writing) {
    if (!StartAnswer(c, now)) return true;
    if (!Write(c, now)) return false;
  }
  return true;
}

// Takes the next whole request of c->in and makes its answer; false when there is none yet.
bool MetricsServer::StartAnswer(Connection* c, int64_t now) {
  size_t end = c->in.find("\r\n\r\n");
  size_t blank = 4;
  if (const size_t lf = c->in.find("\n\n"); lf < end) {
    end = lf;
    blank = 2;
  }
  int status = 0;
  HttpRequestHead request;
  if (end == std::string::npos) {
    if (c->in.size() <= kMaxHeadBytes) return false;  // not whole yet
    status = 431;
  } else if (!ParseHttpRequestHead(std::string_view(c->in).substr(0, end), &request).ok()) {
    status = 400;
  } else if (request.content_length > kMaxBodyBytes) {
    status = 413;
  } else if (c->in.size() < end + blank + request.content_length) {
    return false;  // the body is not whole yet
  }
  std::shared_ptr<const std::string> body;
  std::string content_type = "text/plain";
  if (status != 0) {
    ++counters_.bad_requests;
    c->in.clear();
    request.keep_alive = false;
  } else {
    c->in.erase(0, end + blank + request.content_length);
    if (request.path != "/metrics") {
      status = 404;
    } else if (request.method != "GET" && request.method != "HEAD") {
      ++counters_.bad_requests;
      status = 405;
    } else {
      ++counters_.scrapes;
      body = Text();
      status = body ? 200 : 503;
      if (body) content_type = kContentType;
      if (!body) body = std::make_shared<const std::string>("no metrics yet\n");
    }
  }
  ++c->requests;
  c->close_after = !request.keep_alive || c->requests >= kKeepAliveRequests || c->peer_closed;
  const size_t length = body ? body->size() : 0;
  c->head = "HTTP/1.1 " + std::to_string(status) + " " + Reason(status) +
            "\r\nContent-Type: " + content_type + "\r\nContent-Length: " + std::to_string(length) +
            "\r\n" + (status == 405 ? "Allow: GET, HEAD\r\n" : "") +
            "Connection: " + (c->close_after ? "close" : "keep-alive") + "\r\n\r\n";
  if (request.method == "HEAD") body.reset();
  c->body = std::move(body);
  c->sent = 0;
  c->writing = true;
  c->deadline_ms = now + options_.write_timeout_ms;
  return true;
}

// Writes what the socket takes; when the answer is done, the connection waits for its next
// request (or closes). False when it is to be closed.
bool MetricsServer::Write(Connection* c, int64_t now) {
  const size_t body_size = c->body ? c->body->size() : 0;
  while (c->writing && c->sent < c->head.size() + body_size) {
    iovec iov[2];
    size_t n_iov = 0;
    if (c->sent < c->head.size()) {
      iov[n_iov++] = {c->head.data() + c->sent, c->head.size() - c->sent};
    }
    const size_t body_at = c->sent > c->head.size() ? c->sent - c->head.size() : 0;
    if (body_size > body_at) {
      iov[n_iov++] = {const_cast<char*>(c->body->data()) + body_at, body_size - body_at};
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = n_iov;
    const ssize_t n = ::sendmsg(c->fd, &msg, MSG_NOSIGNAL);
    if (n > 0) {
      c->sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
  if (c->close_after) return false;
  c->writing = false;
  c->head.clear();
  c->body.reset();
  c->since_ms = now;
  c->deadline_ms = now + options_.request_timeout_ms;
  return true;
}

}  // namespace peerbloom::daemon
