// The node's own state: the data dir's lock, restore, publication and snapshots. Deadlines
// come from the loop's clock (`now`); the wall clock only names epochs and dates snapshots.
#include "daemon/store/store_service.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "daemon/store/epoch_floor.h"

namespace peerbloom::daemon {
namespace {

constexpr int64_t kSnapshotCheckMs = 20;
// A full or read-only disk fails every snapshot: one line per episode, then one per window.
constexpr int64_t kSnapshotLogWindowMs = 10 * 60 * 1000;

}  // namespace

LocalStoreOptions StoreOptionsOf(const Config& config) {
  LocalStoreOptions so;
  so.node_id = config.node_id;
  so.profile = config.profile;
  so.capacity = config.capacity;
  so.target_fpr = config.target_fpr;
  so.filter_sizes = config.filter_sizes;
  so.key_scheme = config.key_scheme;
  so.squid_url = config.squid_url;
  if (config.key_scheme == KeyScheme::kNginxMd5) {
    // The parser checked the template: a failure here leaves URLs keyed as given.
    (void)NginxKeyTemplate::Parse(config.nginx_cache_key, config.nginx_proxy_host, &so.nginx_key);
  }
  so.cluster_secret = config.cluster_secret;
  return so;
}

StoreService::StoreService(const Config& config)
    : config_(config),
      snapshot_path_(config.data_dir + "/state.snapshot"),
      snapshot_writer_(std::make_unique<SnapshotWriter>(snapshot_path_)),
      snapshot_log_(1, kSnapshotLogWindowMs) {}

StoreService::~StoreService() {
  snapshot_writer_.reset();  // waits for a write under way
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

int64_t StoreService::WallMs() const { return WallClockMs(config_); }

Status StoreService::CreateStore() { return LocalStore::Create(StoreOptionsOf(config_), &store_); }

Status StoreService::Open() {
  PEERBLOOM_RETURN_IF_ERROR(DataDir::Open(config_.data_dir, &data_dir_));
  const std::string lock = data_dir_->PathOf("peerbloomd.lock");
  // The lock is held through a read-only descriptor and the pid written through a short-lived
  // one: a running daemon keeps no file in data_dir open for writing, so the file system can
  // be remounted read-only under it (it then goes on serving; snapshots fail and are counted).
  PEERBLOOM_RETURN_IF_ERROR(data_dir_->OpenFile("peerbloomd.lock", O_RDONLY | O_CREAT, &lock_fd_));
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    return Status::IOError("data_dir '" + config_.data_dir +
                           "' is in use by another peerbloomd (lock '" + lock + "')");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  int pid_fd = -1;
  if (!data_dir_->OpenFile("peerbloomd.lock", O_WRONLY | O_TRUNC, &pid_fd).ok() ||
      ::write(pid_fd, pid.data(), pid.size()) < 0) {
    spdlog::warn("cannot write the pid into '{}'", lock);
  }
  if (pid_fd >= 0) ::close(pid_fd);
  return Status::Ok();
}

Status StoreService::Restore(const RestoreFeed& restore_feed, uint64_t* epoch) {
  PEERBLOOM_RETURN_IF_ERROR(RestoreSnapshot(restore_feed, epoch));
  Status claimed = ClaimEpoch(config_.data_dir + "/epoch", *epoch, epoch);
  if (claimed.IsCorruption()) return claimed;
  if (!claimed.ok()) spdlog::warn("epoch {}: {}", *epoch, claimed.message());
  return Status::Ok();
}

// A snapshot whose geometry is the one an earlier version gave this node's settings was
// written by that version with the same settings, not under other settings: its content is
// kept, in its geometry. Earlier versions sized without the design margin, and, while
// filter_sizes is not set, at power-of-two sizes (their default).
std::string StoreService::KeptGeometryReason(const Geometry& g) const {
  const auto gives = [&](bool legacy_rule, SizeSteps steps) {
    Geometry c;
    const Status s =
        legacy_rule
            ? ChooseLegacyGeometry(config_.profile, config_.capacity, config_.target_fpr, &c, steps)
            : ChooseGeometry(config_.profile, config_.capacity, config_.target_fpr, &c, steps);
    return s.ok() && c == g;
  };
  if (gives(true, config_.filter_sizes)) {
    return "that versions before the 2 % design margin chose for these settings";
  }
  if (!config_.filter_sizes_set &&
      (gives(false, SizeSteps::kPowerOfTwo) || gives(true, SizeSteps::kPowerOfTwo))) {
    return "of power-of-two size that versions before exact sizes chose for these settings "
           "(filter_sizes is not set)";
  }
  return "";
}

// Keeps the snapshot's pre-margin geometry: the store's filter takes it before anything reads
// the filter (the summary builder, the gossip engine, the stats and lookups are built after
// the restore). The cluster's summary bounds stay those of the current rule, which are never
// smaller (ChooseLegacyGeometry), so peers of either version accept this node's summaries.
Status StoreService::KeepSnapshotGeometry(const Geometry& g, const std::string& reason) {
  const Geometry now = store_->geometry();
  PEERBLOOM_RETURN_IF_ERROR(store_->UseGeometry(g));
  snapshot_stats_.legacy_geometry = true;
  spdlog::warn(
      "snapshot '{}' has the filter geometry k={} log2_counters={} size_multiplier={} ({} "
      "counters) {}; keeping it (this version sizes {} counters) until the snapshot is moved "
      "aside or capacity, profile, target_fpr or filter_sizes change",
      snapshot_path_, g.k, g.log2_counters, g.multiplier, g.counters(), reason, now.counters());
  return Status::Ok();
}

Status StoreService::RestoreSnapshot(const RestoreFeed& restore_feed, uint64_t* epoch) {
  *epoch = static_cast<uint64_t>(WallMs());
  SnapshotState snap;
  Status s = ReadSnapshot(snapshot_path_, &snap);
  if (s.IsNotFound()) return Status::Ok();
  const std::string aside = " (move '" + snapshot_path_ + "' aside to start empty)";
  if (!s.ok()) return Status::Corruption(s.message() + aside);
  const Geometry geometry{snap.k, snap.log2_counters, snap.size_multiplier};
  const bool same_geometry = geometry == store_->geometry();
  std::string why;
  if (snap.node_id != config_.node_id) why = "node id '" + snap.node_id + "'";
  if (snap.key_scheme != config_.key_scheme) why = "another key scheme";
  if (snap.index_key_fingerprint != store_->IndexKeyFingerprint()) why = "another cluster_secret";
  const std::string kept = same_geometry ? "" : KeptGeometryReason(geometry);
  if (!same_geometry && kept.empty()) {
    why =
        "another filter geometry (capacity, profile, target_fpr, filter_sizes or the version's "
        "sizing rule changed)";
  }
  if (!why.empty()) {
    return Status::InvalidArgument("snapshot '" + snapshot_path_ + "' was written with " + why +
                                   aside);
  }
  if (!same_geometry) PEERBLOOM_RETURN_IF_ERROR(KeepSnapshotGeometry(geometry, kept));
  s = store_->mutable_filter()->Restore(snap.cells, snap.items, snap.saturation_events,
                                        snap.refused_removes);
  if (!s.ok()) return Status::Corruption(s.message() + aside);
  store_->mutable_stats()->adds = snap.adds;
  store_->mutable_stats()->removes = snap.removes;
  for (const FeedPosition& pos : snap.feeds) {
    s = restore_feed(pos);
    if (!s.ok()) return Status::Corruption(s.message() + aside);
  }
  // A restored node keeps its content but starts a new epoch: peers replace what they held of
  // the old incarnation with one full summary instead of trusting a version sequence the
  // builder cannot continue.
  *epoch = std::max(*epoch, snap.epoch + 1);
  snapshot_stats_.restored = true;
  spdlog::info("restored snapshot '{}': {} items, epoch {} -> {}", snapshot_path_, snap.items,
               snap.epoch, *epoch);
  return Status::Ok();
}

void StoreService::StartPublishing(GossipEngine* engine, FeedPositions positions, uint64_t epoch,
                                   int64_t now) {
  engine_ = engine;
  feed_positions_ = std::move(positions);
  publish_policy_ = PublishPolicy({config_.publish_threshold, config_.gossip_interval_ms,
                                   config_.publish_max_delay_ms, config_.publish_batch});
  store_->StartSummaries(epoch);
  Publish(now);
  next_snapshot_ms_ = now + config_.snapshot_interval_ms;
}

void StoreService::Poll(int64_t now) {
  MaybeStartNewEpoch(now);
  MaybePublish(now);
  MaybeSnapshot(now);
}

int64_t StoreService::NextDeadline(int64_t now) const {
  int64_t deadline = publish_policy_.NextPublishMs(store_->builder()->pending(), now);
  if (snapshot_writer_->busy()) {
    // Look for the write's end now and then; its deadline waits until it has ended.
    deadline = std::min(deadline, now + kSnapshotCheckMs);
  } else if (config_.snapshot_interval_ms > 0) {
    deadline = std::min(deadline, next_snapshot_ms_);
  }
  return deadline;
}

// A peer proved an epoch of this node above the one it runs (GossipEngine::SupersededEpoch):
// it restarted below an earlier incarnation, so its frames read as that incarnation's. It
// starts an epoch above both and publishes its full summary in it.
void StoreService::MaybeStartNewEpoch(int64_t now) {
  const uint64_t seen = engine_->SupersededEpoch();
  if (seen == 0) return;
  const uint64_t old_epoch = store_->epoch();
  uint64_t epoch = std::max(static_cast<uint64_t>(std::max<int64_t>(WallMs(), 0)), seen + 1);
  Status claimed = ClaimEpoch(config_.data_dir + "/epoch", epoch, &epoch);
  if (!claimed.ok()) spdlog::warn("epoch {}: {}", epoch, claimed.message());
  spdlog::warn(
      "peers know this node in epoch {}, above its epoch {} (its epoch file was lost while its "
      "clock was behind?): starting epoch {}",
      seen, old_epoch, epoch);
  store_->StartSummaries(epoch);
  ++publish_stats_.new_epochs;
  Publish(now);
}

void StoreService::MaybePublish(int64_t now) {
  SummaryBuilder* builder = store_->builder();
  const PublishAction action =
      publish_policy_.Decide(builder->pending(), builder->current().filter.bits(), now);
  if (action == PublishAction::kWait) return;
  if (publish_policy_.reason() == PublishReason::kBatch) ++publish_stats_.immediate;
  Publish(now);
  engine_->FlushNow(now);
}

void StoreService::Publish(int64_t now) {
  SummaryBuilder* builder = store_->builder();
  Publication pub;
  Status s = builder->Publish(&pub);
  publish_policy_.Published(now);  // the rule: peerbloom/publish_policy.h
  if (!s.ok()) {
    spdlog::error("cannot publish the summary: {}", s.ToString());
    return;
  }
  if (!pub.changed) return;
  publish_stats_.last_ms = now;
  if (!pub.full) {
    ++publish_stats_.deltas;
    if (engine_->PublishDelta(pub.delta, now)) return;
    ++publish_stats_.refused_deltas;  // the engine's summary differs: a full one replaces it
  }
  ++publish_stats_.full;
  engine_->PublishFull(builder->current(), now);
}

// The loop only copies the counters here; the writer thread checksums, writes and syncs.
void StoreService::MaybeSnapshot(int64_t now) {
  TakeSnapshotResult(now);
  if (config_.snapshot_interval_ms <= 0 || now < next_snapshot_ms_) return;
  if (snapshot_writer_->busy()) return;  // the one under way ends first; retried next turn
  next_snapshot_ms_ = now + config_.snapshot_interval_ms;
  const uint64_t changes = store_->stats().adds + store_->stats().removes;
  if (changes == changes_at_snapshot_ && snapshot_stats_.written > 0) return;
  SnapshotState snap = TakeSnapshotState();
  snapshot_under_way_ = {snap.adds + snap.removes, now, snap.written_unix_ms};
  snapshot_writer_->Start(std::move(snap));
}

void StoreService::TakeSnapshotResult(int64_t now) {
  Status s;
  if (snapshot_writer_->TakeResult(&s)) SnapshotFinished(s, now);
}

// Accounts the write snapshot_under_way_ describes (stats, the rate-limited failure line).
void StoreService::SnapshotFinished(const Status& s, int64_t now) {
  if (!s.ok()) {
    ++snapshot_stats_.failed;
    if (snapshot_failures_in_row_ == 0) ++snapshot_stats_.failure_episodes;
    ++snapshot_failures_in_row_;
    snapshot_stats_.failing = true;
    uint64_t suppressed = 0;
    if (snapshot_log_.Allow(now, &suppressed)) {
      spdlog::error("snapshot failed, still serving without it ({} failed so far): {}",
                    snapshot_stats_.failed, s.ToString());
    }
    return;
  }
  if (snapshot_failures_in_row_ > 0) {
    spdlog::info("snapshot written again after {} failed", snapshot_failures_in_row_);
    snapshot_failures_in_row_ = 0;
    snapshot_log_ = LogLimiter{1, kSnapshotLogWindowMs};  // the next failure is news again
  }
  ++snapshot_stats_.written;
  snapshot_stats_.failing = false;
  changes_at_snapshot_ = snapshot_under_way_.changes;
  snapshot_stats_.last_duration_ms = now - snapshot_under_way_.started_ms;
  snapshot_stats_.last_unix_ms = snapshot_under_way_.written_unix_ms;
}

SnapshotState StoreService::TakeSnapshotState() {
  SnapshotState snap;
  const CountingBloomFilter& f = store_->filter();
  snap.node_id = config_.node_id;
  snap.epoch = store_->epoch();
  snap.version = store_->builder() ? store_->builder()->current().version : 0;
  snap.k = f.k();
  snap.log2_counters = f.log2_counters();
  snap.size_multiplier = f.multiplier();
  snap.key_scheme = config_.key_scheme;
  snap.index_key_fingerprint = store_->IndexKeyFingerprint();
  snap.items = f.items();
  snap.saturation_events = f.saturation_events();
  snap.refused_removes = f.refused_removes();
  snap.adds = store_->stats().adds;
  snap.removes = store_->stats().removes;
  snap.written_unix_ms = WallMs();
  if (feed_positions_) snap.feeds = feed_positions_();
  if (!snapshot_writer_->busy()) snap.cells = snapshot_writer_->TakeSpareBuffer();
  snap.cells.assign(f.raw_cells());
  return snap;
}

// `now` is the loop's time at the call; the waits and the write move it on by the time they
// take, which the stats report as the write's duration.
Status StoreService::WriteSnapshotNow(int64_t now) {
  const auto called = std::chrono::steady_clock::now();
  const auto later = [&] {
    return now + std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - called)
                     .count();
  };
  if (snapshot_writer_->busy()) SnapshotFinished(snapshot_writer_->Wait(), later());
  SnapshotState snap = TakeSnapshotState();
  snapshot_under_way_ = {snap.adds + snap.removes, later(), snap.written_unix_ms};
  const Status s = WriteSnapshot(snapshot_path_, snap);
  SnapshotFinished(s, later());
  return s;
}

void StoreService::set_snapshot_gate_for_test(std::function<void()> gate) {
  snapshot_writer_->set_gate_for_test(std::move(gate));
}

}  // namespace peerbloom::daemon
