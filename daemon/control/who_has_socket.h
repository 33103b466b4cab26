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
#ifndef PEERBLOOM_DAEMON_CONTROL_WHO_HAS_SOCKET_H_
#define PEERBLOOM_DAEMON_CONTROL_WHO_HAS_SOCKET_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>
#include <zmq.hpp>

#include "daemon/control/descriptors.h"
#include "peerbloom/status.h"

namespace peerbloom::daemon {

struct WhoHasSocketStats {
  uint64_t connections = 0;  // accepted
  uint64_t evicted = 0;      // closed to make room for a new one: the table was full
  uint64_t shed = 0;         // closed at once: the process was out of descriptors
  uint64_t requests = 0;     // lines answered
  uint64_t overlong = 0;     // connections closed for a line over kMaxLineBytes
};

// Bounds (docs/security.md, "Local listeners"): each turn of the loop reads at most
// kReadPerTurn bytes from each connection, in turn, so a client that pipelines lookups gets no
// more of the loop than one that sends a line now and then; a connection is not read while
// kMaxPendingOutput of its answers wait to be read, nor, while all connections together hold
// kMaxTotalOutput, while any of its answers wait; a full table evicts a connection to take the
// new one: the one holding the most unread answers, else one that never sent a line, else the
// one idle longest.
class WhoHasSocket {
 public:
  static constexpr size_t kDefaultMaxConnections = 256;
  static constexpr size_t kMaxLineBytes = 64 * 1024;
  static constexpr size_t kMaxPendingOutput = 4 * 1024 * 1024;
  static constexpr size_t kMaxTotalOutput = 16 * 1024 * 1024;
  static constexpr size_t kReadPerTurn = 4 * 1024;

  // What a request is: a line ending in '\n' (the who-has socket), or an HTTP/1.x request
  // head ending in a blank line, without a body (the nginx route socket, route_socket.h).
  enum class Framing : uint8_t { kLines, kHttpHeads };

  // Answers every complete request of `requests` (lines, or heads with their blank line),
  // appending one answer each to *out. Returns false to close the connection once the
  // answers are written (an HTTP client that asked for it, or sent what cannot be framed).
  using Handler = std::function<bool(std::string_view requests, std::string* out)>;

  // `group`: "" keeps the socket the daemon's user's alone (mode 0600); a group name gives
  // that group access (mode 0660), for a client running as another user (Squid's helper).
  // `max_connections`: the table's size (ListenerLimits::who_has). `name` and `group_key`
  // name the socket and its group's config key in messages.
  explicit WhoHasSocket(std::string path, std::string group = "",
                        size_t max_connections = kDefaultMaxConnections,
                        Framing framing = Framing::kLines, std::string name = "who-has socket",
                        std::string group_key = "who_has_socket_group");
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
  size_t open_connections() const { return connections_.size(); }
  size_t max_connections() const { return max_connections_; }
  // Answers written by the loop and not yet read by their clients, all connections together.
  size_t output_bytes() const { return output_bytes_; }
  const std::string& path() const { return path_; }

 private:
  struct Connection {
    int fd = -1;
    std::string in;
    std::string out;
    size_t sent = 0;         // bytes of `out` already written
    bool answered = false;   // whether it has sent a complete line
    bool closing = false;    // close once `out` is written
    uint64_t last_turn = 0;  // the turn it last sent a line (or was accepted)
    size_t Pending() const { return out.size() - sent; }
  };
  void Accept();
  void EvictOne();
  bool MayRead(const Connection& c) const;
  // Reads one turn's bytes and answers the complete lines. False when the connection is to be
  // closed.
  bool Read(Connection* c, const Handler& handler, size_t* answered);
  bool Flush(Connection* c);
  // Closes the connection (fd -1) and takes its answers out of output_bytes_.
  void Close(Connection* c);
  void CloseMarked();

  // Gives the socket to group_ and checks that the group can reach it.
  Status ShareWithGroup();

  std::string path_;
  std::string group_;
  Framing framing_;
  std::string name_;
  std::string group_key_;
  int listen_fd_ = -1;
  size_t max_connections_;
  std::vector<Connection> connections_;
  std::vector<char> read_buffer_ = std::vector<char>(kReadPerTurn);  // one read, any connection
  size_t output_bytes_ = 0;
  uint64_t turn_ = 0;  // Process calls so far: the clock of last_turn
  size_t first_ = 0;   // the connection read first next turn (round robin)
  SheddingAcceptor acceptor_;
  WhoHasSocketStats stats_;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_CONTROL_WHO_HAS_SOCKET_H_
