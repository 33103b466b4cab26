// MetricsServer: serves GET /metrics (Prometheus text format) on `metrics_listen`, on one
// thread of its own that waits on every connection at once (poll), with a small HTTP/1.x
// server (http_head.h) rather than a thread per request.
//
// The HTTP thread never touches the event loop's state. The loop renders the whole text
// (MetricsReport) every kRefreshMs and hands it over with Publish(); a scrape serves the
// latest text under a mutex, a shared_ptr copy, so a scrape sees values at most kRefreshMs
// (plus one turn of the loop) old and never blocks the loop. Before the first Publish, or if
// the loop stalls, scrapes get what was published last (503 before anything was).
//
// Bounds (docs/security.md, "Local listeners"): at most `max_connections` open; when full, a
// new connection evicts the one that has waited longest for a request (or, if all are being
// answered, the one whose answer is oldest). A request's head (at most 8 KiB; a body of at
// most 4 KiB is read and dropped) must arrive whole within request_timeout_ms of the
// connection's start or of the previous answer, and an answer must be taken within
// write_timeout_ms; otherwise the connection is closed. No connection, idle, slow or
// evicted, delays another's answer: the thread serves whichever is ready. At most 100
// requests per kept-alive connection.
//
// Thread-safety: Start, Publish and the destructor from one thread (the loop's); the HTTP
// thread only reads the published text; stats() from any thread. Resource owner: not
// copyable.
#ifndef PEERBLOOM_DAEMON_OBSERVE_METRICS_SERVER_H_
#define PEERBLOOM_DAEMON_OBSERVE_METRICS_SERVER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "daemon/control/descriptors.h"
#include "peerbloom/status.h"

namespace peerbloom::daemon {

struct MetricsServerOptions {
  size_t max_connections = 64;        // Default: 64 (the daemon gives ListenerLimits::metrics)
  int64_t request_timeout_ms = 5000;  // Default: 5 s for a request's head to arrive
  int64_t write_timeout_ms = 5000;    // Default: 5 s for an answer to be taken
};

struct MetricsServerStats {
  uint64_t scrapes = 0;       // answers to /metrics (200, or 503 before the first text)
  uint64_t connections = 0;   // accepted
  uint64_t evicted = 0;       // closed to make room for a new one: the table was full
  uint64_t timed_out = 0;     // closed: no whole request, or the answer not taken, in time
  uint64_t shed = 0;          // closed at once: the process was out of descriptors
  uint64_t bad_requests = 0;  // answered 400, 405 or 413 (or closed: a head over 8 KiB)
  uint64_t open = 0;          // connections open now
};

class MetricsServer {
 public:
  static constexpr int64_t kRefreshMs = 1000;
  static constexpr char kContentType[] = "text/plain; version=0.0.4; charset=utf-8";

  explicit MetricsServer(std::string listen, MetricsServerOptions options = {});
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Binds and starts serving; *bound receives "HOST:PORT" with the port bound.
  Status Start(std::string* bound);
  void Publish(std::string text);
  uint64_t scrapes() const { return counters_.scrapes; }
  MetricsServerStats stats() const;
  size_t max_connections() const { return options_.max_connections; }

 private:
  struct Connection;
  struct Counters {
    std::atomic<uint64_t> scrapes{0}, connections{0}, evicted{0}, timed_out{0}, shed{0},
        bad_requests{0}, open{0};
  };

  void Run();
  void Accept(std::vector<Connection>* connections, int64_t now);
  // False when the connection is to be closed.
  bool Read(Connection* c, int64_t now);
  bool Answer(Connection* c, int64_t now);
  bool StartAnswer(Connection* c, int64_t now);
  bool Write(Connection* c, int64_t now);
  std::shared_ptr<const std::string> Text();

  const std::string listen_;
  const MetricsServerOptions options_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;           // an eventfd: the destructor's stop
  SheddingAcceptor acceptor_;  // the HTTP thread's
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::shared_ptr<const std::string> text_;  // guarded by mu_
  Counters counters_;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_OBSERVE_METRICS_SERVER_H_
