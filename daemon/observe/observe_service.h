// ObserveService: what the daemon shows about itself and what it notices of its host. It
// owns the stats answers (StatsReport) and /metrics (MetricsReport rendered on the loop every
// MetricsServer::kRefreshMs, served by the MetricsServer's threads), the loop's traffic and
// latency counters (LoopMetrics), the uptime and reload counts, and the watch on the wall
// clock (a step is counted and logged; timers never read it).
//
// Thread-safety: none (the loop's thread); the metrics server's threads copy finished text.
#ifndef PEERBLOOM_DAEMON_OBSERVE_OBSERVE_SERVICE_H_
#define PEERBLOOM_DAEMON_OBSERVE_OBSERVE_SERVICE_H_

#include <cstdint>
#include <memory>

#include "daemon/config/config.h"
#include "daemon/observe/log_limiter.h"
#include "daemon/observe/loop_metrics.h"
#include "daemon/observe/metrics_report.h"
#include "daemon/observe/metrics_server.h"
#include "daemon/observe/stats_report.h"
#include "daemon/store/local_files.h"

namespace peerbloom::daemon {

class ObserveService {
 public:
  // `config` must outlive the service; `start_ms` is the loop's clock at the start.
  ObserveService(const Config& config, int64_t start_ms);
  ~ObserveService();
  ObserveService(const ObserveService&) = delete;
  ObserveService& operator=(const ObserveService&) = delete;

  // The parts the stats and /metrics read, this service's own counters added. Call once
  // every part exists.
  void Wire(const DaemonParts& parts, const Transport& transport, const ControlServer& control,
            const std::unique_ptr<WhoHasSocket>& who_has_socket, const DigestImporter& digests,
            const StoreService& store, const RelayService& relay,
            const std::unique_ptr<WhoHasSocket>& route_socket, const NginxRoutes* nginx_routes);
  // Binds metrics_listen (nothing when it is empty) with at most `max_connections`, writes
  // the bound address to `dir`'s metrics.endpoint and publishes the first text. After Wire.
  Status StartMetrics(size_t max_connections, const DataDir& dir, int64_t now);

  // One turn of the loop: the wall clock watched, /metrics rendered when due.
  void Poll(int64_t now);
  int64_t NextDeadline() const;
  void CountReload() { ++reloads_; }

  LoopMetrics& loop_metrics() { return loop_metrics_; }
  const StatsReport& stats() const { return *stats_; }

 private:
  void WatchWallClock(int64_t now);

  const Config& config_;
  int64_t start_ms_;
  uint64_t reloads_ = 0;
  LoopMetrics loop_metrics_;
  FaultStats faults_;
  std::unique_ptr<StatsReport> stats_;
  std::unique_ptr<MetricsReport> metrics_;
  std::unique_ptr<MetricsServer> metrics_server_;  // null without metrics_listen
  int64_t next_metrics_ms_ = 0;
  int64_t wall_minus_mono_ms_ = 0;  // WallClockMs() - now at the last turn
  bool wall_minus_mono_set_ = false;
  LogLimiter clock_log_{1, 60 * 1000};  // clock jumps
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_OBSERVE_OBSERVE_SERVICE_H_
