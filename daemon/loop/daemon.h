// Daemon: peerbloomd's one event loop and the wiring of everything it owns. The control
// operations (ControlOps), the stats answers (StatsReport) and the Squid digest imports
// (DigestImporter) are their own classes, given references to the parts they read.
//
//   feeds / control add+remove ──► LocalStore (counting filter) ──► SummaryBuilder
//        ──► GossipEngine.PublishFull/PublishDelta ──► Outgoing ──► Transport (DEALERs)
//   Transport (ROUTER) ──► GossipEngine.OnMessage          control who-has ──► store + engine
//
// One thread: zmq::poll over the peer, ZAP, monitor and control sockets, the who-has socket and
// its connections and FIFO feeds, with
// a timeout that is the nearest deadline (gossip tick, publication, feed poll, snapshot)
// taken from the injected Clock. Signals only set flags the loop reads. Two kinds of helper
// threads never touch the loop's state: the digest fetcher's worker (digest_fetcher.h) and
// the /metrics server's (metrics_server.h), which serves text the loop renders every second.
//
// Thread-safety: none. Resource owner: not copyable.
#ifndef PEERBLOOM_DAEMON_DAEMON_H_
#define PEERBLOOM_DAEMON_DAEMON_H_

#include <chrono>
#include <csignal>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "daemon/config/config.h"
#include "daemon/control/control_ops.h"
#include "daemon/control/control_server.h"
#include "daemon/control/who_has_socket.h"
#include "daemon/digests/digest_importer.h"
#include "daemon/feeds/feed.h"
#include "daemon/feeds/route_log_feed.h"
#include "daemon/loop/clock.h"
#include "daemon/loop/sd_notify.h"
#include "daemon/observe/log_limiter.h"
#include "daemon/observe/loop_metrics.h"
#include "daemon/observe/metrics_report.h"
#include "daemon/observe/metrics_server.h"
#include "daemon/observe/stats_report.h"
#include "daemon/relay/relay_service.h"
#include "daemon/store/local_files.h"
#include "daemon/store/local_store.h"
#include "daemon/store/snapshot_writer.h"
#include "daemon/transport/transport.h"
#include "peerbloom/client/curve_keys.h"
#include "peerbloom/gossip.h"
#include "peerbloom/publish_policy.h"
#include "peerbloom/who_has_batch.h"

namespace peerbloom::daemon {

// The local store's settings in `config`: what a daemon of that config builds (and what a
// snapshot it wrote was built with).
LocalStoreOptions StoreOptionsOf(const Config& config);

class Daemon {
 public:
  Daemon(Config config, const Clock* clock);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Locks the data dir, loads keys, restores the snapshot, binds sockets, publishes the first
  // summary. Any error is fatal for the process.
  Status Start();
  // Serves until *stop becomes non-zero; on *reload (cleared here) re-reads seeds,
  // authorized keys, Squid digest sources and log_level from the config file. Ends with a final
  // snapshot. Tells `notifier` (when set) READY at the start, RELOADING/READY around a reload,
  // STOPPING at the end, and pings its watchdog from the loop.
  Status Run(volatile std::sig_atomic_t* stop, volatile std::sig_atomic_t* reload);
  // One pass of the loop, waiting at most `max_wait_ms`. For tests.
  void RunOnce(int64_t max_wait_ms);
  Status WriteSnapshotNow();

  // systemd notifications (sd_notify.h); the daemon does not own it. Null: none.
  void set_notifier(SdNotifier* notifier) { notifier_ = notifier; }

  const std::string& advertise() const { return advertise_; }
  const std::string& snapshot_path() const { return snapshot_path_; }
  // Tests only: see SnapshotWriter::set_gate_for_test.
  void set_snapshot_gate_for_test(std::function<void()> gate);

 private:
  Status LockDataDir();
  Status SecureControl();
  // The allow-list: key -> node id for the transport, nodes for the gossip engine.
  Status LoadKeys(std::map<std::string, std::string>* authorized, std::vector<ListedNode>* listed);
  Status RestoreSnapshot(uint64_t* epoch);
  // Why a snapshot of `g`, not the geometry this version sizes for these settings, is still
  // this node's ("" when it is not): an earlier version's sizing rule or default gave `g`.
  std::string KeptGeometryReason(const Geometry& g) const;
  // Gives the store's (still empty) filter the snapshot's geometry `g`, counts and logs it.
  Status KeepSnapshotGeometry(const Geometry& g, const std::string& reason);
  Status StartTransport(std::map<std::string, std::string> authorized, std::string* bound);
  Status StartLocalListeners();
  Status StartGossip(uint64_t epoch);
  Status StartRelay();
  void WireControl();
  void Reload();
  int64_t NextDeadline(int64_t now) const;
  void PollFeeds(const std::vector<zmq::pollitem_t>& items, size_t first, int64_t now);
  void MaybeStartNewEpoch(int64_t now);
  void PollRouteLog(int64_t now);
  void MaybePublish(int64_t now);
  void Publish(int64_t now);
  void FlushOutgoing(int64_t now);
  void MaybeSnapshot(int64_t now);
  void Notify(const std::string& state);
  void PingWatchdog(int64_t now);
  Status StartMetrics();
  void MaybePublishMetrics(int64_t now);
  SnapshotState TakeSnapshotState();
  void ApplyFaults();
  int64_t WallMs() const;
  // Accounts a finished snapshot write (stats, the rate-limited failure log line).
  void SnapshotFinished(const Status& s, uint64_t changes, int64_t started_ms,
                        int64_t written_unix_ms);
  void TakeSnapshotResult();
  void WatchWallClock(int64_t now);

