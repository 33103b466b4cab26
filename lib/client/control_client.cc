// A REQ socket recreated after any timeout: REQ's strict send/recv alternation would
// otherwise wedge after a lost reply.
#include "peerbloom/client/control_client.h"

#include <chrono>

#include "peerbloom/client/control_token.h"
#include "peerbloom/escape.h"

namespace peerbloom::client {
namespace {

// The endpoint comes from a flag or the environment: quoted whole, escaped.
std::string Quoted(const std::string& endpoint) { return QuoteBytes(endpoint, std::string::npos); }

}  // namespace

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
  // A malformed endpoint ("tcp://no-port", bytes that are not an address) makes connect
  // throw: keep the reason for Call to return rather than throwing from the constructor.
  try {
    socket_.connect(endpoint_);
    connect_error_.clear();
  } catch (const zmq::error_t& e) {
    connect_error_ = e.what();
  }
}

Status ControlClient::Call(const nlohmann::json& header, std::string_view body,
                           nlohmann::json* reply, std::string* reply_body) {
  if (!connect_error_.empty()) {
    return Status::IOError("cannot connect to control endpoint " + Quoted(endpoint_) + ": " +
                           connect_error_);
  }
  if (body.size() > kMaxControlBodyBytes) {
    return Status::InvalidArgument("request body of '" + std::to_string(body.size()) +
                                   "' bytes exceeds the limit of '" +
                                   std::to_string(kMaxControlBodyBytes) + "' bytes");
  }
  std::string head;
  PEERBLOOM_RETURN_IF_ERROR(EncodeHeader(header, &head));
  try {
    zmq::message_t first;
    PEERBLOOM_RETURN_IF_ERROR(Exchange(head, body, &first, reply_body));
    *reply = nlohmann::json::parse(first.to_string_view());
  } catch (const zmq::error_t& e) {
    Reset();
    return Status::IOError("control endpoint " + Quoted(endpoint_) + ": " + e.what());
  } catch (const nlohmann::json::exception& e) {
    return Status::Corruption("malformed reply from " + Quoted(endpoint_) + ": " +
                              EscapeBytes(e.what()));
  }
  if (!reply->is_object()) return Status::Corruption("malformed reply from " + Quoted(endpoint_));
  if (!reply->value("ok", false)) {
    return Status::InvalidArgument(reply->value("error", std::string("request refused")));
  }
  return Status::Ok();
}

Status ControlClient::EncodeHeader(const nlohmann::json& header, std::string* head) const {
  try {
    if (token_.empty()) {
      *head = header.dump();
    } else {
      nlohmann::json with_token = header;
      with_token[std::string(kTokenField)] = token_;
      *head = with_token.dump();
    }
  } catch (const nlohmann::json::type_error& e) {
    return Status::InvalidArgument(std::string("request header cannot be encoded: ") + e.what());
  }
  return Status::Ok();
}

// Sends the request and receives the reply's frames: its header in *first, its first body
// frame in *reply_body. Throws zmq::error_t as the socket does.
Status ControlClient::Exchange(const std::string& head, std::string_view body,
                               zmq::message_t* first, std::string* reply_body) {
  const auto more = body.empty() ? zmq::send_flags::none : zmq::send_flags::sndmore;
  if (!socket_.send(zmq::buffer(head), more)) {
    Reset();
    return Status::IOError("cannot send to " + Quoted(endpoint_) + " (is peerbloomd running?)");
  }
  if (!body.empty() && !socket_.send(zmq::buffer(body.data(), body.size()))) {
    Reset();
    return Status::IOError("cannot send to " + Quoted(endpoint_));
  }
  if (busy_poll_us_ > 0) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(busy_poll_us_);
    while (!(socket_.get(zmq::sockopt::events) & ZMQ_POLLIN) &&
           std::chrono::steady_clock::now() < until) {
    }
  }
  if (!socket_.recv(*first)) {
    Reset();
    return Status::IOError("no answer from " + Quoted(endpoint_) + " within " +
                           std::to_string(timeout_ms_) + " ms (is peerbloomd running?)");
  }
  reply_body->clear();
  while (socket_.get(zmq::sockopt::rcvmore)) {
    zmq::message_t part;
    if (!socket_.recv(part)) break;
    if (reply_body->empty()) reply_body->assign(part.data<char>(), part.size());
  }
  return Status::Ok();
}

}  // namespace peerbloom::client
