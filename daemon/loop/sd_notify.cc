// sd_notify by hand: one sendto() of a datagram on a fresh AF_UNIX socket per message. A
// fresh socket costs a few microseconds, and needs no reconnection when systemd restarts.
#include "daemon/loop/sd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "peerbloom/escape.h"

namespace peerbloom::daemon {
namespace {

// Socket names are quoted whole in messages (an address is at most 108 bytes; a longer one is
// the error being reported).
constexpr size_t kQuoteBytes = 512;

// Parses a whole decimal number; false for anything else (empty, sign, junk, overflow).
bool ParseUnsigned(const char* text, uint64_t* out) {
  if (text == nullptr || *text == '\0') return false;
  const char* end = text + std::strlen(text);
  const auto [ptr, ec] = std::from_chars(text, end, *out);
  return ec == std::errc() && ptr == end;
}

// Fills `addr` for a path or an "@name" (abstract namespace: sun_path starts with a NUL and
// the name is not NUL-terminated, so its length is part of the address length).
Status MakeAddress(const std::string& socket, sockaddr_un* addr, socklen_t* len) {
  *addr = {};
  addr->sun_family = AF_UNIX;
  if (socket[0] != '/' && socket[0] != '@') {
    return Status::InvalidArgument("NOTIFY_SOCKET " + QuoteBytes(socket, kQuoteBytes) +
                                   " is neither an absolute path nor an abstract socket '@name'");
  }
  // A path needs room for its terminating NUL; an abstract name does not.
  const size_t room = sizeof(addr->sun_path) - (socket[0] == '/' ? 1 : 0);
  if (socket.size() > room) {
    return Status::InvalidArgument("NOTIFY_SOCKET " + QuoteBytes(socket, kQuoteBytes) +
                                   " is longer than " + std::to_string(room) + " bytes");
  }
  std::memcpy(addr->sun_path, socket.data(), socket.size());
  if (socket[0] == '@') addr->sun_path[0] = '\0';
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + socket.size());
  return Status::Ok();
}

}  // namespace

SdNotifier::SdNotifier(std::string socket, uint64_t watchdog_usec) : socket_(std::move(socket)) {
  if (watchdog_usec > 0 && !socket_.empty()) {
    // Half the timeout, at least 1 ms: a ping that is late by up to one loop turn (at most a
    // second of poll, plus whatever the turn does) still arrives well before systemd gives up.
    constexpr uint64_t kMaxUsec = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    const uint64_t usec = std::min(watchdog_usec, kMaxUsec);
    watchdog_interval_ms_ = std::max<int64_t>(1, static_cast<int64_t>(usec / 2000));
  }
}

SdNotifier SdNotifier::FromEnvironment() {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  if (socket == nullptr || *socket == '\0') return SdNotifier();
  uint64_t usec = 0;
  if (!ParseUnsigned(std::getenv("WATCHDOG_USEC"), &usec)) usec = 0;
  // systemd sets WATCHDOG_PID to the main process; a child that inherited the variables
  // (a forked helper) must not ping on its behalf.
  if (const char* pid_text = std::getenv("WATCHDOG_PID"); pid_text != nullptr) {
    uint64_t pid = 0;
    if (!ParseUnsigned(pid_text, &pid) || pid != static_cast<uint64_t>(::getpid())) usec = 0;
  }
  return SdNotifier(socket, usec);
}

Status SdNotifier::Notify(std::string_view state) const {
  if (!enabled()) return Status::Ok();
  sockaddr_un addr;
  socklen_t len = 0;
  PEERBLOOM_RETURN_IF_ERROR(MakeAddress(socket_, &addr, &len));
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return Status::IOError(std::string("cannot create a socket: ") + std::strerror(errno));
  const ssize_t sent = ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                                reinterpret_cast<const sockaddr*>(&addr), len);
  const int error = errno;
  ::close(fd);
  if (sent < 0) {
    return Status::IOError("cannot notify " + QuoteBytes(socket_, kQuoteBytes) + ": " +
                           std::strerror(error));
  }
  return Status::Ok();
}

std::string SdNotifier::ReloadingState() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  const int64_t usec = static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
  return "RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec);
}

bool SdNotifier::MaybePing(int64_t now_ms) {
  if (watchdog_interval_ms_ == 0 || (pinged_ && now_ms < next_ping_ms_)) return true;
  pinged_ = true;
  next_ping_ms_ = now_ms + watchdog_interval_ms_;
  if (!Notify("WATCHDOG=1").ok()) return false;
  ++pings_;
  return true;
}

int64_t SdNotifier::NextPingMs() const {
  if (watchdog_interval_ms_ == 0) return std::numeric_limits<int64_t>::max();
  return pinged_ ? next_ping_ms_ : 0;
}

}  // namespace peerbloom::daemon