  // Control operations on the store (daemon_control.cc); ControlOps (control_ops.h) holds
  // the table of operations and calls these.
  Status WhoHas(const nlohmann::json& request, std::string_view body, nlohmann::json* reply,
                std::string* reply_body);
  Status Change(bool add, const nlohmann::json& request, std::string_view body,
                nlohmann::json* reply);
  // Answers the who-has socket's lines (node ids per line).
  void WhoHasLines(std::string_view lines, std::string* out);
  void WhoHasLookups(std::string_view lines, std::string* out);
  // Looks up each line of `body` (URLs, or key tokens when `keys`), answers in order to `sink`.
  void RunWhoHas(std::string_view body, bool keys, const WhoHasBatch::Sink& sink);
  // Polls without sleeping while the busy-poll window after the last request lasts, then
  // waits up to `wait_ms`. What zmq::poll returns.
  int Poll(std::vector<zmq::pollitem_t>* items, int64_t wait_ms);
  // Serves the control requests and who-has lines waiting now, without a poll: the loop calls
  // it between peer frames, so a lookup never waits for more than one frame's handling.
  void ServeLookupsNow();
  // Serves what the poll found on the control endpoint and the who-has socket.
  void ServeLookups(const zmq::pollitem_t* control_items, size_t control_count,
                    const zmq::pollitem_t* socket_items, size_t socket_count, int64_t now);
  void ServedRequests(size_t count);

  Config config_;
  const Clock* clock_;
  zmq::context_t context_{1};
  std::unique_ptr<DataDir> data_dir_;
  int lock_fd_ = -1;
  client::CurveKeyPair keys_;
  std::vector<ListedNode> listed_;  // the allow-list's nodes (CURVE on)
  std::unique_ptr<LocalStore> store_;
  std::unique_ptr<GossipEngine> engine_;
  std::unique_ptr<Transport> transport_;
  // Connections the local listeners may hold, from RLIMIT_NOFILE at start (descriptors.h).
  ListenerLimits listener_limits_;
  std::unique_ptr<ControlServer> control_;
  std::unique_ptr<WhoHasSocket> who_has_socket_;  // null when `who_has_socket` is ""
  // Until when (steady clock) the loop polls without sleeping: control_busy_poll after the
  // last request answered.
  std::chrono::steady_clock::time_point busy_poll_until_{};
  std::string who_has_key_scratch_;
  std::vector<std::unique_ptr<Feed>> feeds_;
  std::unique_ptr<DigestImporter> digests_;
  std::unique_ptr<StatsReport> stats_;
  std::unique_ptr<ControlOps> ops_;
  LoopMetrics loop_metrics_;
  std::unique_ptr<MetricsReport> metrics_;
  std::unique_ptr<MetricsServer> metrics_server_;  // null without metrics_listen
  int64_t next_metrics_ms_ = 0;
  std::unique_ptr<RelayService> relay_;  // broadcast relay (relay_service.h)
  // Signed origins (origin_keys.h), shared by the gossip engine and the relay.
  std::shared_ptr<const OriginSigner> signer_;
  std::shared_ptr<const SignKeyRing> sign_keys_;
  std::string advertise_;
  std::string snapshot_path_;
  int64_t start_ms_ = 0;
  PublishPolicy publish_policy_;
  int64_t next_snapshot_ms_ = 0;
  int64_t next_feed_poll_ms_ = 0;
  bool feeds_behind_ = false;
  uint64_t reloads_ = 0;
  uint64_t changes_at_snapshot_ = 0;  // adds + removes when the last snapshot was written
  PublishStats publish_stats_;
  SnapshotStats snapshot_stats_;
  RouteOutcomes routes_;
  std::unique_ptr<RouteLogFeed> route_log_;  // null without squid_route_log
  int64_t next_route_log_poll_ms_ = 0;
  HelperReports helper_reports_;
  std::unique_ptr<SnapshotWriter> snapshot_writer_;
  struct {
    uint64_t changes = 0;
    int64_t started_ms = 0;
    int64_t written_unix_ms = 0;
  } snapshot_under_way_;
  uint64_t snapshot_failures_in_row_ = 0;
  FaultStats fault_stats_;
  int64_t wall_minus_mono_ms_ = 0;  // WallMs() - clock_->NowMs() at the last turn
  bool wall_minus_mono_set_ = false;
  LogLimiter clock_log_{1, 60 * 1000};          // clock jumps (daemon.cc)
  LogLimiter snapshot_log_{1, 10 * 60 * 1000};  // snapshot failures (daemon.cc)
  std::string key_scratch_;
  SdNotifier* notifier_ = nullptr;
  bool notify_failed_ = false;  // a failed notification is logged once
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_DAEMON_H_
