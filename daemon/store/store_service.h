// StoreService: the node's own state and the files that keep it. It holds the data dir and
// its lock, the counting filter with its summary builder (LocalStore), the snapshot (restored
// at start, written every snapshot_interval on the writer's thread and once at stop) and the
// publication of the summary to the gossip engine under the publish policy. The loop calls
// Poll once a turn and waits no longer than NextDeadline.
//
// Thread-safety: none (the loop's thread); the writer's thread works on a copy it is handed.
#ifndef PEERBLOOM_DAEMON_STORE_STORE_SERVICE_H_
#define PEERBLOOM_DAEMON_STORE_STORE_SERVICE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/observe/log_limiter.h"
#include "daemon/store/local_files.h"
#include "daemon/store/local_store.h"
#include "daemon/store/snapshot.h"
#include "daemon/store/snapshot_writer.h"
#include "peerbloom/gossip.h"
#include "peerbloom/publish_policy.h"
#include "peerbloom/status.h"

namespace peerbloom::daemon {

// The local store's settings in `config`: what a daemon of that config builds (and what a
// snapshot it wrote was built with).
LocalStoreOptions StoreOptionsOf(const Config& config);

struct PublishStats {
  uint64_t full = 0;
  uint64_t deltas = 0;
  uint64_t immediate = 0;       // publications of a full batch (publish_batch, _threshold)
  uint64_t refused_deltas = 0;  // deltas the engine did not take (a full one followed)
  uint64_t new_epochs = 0;      // epochs started because peers knew this node in a higher one
  int64_t last_ms = 0;
};

struct SnapshotStats {
  uint64_t written = 0;
  uint64_t failed = 0;
  uint64_t failure_episodes = 0;  // runs of failed writes (a full or read-only disk)
  bool failing = false;           // the last write failed
  int64_t last_duration_ms = 0;
  int64_t last_unix_ms = 0;
  bool restored = false;
  // The restored snapshot's geometry, kept, is the one an earlier version's sizing rule chose
  // (ChooseLegacyGeometry), not the one this version chooses for the settings.
  bool legacy_geometry = false;
};

class StoreService {
 public:
  // The feeds' positions, saved in each snapshot.
  using FeedPositions = std::function<std::vector<FeedPosition>()>;
  // Restores one feed's position from the snapshot; an error refuses the snapshot.
  using RestoreFeed = std::function<Status(const FeedPosition&)>;

  // `config` must outlive the service; a reload changes only keys the service does not read.
  explicit StoreService(const Config& config);
  ~StoreService();
  StoreService(const StoreService&) = delete;
  StoreService& operator=(const StoreService&) = delete;

  // Locks the data dir: another peerbloomd on it is an error.
  Status Open();
  // Makes the empty store (after Open).
  Status CreateStore();
  // Restores the snapshot, if there is one, and claims the epoch to start in (*epoch): above
  // the snapshot's and the epoch file's, and at least the wall clock.
  Status Restore(const RestoreFeed& restore_feed, uint64_t* epoch);
  // Starts summaries in `epoch` and publishes the first, full, to `engine` (which must
  // outlive the service). `positions` are read at every snapshot.
  void StartPublishing(GossipEngine* engine, FeedPositions positions, uint64_t epoch, int64_t now);

  // One turn of the loop: a new epoch when peers proved a higher one of this node, the
  // publication the policy asks for, the periodic snapshot.
  void Poll(int64_t now);
  int64_t NextDeadline(int64_t now) const;
  // Publishes now if the publish policy says so (after a change through the control
  // endpoint, so that a large batch goes out at once).
  void MaybePublish(int64_t now);
  // Synchronous: a write under way ends first (the newer one must land last), then this one
  // is written on the loop's thread, so the caller knows it is on disk when this returns.
  Status WriteSnapshotNow(int64_t now);

  LocalStore& store() { return *store_; }
  const LocalStore& store() const { return *store_; }
  const DataDir& data_dir() const { return *data_dir_; }
  const std::string& snapshot_path() const { return snapshot_path_; }
  const PublishStats& publish_stats() const { return publish_stats_; }
  const SnapshotStats& snapshot_stats() const { return snapshot_stats_; }
  // Tests only: see SnapshotWriter::set_gate_for_test.
  void set_snapshot_gate_for_test(std::function<void()> gate);

 private:
  Status RestoreSnapshot(const RestoreFeed& restore_feed, uint64_t* epoch);
  std::string KeptGeometryReason(const Geometry& g) const;
  Status KeepSnapshotGeometry(const Geometry& g, const std::string& reason);
  void MaybeStartNewEpoch(int64_t now);
  void Publish(int64_t now);
  void MaybeSnapshot(int64_t now);
  SnapshotState TakeSnapshotState();
  void TakeSnapshotResult(int64_t now);
  void SnapshotFinished(const Status& s, int64_t now);
  int64_t WallMs() const;

  const Config& config_;
  std::unique_ptr<DataDir> data_dir_;
  int lock_fd_ = -1;
  std::unique_ptr<LocalStore> store_;
  GossipEngine* engine_ = nullptr;
  FeedPositions feed_positions_;
  PublishPolicy publish_policy_;
  PublishStats publish_stats_;
  std::string snapshot_path_;
  std::unique_ptr<SnapshotWriter> snapshot_writer_;
  SnapshotStats snapshot_stats_;
  int64_t next_snapshot_ms_ = 0;
  uint64_t changes_at_snapshot_ = 0;  // adds + removes when the last snapshot was written
  struct {
    uint64_t changes = 0;
    int64_t started_ms = 0;
    int64_t written_unix_ms = 0;
  } snapshot_under_way_;  // the write on the writer's thread, or the one just written
  uint64_t snapshot_failures_in_row_ = 0;
  LogLimiter snapshot_log_;  // snapshot failures
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_STORE_STORE_SERVICE_H_
