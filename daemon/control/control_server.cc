// Envelope handling only; the operations live in control_ops.cc and lookup_service.cc.
#include "daemon/control/control_server.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include "peerbloom/client/control_protocol.h"
#include "peerbloom/client/control_token.h"
#include "peerbloom/escape.h"

namespace peerbloom::daemon {
namespace {
constexpr int kRequestsPerWakeup = 64;
constexpr size_t kMaxFrames = 8;
// Bodies up to this much over the limit are still received, to be answered with an error
// rather than a closed connection; larger frames close it (ZMQ_MAXMSGSIZE).
constexpr size_t kBodySlackBytes = size_t{16} << 20;
}  // namespace

ControlServer::ControlServer(zmq::context_t* context, std::string endpoint,
                             size_t max_tcp_connections)
    : endpoint_(std::move(endpoint)) {
  if (endpoint_.rfind("tcp://", 0) == 0) {
    tcp_ = std::make_unique<ControlTcp>(endpoint_, max_tcp_connections);
  } else {
    socket_ = std::make_unique<zmq::socket_t>(*context, zmq::socket_type::router);
  }
}

ControlServer::~ControlServer() = default;

Status ControlServer::Start() {
  if (tcp_) return tcp_->Start();
  try {
    socket_->set(zmq::sockopt::linger, 0);
    socket_->set(zmq::sockopt::maxmsgsize,
                 static_cast<int64_t>(client::kMaxControlBodyBytes + kBodySlackBytes));
    socket_->set(zmq::sockopt::sndhwm, 1000);
    const bool ipc = endpoint_.rfind("ipc://", 0) == 0;
    const mode_t old_mask = ipc ? ::umask(077) : 0;
    try {
      socket_->bind(endpoint_);
    } catch (...) {
      if (ipc) ::umask(old_mask);
      throw;
    }
    if (ipc) {
      ::umask(old_mask);
      if (::chmod(endpoint_.substr(6).c_str(), 0600) != 0) {
        return Status::IOError("cannot chmod control socket '" + endpoint_.substr(6) + "'");
      }
    }
  } catch (const zmq::error_t& e) {
    return Status::IOError("cannot bind control endpoint '" + endpoint_ + "': " + e.what());
  }
  return Status::Ok();
}

void ControlServer::AppendPollItems(std::vector<zmq::pollitem_t>* items) {
  if (tcp_) {
    tcp_->AppendPollItems(items);
  } else {
    items->push_back({socket_->handle(), 0, ZMQ_POLLIN, 0});
  }
}

int ControlServer::Process(const zmq::pollitem_t* items, size_t count, int64_t now_ms,
                           const Handler& handler) {
  if (tcp_) {
    return tcp_->Process(
        items, count, [this](std::string_view header) { return Admits(header); },
        [&](const ZmtpRequest& r, std::string* head, std::string* body) {
          AnswerTcp(r, now_ms, handler, head, body);
        });
  }
  if (!(items[0].revents & ZMQ_POLLIN)) return 0;
  return ServeReady(now_ms, handler);
}

int ControlServer::ServeReady(int64_t now_ms, const Handler& handler) {
  if (tcp_) {
    return tcp_->ServeReady([this](std::string_view header) { return Admits(header); },
                            [&](const ZmtpRequest& r, std::string* head, std::string* body) {
                              AnswerTcp(r, now_ms, handler, head, body);
                            });
  }
  int served = 0;
  try {
    for (; served < kRequestsPerWakeup; ++served) {
      if (!ServeOne(now_ms, handler)) return served;
    }
  } catch (const zmq::error_t& e) {
    if (e.num() != EINTR && e.num() != ETERM) spdlog::error("control endpoint: {}", e.what());
  } catch (const std::exception& e) {
    // Only the reply's own encoding or sending is left to fail here (memory): that request
    // goes unanswered, the next ones are served.
    spdlog::error("control endpoint: {}", EscapeBytes(e.what()));
  }
  return served;
}

ControlTcpStats ControlServer::tcp_stats() const {
  return tcp_ ? tcp_->stats() : ControlTcpStats();
}

size_t ControlServer::open_connections() const { return tcp_ ? tcp_->open_connections() : 0; }

size_t ControlServer::max_connections() const { return tcp_ ? tcp_->max_connections() : 0; }

Status ParseControlHeader(std::string_view text, nlohmann::json* header) {
  if (text.size() > client::kMaxControlHeaderBytes) {
    return Status::InvalidArgument("request header larger than " +
                                   std::to_string(client::kMaxControlHeaderBytes) + " bytes");
  }
  // JSON text is UTF-8: say so rather than only "not JSON". The parser refuses such bytes
  // and \u escapes of lone surrogates too, so every string of a parsed header is UTF-8.
  if (!IsValidUtf8(text)) return Status::InvalidArgument("request header is not valid UTF-8");
  *header = nlohmann::json::parse(text, nullptr, false);
  if (header->is_discarded()) return Status::InvalidArgument("request header is not valid JSON");
  if (!header->is_object() || !header->contains("op") || !(*header)["op"].is_string()) {
    return Status::InvalidArgument("request header must be a JSON object with an 'op'");
  }
  return Status::Ok();
}

bool ControlServer::Admits(std::string_view header) const {
  nlohmann::json parsed;
  if (!ParseControlHeader(header, &parsed).ok()) return false;
  if (token_.empty()) return true;
  const auto sent = parsed.find(client::kTokenField);
  return sent != parsed.end() && sent->is_string() &&
         client::TokenMatches(sent->get_ref<const std::string&>(), token_);
}

Status ControlServer::Answer(const ControlRequest& request, int64_t now_ms, const Handler& handler,
                             nlohmann::json* reply, std::string* reply_body) {
  if (!request.envelope_ok) {
    ++stats_.malformed;
    return Status::InvalidArgument("a request is [empty delimiter][header][body?] frames");
  }
  nlohmann::json header;
  Status parsed =
      request.header_over
          ? Status::InvalidArgument("request header larger than " +
                                    std::to_string(client::kMaxControlHeaderBytes) + " bytes")
          : ParseControlHeader(request.header, &header);
  if (!parsed.ok()) {
    ++stats_.malformed;
    return parsed;
  }
  if (!token_.empty()) {
    const auto sent = header.find(client::kTokenField);
    if (sent == header.end() || !sent->is_string() ||
        !client::TokenMatches(sent->get_ref<const std::string&>(), token_)) {
      ++stats_.unauthorized;
      return Status::InvalidArgument("missing or wrong control token");
    }
    header.erase(std::string(client::kTokenField));
  }
  if (request.body_size > client::kMaxControlBodyBytes) {
    ++stats_.malformed;
    return Status::InvalidArgument("request body larger than " +
                                   std::to_string(client::kMaxControlBodyBytes) + " bytes");
  }
  try {
    return handler(header, request.body, reply, reply_body);
  } catch (const std::exception& e) {
    ++stats_.internal_errors;
    const std::string message = "internal error in op " +
                                QuoteBytes(header["op"].get_ref<const std::string&>()) + ": " +
                                EscapeBytes(e.what());
    uint64_t suppressed = 0;
    if (internal_log_.Allow(now_ms, &suppressed)) {
      spdlog::error("control: {} ({} similar lines suppressed)", message, suppressed);
    }
    // The code is not sent, only the message; the operation could not be carried out.
    return Status::Corruption(message);
  }
}

std::string ControlServer::ReplyHead(const Status& status, nlohmann::json* reply,
                                     std::string* reply_body) {
  if (!status.ok()) {
    ++stats_.errors;
    *reply = {{"ok", false}, {"error", status.message()}};
    reply_body->clear();
  } else {
    (*reply)["ok"] = true;
  }
  // Replacing bytes that are not UTF-8 (U+FFFD) keeps dump() from throwing should some
  // string of a reply have missed escaping.
  return reply->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool ControlServer::ServeOne(int64_t now_ms, const Handler& handler) {
  std::vector<zmq::message_t> frames;
  do {
    zmq::message_t part;
    if (!socket_->recv(part, zmq::recv_flags::dontwait)) break;
    if (frames.size() < kMaxFrames) frames.push_back(std::move(part));
  } while (socket_->get(zmq::sockopt::rcvmore));
  if (frames.empty()) return false;
  ++stats_.requests;
  // [identity][empty delimiter][header][body?]
  ControlRequest request;
  request.envelope_ok = frames.size() >= 3 && frames.size() <= 4 && frames[1].size() == 0;
  if (request.envelope_ok) request.header = frames[2].to_string_view();
  if (frames.size() == 4) {
    request.body = frames[3].to_string_view();
    request.body_size = request.body.size();
  }
  nlohmann::json reply;
  std::string reply_body;
  const Status status = Answer(request, now_ms, handler, &reply, &reply_body);
  const std::string head = ReplyHead(status, &reply, &reply_body);
  socket_->send(frames[0], zmq::send_flags::sndmore | zmq::send_flags::dontwait);
  socket_->send(zmq::message_t(), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
  const auto more = reply_body.empty() ? zmq::send_flags::none : zmq::send_flags::sndmore;
  socket_->send(zmq::buffer(head), more | zmq::send_flags::dontwait);
  if (!reply_body.empty()) {
    socket_->send(zmq::message_t(reply_body.data(), reply_body.size()), zmq::send_flags::dontwait);
  }
  return true;
}

void ControlServer::AnswerTcp(const ZmtpRequest& r, int64_t now_ms, const Handler& handler,
                              std::string* head, std::string* body) {
  ++stats_.requests;
  ControlRequest request;
  request.envelope_ok = r.delimiter_empty && r.frames >= 2 && r.frames <= 3;
  request.header = r.header;
  request.header_over = r.header_over;
  request.body = r.body;
  request.body_size = r.body_size;
  nlohmann::json reply;
  try {
    const Status status = Answer(request, now_ms, handler, &reply, body);
    *head = ReplyHead(status, &reply, body);
  } catch (const std::exception& e) {
    spdlog::error("control endpoint: {}", EscapeBytes(e.what()));
    *head = ReplyHead(Status::Corruption("internal error: " + EscapeBytes(e.what())), &reply, body);
  }
}

}  // namespace peerbloom::daemon
