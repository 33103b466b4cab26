// WhoHasSocket: the daemon's who-has-only line socket (docs/control-protocol.md, "The who-has
// socket").
//
// A plain unix stream socket served by the event loop itself: a request travels from the
// client's thread to the loop's thread and back, two wake-ups per round trip, where the ZeroMQ
// control endpoint adds its I/O threads on both sides (six). Each request line is a URL; each
// answer line lists the node ids that probably hold it ("" none, "!" not a valid line), in
// request order, so a client may write many lines before reading.
//
// Thread-safety: none. Resource owner: not copyable.
#ifndef PEERBLOOM_DAEMON_WHO_HAS_SOCKET_H_
#define PEERBLOOM_DAEMON_WHO_HAS_SOCKET_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>
#include <zmq.hpp>

#include "peerbloom/status.h"

namespace peerbloom::daemon {

struct WhoHasSocketStats {
  uint64_t connections = 0;  // accepted
  uint64_t refused = 0;      // connections closed at once: too many open
  uint64_t requests = 0;     // lines answered
  uint64_t overlong = 0;     // connections closed for a line over kMaxLineBytes
};

class WhoHasSocket {
 public:
  static constexpr size_t kMaxConnections = 256;
  static constexpr size_t kMaxLineBytes = 64 * 1024;
  // Reading from a connection pauses while this much of its answers is still unsent.
  static constexpr size_t kMaxPendingOutput = 4 * 1024 * 1024;

  // Answers every complete line of `lines` (each ends in '\n'), appending one line each to
  // *out.
  using Handler = std::function<void(std::string_view lines, std::string* out)>;

  // `group`: "" keeps the socket the daemon's user's alone (mode 0600); a group name gives
  // that group access (mode 0660), for a client running as another user (Squid's helper).
  explicit WhoHasSocket(std::string path, std::string group = "");
  ~WhoHasSocket();
  WhoHasSocket(const WhoHasSocket&) = delete;
  WhoHasSocket& operator=(const WhoHasSocket&) = delete;

  // Binds `path` (a stale socket file there is replaced) with mode 0600, or 0660 and the
  // group when one is given. InvalidArgument, naming the cause and the fix, when the group
  // does not exist, the daemon's user cannot give the socket to it (not a member), or a
  // directory above the socket is not searchable by it: the client would be refused.
  Status Start();
  // The listening socket, then each connection.
  void AppendPollItems(std::vector<zmq::pollitem_t>* items) const;
  // Serves what the poll found ready; `items` are the ones AppendPollItems added, in the same
  // order. Returns the number of lines answered.
  size_t Process(const zmq::pollitem_t* items, size_t count, const Handler& handler);
  // Serves whatever is ready now without a prior poll (reads return EAGAIN when nothing is).
  size_t ServeReady(const Handler& handler);

  const WhoHasSocketStats& stats() const { return stats_; }
  const std::string& path() const { return path_; }

 private:
  struct Connection {
    int fd = -1;
    std::string in;
    std::string out;
    size_t sent = 0;  // bytes of `out` already written
  };
  void Accept();
  // False when the connection is to be closed.
  bool Read(Connection* c, const Handler& handler, size_t* answered);
  bool Flush(Connection* c);
  void CloseMarked();

  // Gives the socket to group_ and checks that the group can reach it.
  Status ShareWithGroup();

  std::string path_;
  std::string group_;
  int listen_fd_ = -1;
  std::vector<Connection> connections_;
  std::vector<char> read_buffer_ = std::vector<char>(64 * 1024);  // one read, any connection
  WhoHasSocketStats stats_;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_WHO_HAS_SOCKET_H_
