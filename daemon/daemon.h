// Daemon: peerbloomd's one event loop and everything it owns.
//
//   feeds / control add+remove ──► LocalStore (counting filter) ──► SummaryBuilder
//        ──► GossipEngine.PublishFull/PublishDelta ──► Outgoing ──► Transport (DEALERs)
//   Transport (ROUTER) ──► GossipEngine.OnMessage          control who-has ──► store + engine
//
// One thread: zmq::poll over the peer, ZAP, monitor and control sockets and FIFO feeds, with
// a timeout that is the nearest deadline (gossip tick, publication, feed poll, snapshot)
// taken from the injected Clock. Signals only set flags the loop reads.
//
// Thread-safety: none. Resource owner: not copyable.
#ifndef PEERBLOOM_DAEMON_DAEMON_H_
#define PEERBLOOM_DAEMON_DAEMON_H_

#include <csignal>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "daemon/clock.h"
#include "daemon/config.h"
#include "daemon/control_server.h"
#include "daemon/digest_fetcher.h"
#include "daemon/feed.h"
#include "daemon/local_store.h"
#include "daemon/log_limiter.h"
#include "daemon/transport.h"
#include "peerbloom/client/curve_keys.h"
#include "peerbloom/gossip.h"

namespace peerbloom::daemon {

struct PublishStats {
  uint64_t full = 0;
  uint64_t deltas = 0;
  uint64_t immediate = 0;       // publications forced by the pending threshold
  uint64_t refused_deltas = 0;  // deltas the engine did not take (a full one followed)
  int64_t last_ms = 0;
};

struct SnapshotStats {
  uint64_t written = 0;
  uint64_t failed = 0;
  int64_t last_duration_ms = 0;
  int64_t last_unix_ms = 0;
  bool restored = false;
};

class Daemon {
 public:
  Daemon(Config config, const Clock* clock);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Locks the data dir, loads keys, restores the snapshot, binds sockets, publishes the first
  // summary. Any error is fatal for the process.
  Status Start();
  // Serves until *stop becomes non-zero; on *reload (cleared here) re-reads seeds and
  // authorized keys from the config file. Ends with a final snapshot.
  Status Run(volatile std::sig_atomic_t* stop, volatile std::sig_atomic_t* reload);
  // One pass of the loop, waiting at most `max_wait_ms`. For tests.
  void RunOnce(int64_t max_wait_ms);
  Status WriteSnapshotNow();

  const std::string& advertise() const { return advertise_; }
  const std::string& snapshot_path() const { return snapshot_path_; }

 private:
  Status LockDataDir();
  Status LoadKeys(std::set<std::string>* authorized);
  Status RestoreSnapshot(uint64_t* epoch);
  Status StartGossip(uint64_t epoch);
  void Reload();
  int64_t NextDeadline(int64_t now) const;
  void PollFeeds(const std::vector<zmq::pollitem_t>& items, size_t first, int64_t now);
  void MaybePublish(int64_t now);
  void Publish(int64_t now);
  void FlushOutgoing(int64_t now);
  void MaybeSnapshot(int64_t now);

  // Imported Squid digests (daemon_digests.cc).
  Status StartDigestFetcher();
  void ReloadDigestSources(const Config& fresh, int64_t now);
  void PollDigests(int64_t now);
  nlohmann::json DigestStats(int64_t now) const;

  // Control operations (daemon_control.cc).
  Status HandleControl(const nlohmann::json& request, std::string_view body, nlohmann::json* reply,
                       std::string* reply_body);
  Status WhoHas(const nlohmann::json& request, std::string_view body, nlohmann::json* reply,
                std::string* reply_body);
  Status Change(bool add, const nlohmann::json& request, std::string_view body,
                nlohmann::json* reply);
  Status RebuildOp(const nlohmann::json& request, nlohmann::json* reply);
  Status SummaryOp(const nlohmann::json& request, nlohmann::json* reply, std::string* reply_body);
  nlohmann::json Stats(int64_t now) const;
  nlohmann::json PeersJson(int64_t now) const;

  Config config_;
  const Clock* clock_;
  zmq::context_t context_{1};
  int lock_fd_ = -1;
  client::CurveKeyPair keys_;
  std::unique_ptr<LocalStore> store_;
  std::unique_ptr<GossipEngine> engine_;
  std::unique_ptr<Transport> transport_;
  std::unique_ptr<ControlServer> control_;
  std::vector<std::unique_ptr<Feed>> feeds_;
  std::unique_ptr<DigestFetcher> fetcher_;  // null without [[squid_digest]]
  LogLimiter import_log_;
  uint64_t imports_applied_ = 0;
  uint64_t imports_refused_ = 0;
  std::string advertise_;
  std::string snapshot_path_;
  int64_t start_ms_ = 0;
  int64_t next_publish_ms_ = 0;
  int64_t next_snapshot_ms_ = 0;
  int64_t next_feed_poll_ms_ = 0;
  bool feeds_behind_ = false;
  uint64_t reloads_ = 0;
  uint64_t changes_at_snapshot_ = 0;  // adds + removes when the last snapshot was written
  PublishStats publish_stats_;
  SnapshotStats snapshot_stats_;
  std::string key_scratch_;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_DAEMON_H_
