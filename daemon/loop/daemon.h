// Daemon: peerbloomd's one event loop and the wiring of the services it runs. Each service
// owns its state and gives the loop its poll items, its deadline and a poll:
//
//   StoreService   data dir, counting filter, snapshots, publication     (store/)
//   FeedService    store.log and line feeds into the store, route log    (feeds/)
//   LookupService  control endpoint, who-has socket, their operations    (control/)
//   ObserveService stats, /metrics, loop counters, wall-clock watch      (observe/)
//   GossipEngine   membership and peers' summaries                       (lib/gossip)
//   Transport      peer sockets                                          (transport/)
//   RelayService   broadcasts and cluster purges                         (relay/)
//   DigestImporter Cache Digests of Squids without peerbloomd            (digests/)
//
// The keys (KeySet) are read at start and at each reload and pushed to the transport, the
// gossip engine and the relay alike.
//
// One thread: zmq::poll over every service's sockets and FIFOs, with a timeout that is the
// nearest deadline taken from the injected Clock. Signals only set flags the loop reads.
// Helper threads never touch the loop's state: the snapshot writer's, the purge worker's,
// the digest fetcher's, a store.log rebuild's and the /metrics server's, each handed a copy
// or serving text the loop renders.
//
// Thread-safety: none. Resource owner: not copyable.
#ifndef PEERBLOOM_DAEMON_LOOP_DAEMON_H_
#define PEERBLOOM_DAEMON_LOOP_DAEMON_H_

#include <csignal>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "daemon/config/config.h"
#include "daemon/control/lookup_service.h"
#include "daemon/digests/digest_importer.h"
#include "daemon/feeds/feed_service.h"
#include "daemon/loop/clock.h"
#include "daemon/loop/key_set.h"
#include "daemon/loop/sd_notify.h"
#include "daemon/observe/observe_service.h"
#include "daemon/relay/relay_service.h"
#include "daemon/store/store_service.h"
#include "daemon/transport/transport.h"
#include "peerbloom/gossip.h"

namespace peerbloom::daemon {

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
  const std::string& snapshot_path() const { return store_->snapshot_path(); }
  // Tests only: see SnapshotWriter::set_gate_for_test.
  void set_snapshot_gate_for_test(std::function<void()> gate);

 private:
  Status StartTransport(std::string* bound);
  Status StartGossip(uint64_t epoch);
  Status StartRelay();
  void Wire();
  void LogStarted(const std::string& bound) const;
  void Reload();
  bool ReloadKeys();
  int64_t NextDeadline(int64_t now) const;
  void HandlePeerFrames(const std::vector<zmq::pollitem_t>& items, int64_t now);
  void FlushOutgoing(int64_t now);
  void Notify(const std::string& state);
  void PingWatchdog(int64_t now);
  void ApplyFaults();

  Config config_;
  const Clock* clock_;
  zmq::context_t context_{1};
  KeySet keys_;
  std::unique_ptr<StoreService> store_;
  std::unique_ptr<FeedService> feeds_;
  std::unique_ptr<GossipEngine> engine_;
  std::unique_ptr<Transport> transport_;
  std::unique_ptr<RelayService> relay_;
  std::unique_ptr<DigestImporter> digests_;
  std::unique_ptr<LookupService> lookups_;
  std::unique_ptr<ObserveService> observe_;
  std::string advertise_;
  SdNotifier* notifier_ = nullptr;
  bool notify_failed_ = false;  // a failed notification is logged once
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_LOOP_DAEMON_H_
