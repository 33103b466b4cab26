// Listener limits from RLIMIT_NOFILE, and accept that sheds at EMFILE. See descriptors.h.
#include "daemon/control/descriptors.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace peerbloom::daemon {
namespace {

constexpr uint64_t kUnlimited = uint64_t{1} << 20;

size_t Share(uint64_t limit, uint64_t divisor, size_t most) {
  return static_cast<size_t>(std::clamp<uint64_t>(limit / divisor, 2, most));
}

int OpenSpare() { return ::open("/dev/null", O_RDONLY | O_CLOEXEC); }

}  // namespace

// An eighth and two 32nds: a quarter of the descriptors, leaving three quarters to peer links
// (max_links outgoing plus the inbound ones), ZeroMQ's own (a few per socket), files and the
// control socket's clients. At the packaged unit's LimitNOFILE=8192 the caps are the historic
// 256 and 64; at a shell's 1,024 they are 128, 32 and 32.
ListenerLimits ListenerLimitsFor(uint64_t descriptor_limit) {
  ListenerLimits l;
  l.who_has = Share(descriptor_limit, 8, 256);
  l.metrics = Share(descriptor_limit, 32, 64);
  l.control = Share(descriptor_limit, 32, 64);
  return l;
}

uint64_t DescriptorLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return kUnlimited;
  return static_cast<uint64_t>(limit.rlim_cur);
}

SheddingAcceptor::SheddingAcceptor() : spare_fd_(OpenSpare()) {}

SheddingAcceptor::~SheddingAcceptor() {
  if (spare_fd_ >= 0) ::close(spare_fd_);
}

AcceptResult SheddingAcceptor::Accept(int listen_fd, int* fd) {
  for (;;) {
    *fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (*fd >= 0) return AcceptResult::kAccepted;
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if ((errno != EMFILE && errno != ENFILE) || spare_fd_ < 0) return AcceptResult::kNone;
    ::close(spare_fd_);
    const int shed = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (shed >= 0) ::close(shed);
    spare_fd_ = OpenSpare();
    return shed >= 0 ? AcceptResult::kShed : AcceptResult::kNone;
  }
}

}  // namespace peerbloom::daemon
