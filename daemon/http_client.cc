// A small HTTP/1.0 client on POSIX sockets: enough to GET a Squid Cache Digest, bounded in
// every wait and every byte. See http_client.h for the contract.
#include "daemon/http_client.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>

namespace peerbloom::daemon {
namespace {

bool Digits(std::string_view text, size_t at, size_t n, int* out) {
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    v = v * 10 + (text[i] - '0');
  }
  *out = v;
  return true;
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant, "days_from_civil").
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

constexpr size_t kMaxHeaderBytes = 64 << 10;

class Socket {
 public:
  Socket() = default;
  ~Socket() {
    if (fd_ >= 0) close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }
  void Reset(int fd) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// Waits for `events` on fd; false on timeout or error.
bool Wait(int fd, short events, int64_t timeout_ms) {
  pollfd p{fd, events, 0};
  int r = 0;
  do {
    r = poll(&p, 1, static_cast<int>(std::max<int64_t>(timeout_ms, 0)));
  } while (r < 0 && errno == EINTR);
  return r == 1;
}

Status Connect(const std::string& host, uint16_t port, int64_t timeout_ms, Socket* sock) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  const std::string service = std::to_string(port);
  if (getaddrinfo(host.c_str(), service.c_str(), &hints, &list) != 0 || list == nullptr) {
    return Status::IOError("cannot resolve '" + host + "'");
  }
  Status result = Status::IOError("cannot connect to '" + host + ":" + service + "'");
  for (addrinfo* a = list; a != nullptr; a = a->ai_next) {
    sock->Reset(socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (sock->fd() < 0) continue;
    if (connect(sock->fd(), a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) continue;
    int err = 0;
    socklen_t len = sizeof(err);
    if (!Wait(sock->fd(), POLLOUT, timeout_ms)) {
      result = Status::IOError("connect to '" + host + ":" + service + "' timed out");
      continue;
    }
    if (getsockopt(sock->fd(), SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
      result = Status::Ok();
      break;
    }
  }
  freeaddrinfo(list);
  return result;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

Status ParseHttpHead(std::string_view head, HttpResponse* res, int64_t* content_length) {
  const size_t eol = head.find("\r\n");
  const std::string_view status_line = head.substr(0, eol);
  if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." || status_line[8] != ' ' ||
      !Digits(status_line, 9, 3, &res->status)) {
    return Status::Corruption("bad http status line");
  }
  *content_length = -1;
  size_t pos = eol == std::string_view::npos ? head.size() : eol + 2;
  while (pos < head.size()) {
    size_t end = head.find("\r\n", pos);
    if (end == std::string_view::npos) end = head.size();
    const std::string_view line = head.substr(pos, end - pos);
    pos = end + 2;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string name = Lower(Trim(line.substr(0, colon)));
    const std::string_view value = Trim(line.substr(colon + 1));
    if (name == "date") res->date = std::string(value);
    if (name == "expires") res->expires = std::string(value);
    if (name == "transfer-encoding") return Status::NotSupported("chunked http body");
    if (name == "content-length") {
      int64_t n = 0;
      for (char c : value) {
        if (c < '0' || c > '9' || n > (int64_t{1} << 40)) {
          return Status::Corruption("bad content-length");
        }
        n = n * 10 + (c - '0');
      }
      *content_length = n;
    }
  }
  return Status::Ok();
}

Status HttpGet(const HttpRequest& req, const HttpGetLimits& limits, const std::atomic<bool>& stop,
               HttpResponse* res) {
  using Steady = std::chrono::steady_clock;
  Socket sock;
  PEERBLOOM_RETURN_IF_ERROR(Connect(req.host, req.port, limits.connect_timeout_ms, &sock));
  const Steady::time_point deadline =
      Steady::now() + std::chrono::milliseconds(limits.total_timeout_ms);
  auto left_ms = [&] {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Steady::now());
    return std::min<int64_t>(left.count(), limits.read_timeout_ms);
  };
  const std::string request = req.method + " " + req.path + " HTTP/1.0\r\nHost: " + req.host + ":" +
                              std::to_string(req.port) + "\r\nAccept: " + req.accept +
                              "\r\nConnection: close\r\n\r\n";
  size_t sent = 0;
  while (sent < request.size()) {
    if (!Wait(sock.fd(), POLLOUT, left_ms())) return Status::IOError("http request timed out");
    const ssize_t n = send(sock.fd(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EINTR && errno != EAGAIN) return Status::IOError("http send failed");
    if (n > 0) sent += static_cast<size_t>(n);
  }
  std::string data;
  size_t head_end = std::string::npos;
  int64_t content_length = -1;
  char buf[16384];
  for (;;) {
    if (stop) return Status::IOError("fetch cancelled");
    if (left_ms() <= 0 || !Wait(sock.fd(), POLLIN, left_ms())) {
      return Status::IOError("http response timed out");
    }
    const ssize_t n = recv(sock.fd(), buf, sizeof(buf), 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return Status::IOError("http receive failed");
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
    if (head_end == std::string::npos) {
      head_end = data.find("\r\n\r\n");
      if (head_end == std::string::npos) {
        if (data.size() > kMaxHeaderBytes) return Status::ResourceExhausted("http head too large");
        continue;
      }
      PEERBLOOM_RETURN_IF_ERROR(
          ParseHttpHead(std::string_view(data).substr(0, head_end), res, &content_length));
      data.erase(0, head_end + 4);
      if (res->status != 200) return Status::Ok();  // the body does not matter
    }
    if (data.size() > limits.max_body_bytes ||
        content_length > static_cast<int64_t>(limits.max_body_bytes)) {
      return Status::ResourceExhausted("body exceeds the limit '" +
                                       std::to_string(limits.max_body_bytes) + "' bytes");
    }
    if (content_length >= 0 && data.size() >= static_cast<size_t>(content_length)) break;
  }
  if (head_end == std::string::npos) return Status::Corruption("http response without a head");
  if (content_length >= 0 && data.size() != static_cast<size_t>(content_length)) {
    return Status::Corruption("http body of '" + std::to_string(data.size()) +
                              "' bytes, content-length '" + std::to_string(content_length) + "'");
  }
  res->body = std::move(data);
  return Status::Ok();
}

std::optional<int64_t> ParseHttpDate(std::string_view t) {
  // "Sun, 06 Nov 1994 08:49:37 GMT"
  static constexpr std::array<std::string_view, 12> kMonths = {
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (t.size() != 29 || t.substr(3, 2) != ", " || t[7] != ' ' || t[11] != ' ' || t[16] != ' ' ||
      t[19] != ':' || t[22] != ':' || t.substr(25) != " GMT") {
    return std::nullopt;
  }
  int day = 0, year = 0, hour = 0, minute = 0, second = 0;
  if (!Digits(t, 5, 2, &day) || !Digits(t, 12, 4, &year) || !Digits(t, 17, 2, &hour) ||
      !Digits(t, 20, 2, &minute) || !Digits(t, 23, 2, &second)) {
    return std::nullopt;
  }
  const auto month = std::find(kMonths.begin(), kMonths.end(), t.substr(8, 3));
  if (month == kMonths.end() || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return std::nullopt;
  }
  const unsigned m = static_cast<unsigned>(month - kMonths.begin()) + 1;
  const int64_t days = DaysFromCivil(year, m, static_cast<unsigned>(day));
  return ((days * 24 + hour) * 60 + minute) * 60000 + int64_t{second} * 1000;
}

}  // namespace peerbloom::daemon
