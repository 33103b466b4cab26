// A REQ socket recreated after any timeout: REQ's strict send/recv alternation would
// otherwise wedge after a lost reply.
#include "daemon/control_client.h"

namespace peerbloom::daemon {

ControlClient::ControlClient(std::string endpoint, int timeout_ms)
    : endpoint_(std::move(endpoint)), timeout_ms_(timeout_ms) {
  Reset();
}

void ControlClient::Reset() {
  socket_ = zmq::socket_t(context_, zmq::socket_type::req);
  socket_.set(zmq::sockopt::linger, 0);
  socket_.set(zmq::sockopt::rcvtimeo, timeout_ms_);
  socket_.set(zmq::sockopt::sndtimeo, timeout_ms_);
  socket_.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(kMaxControlBodyBytes + 4096));
  socket_.connect(endpoint_);
}

Status ControlClient::Call(const nlohmann::json& header, std::string_view body,
                           nlohmann::json* reply, std::string* reply_body) {
  const std::string head = header.dump();
  try {
    const auto more = body.empty() ? zmq::send_flags::none : zmq::send_flags::sndmore;
    if (!socket_.send(zmq::buffer(head), more)) {
      Reset();
      return Status::IOError("cannot send to '" + endpoint_ + "' (is peerbloomd running?)");
    }
    if (!body.empty() && !socket_.send(zmq::buffer(body.data(), body.size()))) {
      Reset();
      return Status::IOError("cannot send to '" + endpoint_ + "'");
    }
    zmq::message_t first;
    if (!socket_.recv(first)) {
      Reset();
      return Status::IOError("no answer from '" + endpoint_ + "' within " +
                             std::to_string(timeout_ms_) + " ms (is peerbloomd running?)");
    }
    reply_body->clear();
    while (socket_.get(zmq::sockopt::rcvmore)) {
      zmq::message_t part;
      if (!socket_.recv(part)) break;
      if (reply_body->empty()) reply_body->assign(part.data<char>(), part.size());
    }
    *reply = nlohmann::json::parse(first.to_string_view());
  } catch (const zmq::error_t& e) {
    Reset();
    return Status::IOError("control endpoint '" + endpoint_ + "': " + e.what());
  } catch (const nlohmann::json::exception& e) {
    return Status::Corruption("malformed reply from '" + endpoint_ + "': " + e.what());
  }
  if (!reply->is_object()) return Status::Corruption("malformed reply from '" + endpoint_ + "'");
  if (!reply->value("ok", false)) {
    return Status::InvalidArgument(reply->value("error", std::string("request refused")));
  }
  return Status::Ok();
}

}  // namespace peerbloom::daemon
