// The socket is non-blocking: writes and reads interleave so that a large batch never
// deadlocks against the daemon's answers filling the socket buffer.
#include "peerbloom/client/who_has_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "peerbloom/escape.h"

namespace peerbloom::client {
namespace {

using Clock = std::chrono::steady_clock;

std::string Errno() { return std::strerror(errno); }

}  // namespace

std::string DefaultWhoHasSocket(std::string_view data_dir) {
  return std::string(data_dir) + "/who-has.sock";
}

WhoHasSocketClient::WhoHasSocketClient(std::string path, int timeout_ms, int busy_poll_us)
    : path_(std::move(path)), timeout_ms_(timeout_ms), busy_poll_us_(busy_poll_us) {}

WhoHasSocketClient::~WhoHasSocketClient() { Close(); }

void WhoHasSocketClient::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Status WhoHasSocketClient::Connect() {
  sockaddr_un addr{};
  if (path_.size() >= sizeof(addr.sun_path)) {
    return Status::InvalidArgument("who-has socket path " + QuoteBytes(path_, std::string::npos) +
                                   " is too long");
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path_.data(), path_.size());
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return Status::IOError("cannot create a socket: " + Errno());
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    const int err = errno;
    Close();
    return ConnectError(err);
  }
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
  return Status::Ok();
}

// Each cause with what to do about it: "permission denied" alone sends an operator looking
// for a daemon that is in fact running.
Status WhoHasSocketClient::ConnectError(int err) {
  const std::string path = QuoteBytes(path_, std::string::npos);
  std::string why;
  switch (err) {
    case ENOENT:
      last_failure_ = SocketFailure::kNoSocket;
      why = "no such socket (is peerbloomd running, with this who_has_socket?)";
      break;
    case EACCES:
    case EPERM: {
      last_failure_ = SocketFailure::kDenied;
      const passwd* pw = ::getpwuid(::geteuid());
      const std::string user = pw != nullptr ? pw->pw_name : std::to_string(::geteuid());
      why = "permission denied for user '" + user +
            "' (the daemon gives the socket to a group with who_has_socket_group; this user must "
            "be in that group, and every directory above the socket searchable by it)";
      break;
    }
    case ECONNREFUSED:
      last_failure_ = SocketFailure::kRefused;
      why = "connection refused (peerbloomd is not running: the socket is left from an earlier run)";
      break;
    default:
      last_failure_ = SocketFailure::kOther;
      why = std::strerror(err);
  }
  return Status::IOError("cannot connect to who-has socket " + path + ": " + why);
}

Status WhoHasSocketClient::Ask(std::string_view lines, std::string* answers) {
  answers->clear();
  last_failure_ = SocketFailure::kNone;
  if (fd_ < 0) PEERBLOOM_RETURN_IF_ERROR(Connect());
  const size_t expected = static_cast<size_t>(std::count(lines.begin(), lines.end(), '\n'));
  size_t received = 0;
  size_t sent = 0;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms_);
  auto spin_until = Clock::time_point::min();
  char buffer[64 * 1024];
  auto fail = [this](const std::string& what, SocketFailure cause = SocketFailure::kOther) {
    Close();
    last_failure_ = cause;
    return Status::IOError("who-has socket " + QuoteBytes(path_, std::string::npos) + ": " + what);
  };
  while (received < expected) {
    if (sent < lines.size()) {
      const ssize_t n = ::send(fd_, lines.data() + sent, lines.size() - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<size_t>(n);
        if (sent == lines.size()) {
          spin_until = Clock::now() + std::chrono::microseconds(busy_poll_us_);
        }
      } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return fail("cannot send: " + Errno());
      }
    }
    const ssize_t n = ::read(fd_, buffer, sizeof(buffer));
    if (n > 0) {
      answers->append(buffer, static_cast<size_t>(n));
      received += static_cast<size_t>(std::count(buffer, buffer + n, '\n'));
      continue;
    }
    if (n == 0) return fail("the daemon closed the connection");
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return fail("cannot read: " + Errno());
    const auto now = Clock::now();
    if (now < spin_until) continue;
    if (now >= deadline) {
      return fail("no answer within " + std::to_string(timeout_ms_) +
                      " ms (peerbloomd is busy or stalled)",
                  SocketFailure::kTimeout);
    }
    pollfd p{fd_, static_cast<short>(POLLIN | (sent < lines.size() ? POLLOUT : 0)), 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    ::poll(&p, 1, static_cast<int>(std::max<int64_t>(1, left.count())));
  }
  if (received > expected || (expected > 0 && answers->back() != '\n')) {
    return fail("more answer lines than request lines");
  }
  return Status::Ok();
}

}  // namespace peerbloom::client
