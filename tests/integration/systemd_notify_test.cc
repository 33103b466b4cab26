// peerbloomd under a supervisor that speaks systemd's notify protocol: the test binds an
// abstract-namespace datagram socket, as systemd does, passes it in $NOTIFY_SOCKET with a
// watchdog, and reads what a real daemon process sends across start, reload and stop.
#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tests/support/cluster_harness.h"

namespace peerbloom::testing {
namespace {

class NotifySocket {
 public:
  NotifySocket()
      : name_("@peerbloom-notify-" + std::to_string(::getpid()) + "-" +
              std::to_string(std::random_device{}())) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path + 1, name_.data() + 1, name_.size() - 1);
    bound_ = ::bind(fd_, reinterpret_cast<sockaddr*>(&addr),
                    static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name_.size())) == 0;
  }
  ~NotifySocket() { ::close(fd_); }
  const std::string& name() const { return name_; }
  bool bound() const { return bound_; }

  // The datagrams that arrive until one starts with `prefix` (included), or until the deadline
  // (then the last entry is "<timeout>").
  std::vector<std::string> Until(const std::string& prefix) {
    std::vector<std::string> got;
    // The poll's 100 ms paces the turns.
    const bool seen = WaitFor(
        [&] {
          pollfd p{fd_, POLLIN, 0};
          if (::poll(&p, 1, 100) != 1) return false;
          char buf[4096];
          const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
          if (n < 0) return false;
          got.emplace_back(buf, static_cast<size_t>(n));
          return got.back().rfind(prefix, 0) == 0;
        },
        kWaitDeadline, std::chrono::milliseconds(0));
    if (!seen) got.push_back("<timeout>");
    return got;
  }

 private:
  std::string name_;
  int fd_ = -1;
  bool bound_ = false;
};

std::string Joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += "[" + s + "] ";
  return out;
}

TEST(SystemdNotify, ReadyWatchdogReloadAndStopping) {
  NotifySocket notify;
  ASSERT_TRUE(notify.bound());
  Cluster cluster;
  Node* node = cluster.AddNode("n");
  NodeOptions options;
  // The daemon inherits the variables; each test runs in its own process (ctest).
  ::setenv("NOTIFY_SOCKET", notify.name().c_str(), 1);
  ::setenv("WATCHDOG_USEC", "400000", 1);  // a ping every 200 ms
  const bool started = node->Start(options, {});
  ::unsetenv("NOTIFY_SOCKET");
  ::unsetenv("WATCHDOG_USEC");
  ASSERT_TRUE(started) << node->log_tail();

  // READY comes first, once the sockets are bound: the advertised endpoint is in it.
  std::vector<std::string> got = notify.Until("READY=1");
  ASSERT_EQ(got.size(), 1u) << Joined(got);
  EXPECT_EQ(got[0], "READY=1\nSTATUS=serving peers on " + node->endpoint());

  // The loop pings the watchdog while it turns.
  for (int i = 0; i < 3; ++i) {
    got = notify.Until("WATCHDOG=1");
    EXPECT_EQ(got.back(), "WATCHDOG=1") << Joined(got);
  }

  ASSERT_TRUE(node->Reload(options, {}));
  got = notify.Until("RELOADING=1");
  EXPECT_EQ(got.back().rfind("RELOADING=1\nMONOTONIC_USEC=", 0), 0u) << Joined(got);
  got = notify.Until("READY=1");
  EXPECT_EQ(got.back(), "READY=1\nSTATUS=serving peers on " + node->endpoint()) << Joined(got);

  ASSERT_TRUE(node->Stop());
  got = notify.Until("STOPPING=1");
  EXPECT_EQ(got.back(), "STOPPING=1\nSTATUS=writing the final snapshot") << Joined(got);
}

}  // namespace
}  // namespace peerbloom::testing
