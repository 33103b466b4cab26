// WhoHasSocketClient: lookups through a daemon's who-has socket (docs/control-protocol.md,
// "The who-has socket"), the lowest-latency way to ask: one unix stream socket, a line out and
// a line back, no JSON.
//
// `busy_poll_us` > 0 makes Ask read without sleeping for up to that long before it blocks:
// the reply usually comes within tens of microseconds, and a thread that sleeps for it pays a
// wake-up on top. It costs that much CPU per call at most.
//
// Thread-safety: none. Resource owner: not copyable.
#ifndef PEERBLOOM_CLIENT_WHO_HAS_SOCKET_H_
#define PEERBLOOM_CLIENT_WHO_HAS_SOCKET_H_

#include <string>
#include <string_view>

#include "peerbloom/status.h"

namespace peerbloom::client {

// The default `who_has_socket` of a daemon with this data_dir: "<data_dir>/who-has.sock".
std::string DefaultWhoHasSocket(std::string_view data_dir);

// Why the last Ask failed, for a caller that counts failures by cause.
enum class SocketFailure {
  kNone,      // the last Ask succeeded
  kNoSocket,  // no socket at the path (the daemon is not running, or another path)
  kDenied,    // permission denied (this process's user may not connect)
  kRefused,   // connection refused (a socket file left by a daemon that is gone)
  kTimeout,   // no answer within the timeout
  kOther,
};

class WhoHasSocketClient {
 public:
  WhoHasSocketClient(std::string path, int timeout_ms, int busy_poll_us);
  ~WhoHasSocketClient();
  WhoHasSocketClient(const WhoHasSocketClient&) = delete;
  WhoHasSocketClient& operator=(const WhoHasSocketClient&) = delete;

  // Sends `lines` (URLs, each ending in '\n'; none may hold another '\n') and reads one
  // answer line per line into *answers, each ending in '\n': the node ids that probably hold
  // that URL one space apart, "" for none, "!" for a line that is not a URL. Connects on first
  // use and again after any failure. IOError when the socket cannot be used or the daemon does
  // not answer within the timeout.
  Status Ask(std::string_view lines, std::string* answers);
  SocketFailure last_failure() const { return last_failure_; }

 private:
  Status Connect();
  Status ConnectError(int err);
  void Close();

  std::string path_;
  int timeout_ms_;
  int busy_poll_us_;
  int fd_ = -1;
  SocketFailure last_failure_ = SocketFailure::kNone;
};

}  // namespace peerbloom::client

#endif  // PEERBLOOM_CLIENT_WHO_HAS_SOCKET_H_
