// ControlServer: the daemon's local request/reply endpoint (docs/control-protocol.md).
//
// A ROUTER socket, so clients may be REQ sockets or DEALERs that send an empty delimiter
// frame first. Every request is [header JSON][body?]; every reply is the same shape. An ipc
// socket is created under umask 077 and chmod 0600: only the daemon's user may talk to it. A
// tcp endpoint needs the control token in every request (peerbloom/client/control_token.h).
//
// Thread-safety: none. Resource owner: not copyable.
#ifndef PEERBLOOM_DAEMON_CONTROL_SERVER_H_
#define PEERBLOOM_DAEMON_CONTROL_SERVER_H_

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>
#include <zmq.hpp>

#include "daemon/log_limiter.h"
#include "peerbloom/status.h"

namespace peerbloom::daemon {

// Checks a request header frame as the control server does before any operation sees it:
// size, UTF-8, JSON, an object with a string "op". *header receives the parsed object.
// Errors are the messages the client is sent.
Status ParseControlHeader(std::string_view text, nlohmann::json* header);

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

  ControlServer(zmq::context_t* context, std::string endpoint);
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  Status Start();
  // Requests must carry `token` in their header's "token" field (compared in constant
  // time); empty, the default, needs none (an ipc endpoint).
  void set_token(std::string token) { token_ = std::move(token); }
  void AppendPollItems(std::vector<zmq::pollitem_t>* items);
  // Serves up to a bounded number of ready requests and returns how many. `now_ms` paces the
  // log of internal errors.
  int Process(const zmq::pollitem_t* items, int64_t now_ms, const Handler& handler);
  // The same without a prior poll: serves what is queued now.
  int ServeReady(int64_t now_ms, const Handler& handler);
  const ControlStats& stats() const { return stats_; }

 private:
  bool ServeOne(int64_t now_ms, const Handler& handler);
  // Checks the envelope and runs the handler, turning what it throws into a Status.
  Status Answer(const std::vector<zmq::message_t>& frames, int64_t now_ms, const Handler& handler,
                nlohmann::json* reply, std::string* reply_body);

  std::string endpoint_;
  std::string token_;
  zmq::socket_t socket_;
  ControlStats stats_;
  LogLimiter internal_log_;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_CONTROL_SERVER_H_
