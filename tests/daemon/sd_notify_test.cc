// SdNotifier against a real AF_UNIX datagram socket the test binds, as systemd does: a path
// in a temporary directory and an abstract-namespace name.
#include "daemon/loop/sd_notify.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <string>

namespace peerbloom::daemon {
namespace {

// A bound datagram socket; Receive waits for one datagram with a deadline.
class Listener {
 public:
  // `name`: a path, or "@name" for the abstract namespace.
  explicit Listener(const std::string& name) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, name.data(), name.size());
    if (name[0] == '@') addr.sun_path[0] = '\0';
    const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size() +
                                            (name[0] == '@' ? 0 : 1));
    bound_ = ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) == 0;
  }
  ~Listener() { ::close(fd_); }
  bool bound() const { return bound_; }

  // The next datagram, or "<none>" when none arrives within `timeout_ms`.
  std::string Receive(int timeout_ms = 10000) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) != 1) return "<none>";
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    return n < 0 ? "<error>" : std::string(buf, static_cast<size_t>(n));
  }
  // Whether a datagram is queued now (the sender has returned, so it would be).
  bool Pending() {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, 0) == 1;
  }

 private:
  int fd_ = -1;
  bool bound_ = false;
};

std::string UniqueName() {
  return "peerbloom-sd-notify-test-" + std::to_string(::getpid()) + "-" +
         std::to_string(std::random_device{}());
}

class SdNotifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / UniqueName();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::filesystem::remove_all(dir_);
    ::unsetenv("NOTIFY_SOCKET");
    ::unsetenv("WATCHDOG_USEC");
    ::unsetenv("WATCHDOG_PID");
  }
  std::filesystem::path dir_;
};

TEST_F(SdNotifyTest, SendsOneDatagramToAPathSocket) {
  const std::string path = dir_ / "notify";
  Listener listener(path);
  ASSERT_TRUE(listener.bound());
  SdNotifier notifier(path, 0);
  EXPECT_TRUE(notifier.enabled());
  ASSERT_TRUE(notifier.Notify("READY=1\nSTATUS=serving").ok());
  EXPECT_EQ(listener.Receive(), "READY=1\nSTATUS=serving");
  ASSERT_TRUE(notifier.Notify("STOPPING=1").ok());
  EXPECT_EQ(listener.Receive(), "STOPPING=1");
}

TEST_F(SdNotifyTest, SendsToAnAbstractSocket) {
  const std::string name = "@" + UniqueName();
  Listener listener(name);
  ASSERT_TRUE(listener.bound());
  SdNotifier notifier(name, 0);
  ASSERT_TRUE(notifier.Notify("READY=1").ok());
  EXPECT_EQ(listener.Receive(), "READY=1");
}

TEST_F(SdNotifyTest, WithoutASocketEverythingIsANoOp) {
  SdNotifier notifier;
  EXPECT_FALSE(notifier.enabled());
  EXPECT_TRUE(notifier.Notify("READY=1").ok());
  EXPECT_TRUE(notifier.MaybePing(0));
  EXPECT_EQ(notifier.pings(), 0u);
  EXPECT_EQ(notifier.NextPingMs(), std::numeric_limits<int64_t>::max());
}

TEST_F(SdNotifyTest, RefusesAddressesThatCannotBeOne) {
  Status s = SdNotifier("relative/notify", 0).Notify("READY=1");
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(s.message(),
            "NOTIFY_SOCKET 'relative/notify' is neither an absolute path nor an abstract socket "
            "'@name'");
  s = SdNotifier("/" + std::string(200, 'x'), 0).Notify("READY=1");
  EXPECT_EQ(s.message(), "NOTIFY_SOCKET '/" + std::string(200, 'x') + "' is longer than 107 bytes");
  const std::string missing = dir_ / "missing";
  s = SdNotifier(missing, 0).Notify("READY=1");
  EXPECT_TRUE(s.IsIOError());
  EXPECT_EQ(s.message(), "cannot notify '" + missing + "': No such file or directory");
}

TEST_F(SdNotifyTest, PingsTheWatchdogEveryHalfTimeout) {
  const std::string path = dir_ / "notify";
  Listener listener(path);
  ASSERT_TRUE(listener.bound());
  SdNotifier notifier(path, 10'000'000);  // WatchdogSec=10s
  EXPECT_EQ(notifier.watchdog_interval_ms(), 5000);
  EXPECT_EQ(notifier.NextPingMs(), 0) << "the first ping is due at once";
  ASSERT_TRUE(notifier.MaybePing(1000));
  EXPECT_EQ(listener.Receive(), "WATCHDOG=1");
  EXPECT_EQ(notifier.NextPingMs(), 6000);
  ASSERT_TRUE(notifier.MaybePing(5999));
  EXPECT_FALSE(listener.Pending()) << "not due yet";
  ASSERT_TRUE(notifier.MaybePing(6000));
  EXPECT_EQ(listener.Receive(), "WATCHDOG=1");
  EXPECT_EQ(notifier.pings(), 2u);
  EXPECT_EQ(notifier.NextPingMs(), 11000);
}

TEST_F(SdNotifyTest, ReloadingCarriesTheMonotonicTime) {
  const std::string state = SdNotifier::ReloadingState();
  const std::string prefix = "RELOADING=1\nMONOTONIC_USEC=";
  ASSERT_EQ(state.rfind(prefix, 0), 0u) << state;
  const std::string usec = state.substr(prefix.size());
  EXPECT_FALSE(usec.empty());
  EXPECT_EQ(usec.find_first_not_of("0123456789"), std::string::npos) << state;
}

TEST_F(SdNotifyTest, AFailedPingIsReported) {
  SdNotifier notifier(dir_ / "missing", 2'000'000);
  EXPECT_FALSE(notifier.MaybePing(0));
  EXPECT_TRUE(notifier.MaybePing(999)) << "the next ping is not due, nothing to fail";
  EXPECT_EQ(notifier.pings(), 0u);
}

TEST_F(SdNotifyTest, ReadsTheEnvironmentLikeSystemd) {
  const std::string path = dir_ / "notify";
  EXPECT_FALSE(SdNotifier::FromEnvironment().enabled()) << "no NOTIFY_SOCKET";

  ::setenv("NOTIFY_SOCKET", path.c_str(), 1);
  EXPECT_TRUE(SdNotifier::FromEnvironment().enabled());
  EXPECT_EQ(SdNotifier::FromEnvironment().watchdog_interval_ms(), 0) << "no WATCHDOG_USEC";

  ::setenv("WATCHDOG_USEC", "30000000", 1);
  EXPECT_EQ(SdNotifier::FromEnvironment().watchdog_interval_ms(), 15000);
  ::setenv("WATCHDOG_PID", std::to_string(::getpid()).c_str(), 1);
  EXPECT_EQ(SdNotifier::FromEnvironment().watchdog_interval_ms(), 15000);
  ::setenv("WATCHDOG_PID", std::to_string(::getpid() + 1).c_str(), 1);
  EXPECT_EQ(SdNotifier::FromEnvironment().watchdog_interval_ms(), 0)
      << "the pings are expected from another process";
  ::unsetenv("WATCHDOG_PID");
  for (const char* bad : {"", "-5", "12s", "99999999999999999999999"}) {
    ::setenv("WATCHDOG_USEC", bad, 1);
    EXPECT_EQ(SdNotifier::FromEnvironment().watchdog_interval_ms(), 0) << "'" << bad << "'";
  }
}

}  // namespace
}  // namespace peerbloom::daemon
