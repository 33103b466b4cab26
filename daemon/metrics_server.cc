// The /metrics endpoint on cpp-httplib. See metrics_server.h for the threading contract.
#include "daemon/metrics_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <charconv>
#include <chrono>

namespace peerbloom::daemon {
namespace {

constexpr size_t kWorkerThreads = 2;
constexpr size_t kMaxRequestBody = 4096;
constexpr time_t kIoTimeoutSeconds = 5;
constexpr size_t kKeepAliveRequests = 100;

}  // namespace

Status ParseListenAddress(std::string_view text, std::string* host, int* port) {
  const Status bad =
      Status::InvalidArgument("'" + std::string(text) + "' is not HOST:PORT or [IPV6]:PORT");
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return bad;
  std::string_view h = text.substr(0, colon);
  const std::string_view p = text.substr(colon + 1);
  if (h.front() == '[') {
    if (h.size() < 3 || h.back() != ']') return bad;
    h = h.substr(1, h.size() - 2);
  } else if (h.find(':') != std::string_view::npos) {
    return bad;
  }
  int value = -1;
  const auto r = std::from_chars(p.data(), p.data() + p.size(), value);
  if (p.empty() || r.ec != std::errc() || r.ptr != p.data() + p.size() || value < 0 ||
      value > 65535) {
    return bad;
  }
  *host = std::string(h);
  *port = value;
  return Status::Ok();
}

MetricsServer::MetricsServer(std::string listen)
    : listen_(std::move(listen)), server_(std::make_unique<httplib::Server>()) {}

MetricsServer::~MetricsServer() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

Status MetricsServer::Start(std::string* bound) {
  std::string host;
  int port = 0;
  PEERBLOOM_RETURN_IF_ERROR(ParseListenAddress(listen_, &host, &port));
  server_->new_task_queue = [] { return new httplib::ThreadPool(kWorkerThreads); };
  server_->set_payload_max_length(kMaxRequestBody);
  server_->set_read_timeout(kIoTimeoutSeconds, 0);
  server_->set_write_timeout(kIoTimeoutSeconds, 0);
  server_->set_keep_alive_max_count(kKeepAliveRequests);
  // The library's default also sets SO_REUSEPORT, which would let a second daemon bind the
  // same port and take half the scrapes: SO_REUSEADDR only (restarts need not wait).
  server_->set_socket_options([](int sock) {
    int yes = 1;
    (void)setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    std::shared_ptr<const std::string> text;
    {
      std::lock_guard<std::mutex> lock(mu_);
      text = text_;
    }
    ++scrapes_;
    if (!text) {
      res.status = 503;
      res.set_content("no metrics yet\n", "text/plain");
      return;
    }
    res.set_content(*text, kContentType);
  });
  if (port == 0) {
    port = server_->bind_to_any_port(host);
  } else if (!server_->bind_to_port(host, port)) {
    port = -1;
  }
  if (port <= 0) {
    return Status::IOError("cannot listen for metrics on '" + listen_ +
                           "' (address in use or not local)");
  }
  *bound =
      (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
  thread_ = std::thread([this] {
    server_->listen_after_bind();
    listen_returned_ = true;
  });
  // Server::stop() only stops a server that is running: wait for the thread to get there,
  // or a stop in the destructor could come first and leave the thread in accept() forever.
  while (!server_->is_running() && !listen_returned_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return Status::Ok();
}

void MetricsServer::Publish(std::string text) {
  auto shared = std::make_shared<const std::string>(std::move(text));
  std::lock_guard<std::mutex> lock(mu_);
  text_ = std::move(shared);
}

}  // namespace peerbloom::daemon
