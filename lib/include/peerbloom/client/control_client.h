// ControlClient: one request at a time to a daemon's control endpoint (docs/control-protocol.md).
//
// A request is a JSON header frame and an optional body frame; so is a reply. Batches travel
// as newline-separated bodies, never as JSON arrays of keys.
//
// Thread-safety: none. Resource owner: not copyable.
#ifndef PEERBLOOM_CLIENT_CONTROL_CLIENT_H_
#define PEERBLOOM_CLIENT_CONTROL_CLIENT_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <zmq.hpp>

#include "peerbloom/client/control_protocol.h"
#include "peerbloom/status.h"

namespace peerbloom::client {

class ControlClient {
 public:
  // `endpoint` is "ipc://PATH" or "tcp://HOST:PORT". `timeout_ms` bounds each call.
  ControlClient(std::string endpoint, int timeout_ms);
  ControlClient(const ControlClient&) = delete;
  ControlClient& operator=(const ControlClient&) = delete;

  // Sends one request and waits for its reply. IOError when the endpoint cannot be used or
  // the daemon does not answer in time (the socket is then reset so the next call starts
  // clean); InvalidArgument when the header holds a string that is not UTF-8 (JSON cannot
  // carry it: nothing is sent); the reply's own {"ok": false, "error": ...} comes back as
  // InvalidArgument with that error text. A body over kMaxControlBodyBytes is
  // InvalidArgument without sending anything.
  Status Call(const nlohmann::json& header, std::string_view body, nlohmann::json* reply,
              std::string* reply_body);

  const std::string& endpoint() const { return endpoint_; }
  // > 0: Call checks for the reply without sleeping for up to this long before it blocks
  // (a wake-up saved per call, at the price of that much CPU at most). Default 0.
  void set_busy_poll_us(int us) { busy_poll_us_ = us; }
  // The control token (peerbloom/client/control_token.h) sent as the "token" field of every
  // request header; empty sends none (an ipc endpoint needs none).
  void set_token(std::string token) { token_ = std::move(token); }

 private:
  void Reset();
  Status EncodeHeader(const nlohmann::json& header, std::string* head) const;
  Status Exchange(const std::string& head, std::string_view body, zmq::message_t* first,
                  std::string* reply_body);

  std::string endpoint_;
  std::string token_;
  std::string connect_error_;  // why the endpoint cannot be connected to; empty when it can
  int timeout_ms_;
  int busy_poll_us_ = 0;
  zmq::context_t context_{1};
  zmq::socket_t socket_;
};

}  // namespace peerbloom::client

#endif  // PEERBLOOM_CLIENT_CONTROL_CLIENT_H_
