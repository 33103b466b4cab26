// MetricsServer: serves GET /metrics (Prometheus text format) on `metrics_listen`, through
// cpp-httplib on threads of its own.
//
// The HTTP threads never touch the event loop's state. The loop renders the whole text
// (MetricsReport) every kRefreshMs and hands it over with Publish(); a scrape serves the
// latest text under a mutex, a shared_ptr copy, so a scrape sees values at most kRefreshMs
// (plus one turn of the loop) old and never blocks the loop. Before the first Publish, or if
// the loop stalls, scrapes get what was published last (503 before anything was).
//
// Bounds: 2 worker threads, request bodies refused over 4 KiB, reads and writes time out after
// 5 s, at most 100 requests per kept-alive connection.
//
// Thread-safety: Start, Publish and the destructor from one thread (the loop's); the HTTP
// threads only read the published text. Resource owner: not copyable.
#ifndef PEERBLOOM_DAEMON_METRICS_SERVER_H_
#define PEERBLOOM_DAEMON_METRICS_SERVER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "peerbloom/status.h"

namespace httplib {
class Server;
}

namespace peerbloom::daemon {

// "HOST:PORT" or "[IPV6]:PORT", PORT in 0..65535 (0: any free port). InvalidArgument naming
// the value otherwise.
Status ParseListenAddress(std::string_view text, std::string* host, int* port);

class MetricsServer {
 public:
  static constexpr int64_t kRefreshMs = 1000;
  static constexpr char kContentType[] = "text/plain; version=0.0.4; charset=utf-8";

  explicit MetricsServer(std::string listen);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Binds and starts serving; *bound receives "HOST:PORT" with the port bound.
  Status Start(std::string* bound);
  void Publish(std::string text);
  uint64_t scrapes() const { return scrapes_; }

 private:
  const std::string listen_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::mutex mu_;
  std::shared_ptr<const std::string> text_;  // guarded by mu_
  std::atomic<uint64_t> scrapes_{0};
  std::atomic<bool> listen_returned_{false};
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_METRICS_SERVER_H_
