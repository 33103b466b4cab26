// ControlServer: the daemon's local request/reply endpoint (docs/control-protocol.md).
//
// Clients may be REQ sockets or DEALERs that send an empty delimiter frame first. Every
// request is [header JSON][body?]; every reply is the same shape. An ipc endpoint is a ROUTER
// socket created under umask 077 and chmod 0600: only the daemon's user may talk to it. A tcp
// endpoint needs the control token in every request (peerbloom/client/control_token.h) and
// anyone may reach it, so it is served by ControlTcp, which checks the token on the header
// frame before a body is held (control_tcp.h states its bounds).
//
// Thread-safety: none. Resource owner: not copyable.
#ifndef PEERBLOOM_DAEMON_CONTROL_CONTROL_SERVER_H_
#define PEERBLOOM_DAEMON_CONTROL_CONTROL_SERVER_H_

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>
#include <zmq.hpp>

#include "daemon/control/control_tcp.h"
#include "daemon/control/descriptors.h"
#include "daemon/observe/log_limiter.h"
#include "peerbloom/status.h"

namespace peerbloom::daemon {

// Checks a request header frame as the control server does before any operation sees it:
// size, UTF-8, JSON, an object with a string "op". *header receives the parsed object.
// Errors are the messages the client is sent.
Status ParseControlHeader(std::string_view text, nlohmann::json* header);

// What a request held, however it arrived: whole frames from the ROUTER socket, or what
// ControlTcp kept of them.
struct ControlRequest {
  bool envelope_ok = false;  // [empty delimiter][header][body?]
  std::string_view header;
  bool header_over = false;  // the header was over the limit (and not kept)
  std::string_view body;     // empty when not kept
  uint64_t body_size = 0;    // the body's size, kept or not
};

struct ControlStats {
  uint64_t requests = 0;
  uint64_t errors = 0;           // replies with "ok": false
  uint64_t malformed = 0;        // bad envelopes or headers
  uint64_t internal_errors = 0;  // operations that threw; answered with an error
  uint64_t unauthorized = 0;     // requests without the control token, or a wrong one
};

class ControlServer {
 public:
  // Fills *reply (without "ok") and *reply_body; a non-OK status becomes
  // {"ok": false, "error": message}. An exception it throws (any std::exception) becomes
  // {"ok": false, "error": "internal error in op '<op>': <what>"} and counts in
  // internal_errors: one operation's failure never ends the daemon. Strings in *reply that
  // are not UTF-8 are sent with U+FFFD in place of the bad bytes rather than failing the
  // reply; handlers quote input through peerbloom/escape.h so that does not happen.
  using Handler = std::function<Status(const nlohmann::json& request, std::string_view body,
                                       nlohmann::json* reply, std::string* reply_body)>;

  // `max_tcp_connections`: the connections a tcp endpoint holds (ListenerLimits::control).
  ControlServer(zmq::context_t* context, std::string endpoint,
                size_t max_tcp_connections = ListenerLimits().control);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  Status Start();
  // Requests must carry `token` in their header's "token" field (compared in constant
  // time); empty, the default, needs none (an ipc endpoint).
  void set_token(std::string token) { token_ = std::move(token); }
  void AppendPollItems(std::vector<zmq::pollitem_t>* items);
  // Serves up to a bounded number of ready requests and returns how many; `items` and `count`
  // are those AppendPollItems added. `now_ms` paces the log of internal errors.
  int Process(const zmq::pollitem_t* items, size_t count, int64_t now_ms, const Handler& handler);
  // The same without a prior poll: serves what is queued now.
  int ServeReady(int64_t now_ms, const Handler& handler);
  const ControlStats& stats() const { return stats_; }
  // The tcp endpoint's connections (zero for ipc).
  ControlTcpStats tcp_stats() const;
  size_t open_connections() const;
  size_t max_connections() const;

 private:
  bool ServeOne(int64_t now_ms, const Handler& handler);
  // Whether a header frame passes the checks before any operation (a tcp body is held only
  // then). Counts nothing: Answer counts, once the whole request is in.
  bool Admits(std::string_view header) const;
  // Checks the envelope, the header and the token, and runs the handler, turning what it
  // throws into a Status.
  Status Answer(const ControlRequest& request, int64_t now_ms, const Handler& handler,
                nlohmann::json* reply, std::string* reply_body);
  // The reply header's text for `status` and *reply (its "ok" set here).
  std::string ReplyHead(const Status& status, nlohmann::json* reply, std::string* reply_body);
  // Answers a request ControlTcp read.
  void AnswerTcp(const ZmtpRequest& request, int64_t now_ms, const Handler& handler,
                 std::string* head, std::string* body);

  std::string endpoint_;
  std::string token_;
  std::unique_ptr<zmq::socket_t> socket_;  // ipc
  std::unique_ptr<ControlTcp> tcp_;        // tcp
  ControlStats stats_;
  LogLimiter internal_log_;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_CONTROL_CONTROL_SERVER_H_
