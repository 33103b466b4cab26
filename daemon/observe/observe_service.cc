#include "daemon/observe/observe_service.h"

#include <spdlog/spdlog.h>

#include <climits>
#include <cstdlib>
#include <string>

namespace peerbloom::daemon {
namespace {

// The wall clock moving this much more or less than the monotonic clock between two turns of
// the loop (at most a second apart) is a step, not NTP slewing (at most 0.5 ms per second).
constexpr int64_t kClockJumpMs = 1000;

}  // namespace

ObserveService::ObserveService(const Config& config, int64_t start_ms)
    : config_(config), start_ms_(start_ms) {}

// The server's threads first: they serve text, but stop them before what they could read.
ObserveService::~ObserveService() { metrics_server_.reset(); }

void ObserveService::Wire(const DaemonParts& parts, const Transport& transport,
                          const ControlServer& control,
                          const std::unique_ptr<WhoHasSocket>& who_has_socket,
                          const DigestImporter& digests, const StoreService& store,
                          const RelayService& relay,
                          const std::unique_ptr<WhoHasSocket>& route_socket,
                          const NginxRoutes* nginx_routes) {
  const StatsSources sources{parts,
                             start_ms_,
                             transport,
                             control,
                             digests,
                             store.publish_stats(),
                             store.snapshot_stats(),
                             store.snapshot_path(),
                             reloads_,
                             relay,
                             faults_,
                             who_has_socket,
                             metrics_server_,
                             route_socket,
                             nginx_routes};
  stats_ = std::make_unique<StatsReport>(sources);
  metrics_ = std::make_unique<MetricsReport>(sources, loop_metrics_);
}

Status ObserveService::StartMetrics(size_t max_connections, const DataDir& dir, int64_t now) {
  if (config_.metrics_listen.empty()) return Status::Ok();
  MetricsServerOptions options;
  options.max_connections = max_connections;
  metrics_server_ = std::make_unique<MetricsServer>(config_.metrics_listen, options);
  std::string bound;
  PEERBLOOM_RETURN_IF_ERROR(metrics_server_->Start(&bound));
  PEERBLOOM_RETURN_IF_ERROR(dir.WriteFile("metrics.endpoint", bound + "\n"));
  Poll(now);
  spdlog::info("serving metrics on http://{}/metrics", bound);
  return Status::Ok();
}

// Rendering reads every part, so it runs here on the loop's thread; the server's threads
// only copy the finished text.
void ObserveService::Poll(int64_t now) {
  WatchWallClock(now);
  if (!metrics_server_ || now < next_metrics_ms_) return;
  next_metrics_ms_ = now + MetricsServer::kRefreshMs;
  metrics_server_->Publish(metrics_->Render(now, WallClockMs(config_)));
}

int64_t ObserveService::NextDeadline() const {
  return metrics_server_ ? next_metrics_ms_ : INT64_MAX;
}

// Timers do not read the wall clock, so a step changes nothing but epochs' names and
// snapshots' dates; it is counted and logged (at most once a minute) for whoever wonders why
// the log's times jumped.
void ObserveService::WatchWallClock(int64_t now) {
  const int64_t offset = WallClockMs(config_) - now;
  const int64_t step = offset - wall_minus_mono_ms_;
  const bool first = !wall_minus_mono_set_;
  wall_minus_mono_ms_ = offset;
  wall_minus_mono_set_ = true;
  if (first || std::abs(step) < kClockJumpMs) return;
  ++faults_.clock_jumps;
  faults_.last_clock_jump_ms = step;
  uint64_t suppressed = 0;
  if (clock_log_.Allow(now, &suppressed)) {
    spdlog::warn("wall clock stepped by {} ms, timers unaffected ({} steps so far)", step,
                 faults_.clock_jumps);
  }
}

}  // namespace peerbloom::daemon
