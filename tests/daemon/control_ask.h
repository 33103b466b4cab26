// One control request to an in-process Daemon, for tests that drive its loop themselves.
#ifndef PEERBLOOM_TESTS_DAEMON_CONTROL_ASK_H_
#define PEERBLOOM_TESTS_DAEMON_CONTROL_ASK_H_

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <zmq.hpp>

#include "daemon/loop/daemon.h"
#include "tests/support/wait.h"

namespace peerbloom::daemon {

// Sends `request` (and `body` as a second part when not empty) to `endpoint`, turns d's loop
// until the reply comes or a generous deadline passes (the request and the reply travel
// through ZeroMQ's I/O threads, which a loaded machine may not schedule for a while), and
// returns the reply's head (null when none came); *reply_body gets its last part, if any.
inline nlohmann::json AskDaemon(zmq::context_t* context, const std::string& endpoint, Daemon* d,
                                const nlohmann::json& request, const std::string& body,
                                std::string* reply_body) {
  zmq::socket_t s(*context, zmq::socket_type::req);
  s.set(zmq::sockopt::linger, 0);
  s.connect(endpoint);
  s.send(zmq::buffer(request.dump()),
         body.empty() ? zmq::send_flags::none : zmq::send_flags::sndmore);
  if (!body.empty()) s.send(zmq::buffer(body));
  zmq::message_t head;
  // The loop's turn (up to 5 ms) paces the polls.
  testing::WaitFor(
      [&] {
        d->RunOnce(5);
        return s.recv(head, zmq::recv_flags::dontwait).has_value();
      },
      std::chrono::seconds(60), std::chrono::milliseconds(0));
  reply_body->clear();
  while (s.get(zmq::sockopt::rcvmore)) {
    zmq::message_t part;
    (void)s.recv(part);
    reply_body->assign(part.data<char>(), part.size());
  }
  return head.size() ? nlohmann::json::parse(head.to_string_view()) : nlohmann::json();
}

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_TESTS_DAEMON_CONTROL_ASK_H_
