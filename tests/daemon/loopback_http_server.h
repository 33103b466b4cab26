// LoopbackHttpServer: a one-connection-at-a-time HTTP server on 127.0.0.1 (port picked by the
// OS) for the tests of the HTTP client and the digest fetcher. For each connection it reads
// the request head and asks `respond(request)` what to do: bytes to send before closing, ""
// to close without a word, nullopt to stay silent until the client closes (or 60 s pass).
#ifndef PEERBLOOM_TESTS_DAEMON_LOOPBACK_HTTP_SERVER_H_
#define PEERBLOOM_TESTS_DAEMON_LOOPBACK_HTTP_SERVER_H_

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace peerbloom::daemon {

class LoopbackHttpServer {
 public:
  using Respond = std::function<std::optional<std::string>(const std::string& request)>;

  explicit LoopbackHttpServer(Respond respond) : respond_(std::move(respond)) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    EXPECT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len), 0);
    EXPECT_EQ(listen(listen_fd_, 8), 0);
    EXPECT_EQ(getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { AcceptLoop(); });
  }
  ~LoopbackHttpServer() {
    shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
    thread_.join();
    close(listen_fd_);
  }
  LoopbackHttpServer(const LoopbackHttpServer&) = delete;
  LoopbackHttpServer& operator=(const LoopbackHttpServer&) = delete;

  uint16_t port() const { return port_; }
  std::string last_request() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_request_;
  }

 private:
  void AcceptLoop() {
    for (;;) {
      const int fd = accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      Serve(fd);
      close(fd);
    }
  }
  void Serve(int fd) {
    std::string request;
    char buf[4096];
    while (request.find("\r\n\r\n") == std::string::npos && request.size() < 65536) {
      const ssize_t n = recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) return;
      request.append(buf, static_cast<size_t>(n));
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_request_ = request;
    }
    const std::optional<std::string> response = respond_(request);
    if (!response) {
      pollfd p{fd, POLLIN, 0};
      (void)poll(&p, 1, 60000);
      return;
    }
    (void)send(fd, response->data(), response->size(), MSG_NOSIGNAL);
  }

  const Respond respond_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::string last_request_;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_TESTS_DAEMON_LOOPBACK_HTTP_SERVER_H_
