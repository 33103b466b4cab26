// ControlTcp: the tcp control endpoint's connections, read by the event loop itself through
// ZmtpServer (control_zmtp.h) instead of a libzmq ROUTER socket, so that a request's token is
// checked on its header frame before its body is held.
//
// Anyone who reaches the port may connect; only requests with the control token are worth
// memory. Bounds (docs/security.md, "Local listeners"):
//   - a request whose header is refused (no token, a wrong one, not JSON) has its body read
//     and dropped as it arrives: what it costs is the header (64 KiB at most) and the read
//     buffer, whatever the body's size;
//   - bodies of requests with the token are held up to kMaxHeldBodyBytes all together; a body
//     that does not fit waits, unread, until others are answered (its client waits with it);
//   - at most `max_connections` open (ListenerLimits::control); a full table evicts, first a
//     connection that never presented the token, then the one idle longest;
//   - each turn of the loop reads at most kReadPerTurn bytes of each connection, and none of
//     one whose unread answers reach kMaxPendingOutput.
//
// Thread-safety: none (the loop's thread). Resource owner: not copyable.
#ifndef PEERBLOOM_DAEMON_CONTROL_CONTROL_TCP_H_
#define PEERBLOOM_DAEMON_CONTROL_CONTROL_TCP_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>
#include <zmq.hpp>

#include "daemon/control/control_zmtp.h"
#include "daemon/control/descriptors.h"
#include "peerbloom/status.h"

namespace peerbloom::daemon {

struct ControlTcpStats {
  uint64_t connections = 0;    // accepted
  uint64_t evicted = 0;        // closed to make room for a new one: the table was full
  uint64_t shed = 0;           // closed at once: the process was out of descriptors
  uint64_t dropped_bytes = 0;  // bytes of refused requests read and dropped, never held
};

class ControlTcp {
 public:
  static constexpr uint64_t kMaxHeldBodyBytes = uint64_t{512} << 20;
  static constexpr size_t kMaxPendingOutput = size_t{4} << 20;
  static constexpr size_t kReadPerTurn = size_t{256} << 10;

  // Whether a request with this header frame may have its body held (the token is right).
  using Admit = std::function<bool(std::string_view header)>;
  // Answers a whole request: *head is the reply header's text, *body the reply body.
  using Serve =
      std::function<void(const ZmtpRequest& request, std::string* head, std::string* body)>;

  // `endpoint`: "tcp://HOST:PORT" (HOST an address, a name, an interface or "*").
  ControlTcp(std::string endpoint, size_t max_connections);
  ~ControlTcp();
  ControlTcp(const ControlTcp&) = delete;
  ControlTcp& operator=(const ControlTcp&) = delete;

  // Binds and listens. IOError "cannot bind control endpoint '...': <reason>".
  Status Start();
  // The listening socket, then each connection.
  void AppendPollItems(std::vector<zmq::pollitem_t>* items) const;
  // Serves what the poll found ready (`items`, `count`: those AppendPollItems added). Returns
  // the number of requests answered.
  int Process(const zmq::pollitem_t* items, size_t count, const Admit& admit, const Serve& serve);
  // The same without a prior poll: reads return EAGAIN when nothing is ready.
  int ServeReady(const Admit& admit, const Serve& serve);

  const ControlTcpStats& stats() const { return stats_; }
  size_t open_connections() const { return connections_.size(); }
  size_t max_connections() const { return max_connections_; }
  uint64_t held_body_bytes() const { return held_; }

 private:
  struct Connection {
    int fd = -1;
    ZmtpServer zmtp;
    std::string in;   // read, not yet consumed by zmtp (a body waiting for room stops it)
    std::string out;  // replies not yet written
    size_t sent = 0;
    bool admitted = false;       // the current request's header passed
    bool ever_admitted = false;  // some request of it passed: evicted last
    uint64_t held = 0;           // its body's share of held_
    bool waiting = false;        // a body waits for room in held_
    uint64_t last_turn = 0;
    size_t Pending() const { return out.size() - sent; }
  };

  void Accept();
  void EvictOne();
  bool MayRead(const Connection& c) const;
  // Reads a turn's bytes and runs the codec over them. False when the connection is to be
  // closed.
  bool Read(Connection* c, const Admit& admit, const Serve& serve, int* served);
  // Runs the codec over what c->in holds. False on a protocol error.
  bool Drive(Connection* c, const Admit& admit, const Serve& serve, int* served);
  bool Flush(Connection* c);
  void Close(Connection* c);
  void CloseMarked();
  // Drives connections whose body waits, should there be room now.
  void Resume(const Admit& admit, const Serve& serve, int* served);

  std::string endpoint_;
  size_t max_connections_;
  int listen_fd_ = -1;
  std::vector<Connection> connections_;
  std::vector<char> read_buffer_ = std::vector<char>(64 * 1024);
  uint64_t held_ = 0;
  uint64_t turn_ = 0;
  SheddingAcceptor acceptor_;
  ControlTcpStats stats_;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_CONTROL_CONTROL_TCP_H_
