// The descriptors the daemon's own listeners may hold, and accepting when there are none.
//
// Every connection a listener holds is a descriptor. If the listeners of the local endpoints
// (the who-has socket, /metrics, a tcp control endpoint) held them all, the next peer link,
// snapshot file or control connection would fail, and libzmq answers EMFILE in the accept of
// an ipc control connection with an assertion (src/ipc_listener.cpp), ending the process. So
// the listeners are sized from RLIMIT_NOFILE at start and together hold at most a quarter of
// it; an accept that fails for want of descriptors anyway (others took them) sheds the
// waiting connection instead of spinning on it.
//
// Thread-safety: ListenerLimitsFor and DescriptorLimit are pure or read-only; one
// SheddingAcceptor per listening socket, used from one thread.
#ifndef PEERBLOOM_DAEMON_CONTROL_DESCRIPTORS_H_
#define PEERBLOOM_DAEMON_CONTROL_DESCRIPTORS_H_

#include <cstddef>
#include <cstdint>

namespace peerbloom::daemon {

// Connections each listener holds at most (docs/operations.md, "Descriptors").
struct ListenerLimits {
  size_t who_has = 256;  // min(256, limit / 8)
  size_t metrics = 64;   // min(64, limit / 32)
  size_t control = 64;   // min(64, limit / 32): a tcp control endpoint's connections
};

// The limits for a soft RLIMIT_NOFILE of `descriptor_limit`: together at most a quarter of
// it (and at least 2 each, for a limit too small to run anything else anyway).
ListenerLimits ListenerLimitsFor(uint64_t descriptor_limit);

// The process's soft RLIMIT_NOFILE; a large number when unlimited or unreadable.
uint64_t DescriptorLimit();

// What one accept did.
enum class AcceptResult {
  kAccepted,  // *fd is a new connection, non-blocking and close-on-exec
  kNone,      // nothing waits (or a transient error the next poll retries)
  kShed,      // the process was out of descriptors: the waiting connection was closed
};

// accept4 for a non-blocking listening socket, holding one spare descriptor (/dev/null) for
// the moment the process runs out: it is closed, the waiting connection accepted and closed
// at once (its client sees the connection end rather than wait in the backlog), and the spare
// taken again. Without it a listener with a connection waiting stays readable and a poll loop
// around it spins.
class SheddingAcceptor {
 public:
  SheddingAcceptor();
  ~SheddingAcceptor();
  SheddingAcceptor(const SheddingAcceptor&) = delete;
  SheddingAcceptor& operator=(const SheddingAcceptor&) = delete;

  AcceptResult Accept(int listen_fd, int* fd);

 private:
  int spare_fd_ = -1;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_CONTROL_DESCRIPTORS_H_
