// The event loop. Deadlines come from the injected clock; nothing here sleeps.
#include "daemon/loop/daemon.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>

#include "daemon/config/allow_list.h"
#include "daemon/config/origin_keys.h"
#include "daemon/observe/log_format.h"
#include "daemon/relay/relay_purge.h"
#include "daemon/store/epoch_floor.h"
#include "peerbloom/client/control_token.h"
#include "peerbloom/escape.h"
#include "peerbloom/wire.h"

namespace peerbloom::daemon {
namespace {

constexpr int64_t kFeedPollMs = 100;
constexpr int64_t kMaxWaitMs = 1000;
constexpr int64_t kSnapshotCheckMs = 20;
// A full or read-only disk fails every snapshot: one line per episode, then one per window.
constexpr int64_t kSnapshotLogWindowMs = 10 * 60 * 1000;
// The wall clock moving this much more or less than the monotonic clock between two turns of
// the loop (at most kMaxWaitMs apart) is a step, not NTP slewing (at most 0.5 ms per second).
constexpr int64_t kClockJumpMs = 1000;

int64_t UnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Daemon::Daemon(Config config, const Clock* clock) : config_(std::move(config)), clock_(clock) {
  snapshot_path_ = config_.data_dir + "/state.snapshot";
  snapshot_writer_ = std::make_unique<SnapshotWriter>(snapshot_path_);
}

// Timers run on the injected monotonic Clock; the wall clock only names epochs and dates
// snapshots, so a stepped system clock moves no deadline.
int64_t Daemon::WallMs() const { return UnixMs() + config_.test_wall_clock_offset_ms; }

Daemon::~Daemon() {
  metrics_server_.reset();   // its threads first: they serve text, but stop them early
  snapshot_writer_.reset();  // waits for a write under way
  // Sockets must close before the context: destroy owners first.
  control_.reset();
  transport_.reset();
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

Status Daemon::LockDataDir() {
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

// An ipc socket's directory must be this user's alone (another user could otherwise replace
// the socket); a tcp endpoint needs the token, created on first start.
Status Daemon::SecureControl() {
  PEERBLOOM_RETURN_IF_ERROR(CheckControlSocketDir(config_.control));
  if (config_.control_token_file.empty()) return Status::Ok();
  std::string token;
  PEERBLOOM_RETURN_IF_ERROR(client::EnsureControlToken(config_.control_token_file, &token));
  PEERBLOOM_RETURN_IF_ERROR(CheckPrivate("control_token_file", config_.control_token_file));
  control_->set_token(std::move(token));
  return Status::Ok();
}

Status Daemon::LoadKeys(std::map<std::string, std::string>* authorized,
                        std::vector<ListedNode>* listed) {
  if (!config_.curve) {
    spdlog::warn("curve = false: peer traffic is neither encrypted nor authenticated");
    return Status::Ok();
  }
  PEERBLOOM_RETURN_IF_ERROR(ResolveSeedKeys(&config_));
  PEERBLOOM_RETURN_IF_ERROR(ReadNodeKeyFile(config_.key_file, &keys_));
  return LoadAllowList(config_, authorized, listed);
}

// A snapshot whose geometry is the one an earlier version gave this node's settings was
// written by that version with the same settings, not under other settings: its content is
// kept, in its geometry. Earlier versions sized without the design margin, and, while
// filter_sizes is not set, at power-of-two sizes (their default).
std::string Daemon::KeptGeometryReason(const Geometry& g) const {
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
Status Daemon::KeepSnapshotGeometry(const Geometry& g, const std::string& reason) {
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

Status Daemon::RestoreSnapshot(uint64_t* epoch) {
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
    for (auto& feed : feeds_) {
      if (feed->config().path != pos.path) continue;
      s = feed->Restore(pos, static_cast<size_t>(config_.capacity) * 4);
      if (!s.ok()) return Status::Corruption(s.message() + aside);
    }
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

Status Daemon::StartGossip(uint64_t epoch) {
  GossipOptions o;
  o.node_id = config_.node_id;
  o.endpoint = advertise_;
  o.public_key = config_.curve ? keys_.public_key : "";
  for (const Seed& seed : config_.seeds) {
    if (seed.endpoint != advertise_) o.seeds.push_back(seed);
  }
  o.key_scheme = config_.key_scheme;
  o.gossip_interval_ms = config_.gossip_interval_ms;
  o.failure_timeout_ms = config_.failure_timeout_ms;
  o.anti_entropy_interval_ms = config_.anti_entropy_interval_ms;
  o.fanout = config_.fanout;
  o.cluster_tag = ClusterTag(config_.cluster_secret);
  o.rng_seed = std::random_device{}() ^ (epoch << 16);
  o.limits.max_encoded_bytes = static_cast<size_t>(config_.max_message_bytes);
  o.wire_limits.max_frame_bytes = static_cast<size_t>(config_.max_message_bytes);
  PEERBLOOM_RETURN_IF_ERROR(DeriveSummaryBounds(
      config_.profile, config_.capacity, config_.target_fpr,
      static_cast<uint64_t>(config_.max_peer_summary_bytes) * 8, &o.summary_bounds));
  o.max_imports_per_importer = static_cast<size_t>(config_.max_imports_per_importer);
  o.max_import_bytes_per_importer = static_cast<size_t>(config_.max_import_bytes_per_importer);
  PEERBLOOM_RETURN_IF_ERROR(LoadOriginKeys(config_, keys_, &o));
  // With CURVE, members are the allow-list's nodes; without, anyone who connects (loopback
  // only), up to max_members.
  o.listed_only = config_.curve;
  o.listed = listed_;
  o.max_clock_skew_ms = config_.max_clock_skew_ms;
  PEERBLOOM_RETURN_IF_ERROR(ValidateGossipOptions(o));
  signer_ = o.signer;  // the relay signs and verifies broadcasts with the same keys
  sign_keys_ = o.sign_keys;
  engine_ = std::make_unique<GossipEngine>(std::move(o));
  publish_policy_ = PublishPolicy({config_.publish_threshold, config_.gossip_interval_ms});
  store_->StartSummaries(epoch);
  Publish(clock_->NowMs());
  return Status::Ok();
}

// Message ids grow across restarts: the first is the wall clock in ms shifted left by 16, so
// a restarted node starts above every id it used unless it originated more than 65,536
// messages per ms of its previous run.
Status Daemon::StartRelay() {
  Status s = ValidateRelayConfig(config_);
  if (!s.ok()) return Status::InvalidArgument("relay settings: " + s.message());
  const uint64_t first_id = static_cast<uint64_t>(UnixMs()) << 16;
  relay_ = std::make_unique<RelayService>(config_, store_->hasher().key(),
                                          ClusterTag(config_.cluster_secret), first_id);
  relay_->SetOriginKeys(signer_, sign_keys_, config_.require_signatures);
  // What it had seen before a restart: a replayed message stays a duplicate. A file that
  // cannot be read costs that protection for the window of the messages it held, not the
  // start; the next save replaces it.
  if (const Status seen = relay_->KeepSeenIn(data_dir_.get()); !seen.ok()) {
    spdlog::warn(
        "{}; starting without them, replays of messages seen before the restart may be "
        "delivered again",
        seen.message());
  }
  // The runner's actions read a copy of the config: a reload never races them.
  auto runner = std::make_unique<PurgeRunner>(
      [config = config_](const std::atomic<bool>& stop, nlohmann::json* result) {
        RunPurgeAction(config, stop, result);
      });
  relay_->set_purge_handler(
      [this](const RelayReceived& purge, int64_t) {
        nlohmann::json result = CheckPurge(config_, store_.get(), purge.body);
        result["purge_origin"] = purge.origin;
        result["purge_id"] = purge.id;
        return result;
      },
      std::move(runner));
  return Status::Ok();
}

LocalStoreOptions StoreOptionsOf(const Config& config) {
  LocalStoreOptions so;
  so.node_id = config.node_id;
  so.profile = config.profile;
  so.capacity = config.capacity;
  so.target_fpr = config.target_fpr;
  so.filter_sizes = config.filter_sizes;
  so.key_scheme = config.key_scheme;
  so.squid_url = config.squid_url;
  so.cluster_secret = config.cluster_secret;
  return so;
}

Status Daemon::Start() {
  start_ms_ = clock_->NowMs();
  PEERBLOOM_RETURN_IF_ERROR(LoadClusterSecret(&config_));
  PEERBLOOM_RETURN_IF_ERROR(LockDataDir());
  std::map<std::string, std::string> authorized;
  PEERBLOOM_RETURN_IF_ERROR(LoadKeys(&authorized, &listed_));
  PEERBLOOM_RETURN_IF_ERROR(LocalStore::Create(StoreOptionsOf(config_), &store_));
  for (const FeedConfig& fc : config_.feeds) {
    feeds_.push_back(std::make_unique<Feed>(fc, store_->hasher().key()));
  }
  uint64_t epoch = 0;
  PEERBLOOM_RETURN_IF_ERROR(RestoreSnapshot(&epoch));
  Status claimed = ClaimEpoch(config_.data_dir + "/epoch", epoch, &epoch);
  if (claimed.IsCorruption()) return claimed;
  if (!claimed.ok()) spdlog::warn("epoch {}: {}", epoch, claimed.message());

  std::string bound;
  PEERBLOOM_RETURN_IF_ERROR(StartTransport(std::move(authorized), &bound));
  PEERBLOOM_RETURN_IF_ERROR(StartLocalListeners());
  PEERBLOOM_RETURN_IF_ERROR(StartGossip(epoch));
  PEERBLOOM_RETURN_IF_ERROR(StartRelay());
  if (!config_.squid_route_log.empty()) {
    route_log_ = std::make_unique<RouteLogFeed>(config_.squid_route_log, config_.squid_peer_names);
  }
  digests_ = std::make_unique<DigestImporter>(engine_.get());
  PEERBLOOM_RETURN_IF_ERROR(digests_->Start(config_));
  WireControl();
  PEERBLOOM_RETURN_IF_ERROR(StartMetrics());
  const int64_t now = clock_->NowMs();
  next_snapshot_ms_ = now + config_.snapshot_interval_ms;
  spdlog::info(
      "peerbloomd '{}' serving peers on {} (advertised {}), control on {}, {} counters "
      "k={}, curve {}",
      config_.node_id, bound, advertise_, config_.control, store_->filter().counters(),
      store_->filter().k(), config_.curve ? "on" : "OFF");
  spdlog::info(
      "descriptor limit {}: connections held at most {} on the who-has socket, {} on /metrics, "
      "{} on a tcp control endpoint",
      DescriptorLimit(), listener_limits_.who_has, listener_limits_.metrics,
      listener_limits_.control);
  return Status::Ok();
}

// The peer socket, bound (its address in *bound) and advertised in peer.endpoint.
Status Daemon::StartTransport(std::map<std::string, std::string> authorized, std::string* bound) {
  TransportOptions to;
  to.listen = config_.listen;
  to.curve = config_.curve;
  to.keys = keys_;
  to.authorized = std::move(authorized);
  to.max_message_bytes = config_.max_message_bytes;
  to.send_queue_limit = config_.send_queue_limit;
  to.heartbeat_interval_ms = static_cast<int>(config_.link_heartbeat_interval_ms);
  to.heartbeat_timeout_ms = static_cast<int>(config_.link_heartbeat_timeout_ms);
  to.max_links = static_cast<size_t>(config_.max_links);
  transport_ = std::make_unique<Transport>(&context_, std::move(to));
  ApplyFaults();
  PEERBLOOM_RETURN_IF_ERROR(transport_->Start(bound));
  advertise_ = config_.advertise.empty() ? *bound : config_.advertise;
  return data_dir_->WriteFile("peer.endpoint", advertise_ + "\n");
}

// The control endpoint and the who-has socket, their connections bounded by the descriptor
// limit.
Status Daemon::StartLocalListeners() {
  listener_limits_ = ListenerLimitsFor(DescriptorLimit());
  control_ = std::make_unique<ControlServer>(&context_, config_.control, listener_limits_.control);
  PEERBLOOM_RETURN_IF_ERROR(SecureControl());
  PEERBLOOM_RETURN_IF_ERROR(control_->Start());
  if (!config_.who_has_socket.empty()) {
    who_has_socket_ = std::make_unique<WhoHasSocket>(
        config_.who_has_socket, config_.who_has_socket_group, listener_limits_.who_has);
    PEERBLOOM_RETURN_IF_ERROR(who_has_socket_->Start());
  }
  return Status::Ok();
}

// The stats answers and the control operations read the parts Start made; they are built
// last and hold references to them.
void Daemon::WireControl() {
  const DaemonParts parts{config_, advertise_, *store_,         *engine_,
                          feeds_,  routes_,    helper_reports_, route_log_};
  const StatsSources sources{parts,          start_ms_,       *transport_,    *control_, *digests_,
                             publish_stats_, snapshot_stats_, snapshot_path_, reloads_,  *relay_,
                             fault_stats_,   who_has_socket_, metrics_server_};
  stats_ = std::make_unique<StatsReport>(sources);
  metrics_ = std::make_unique<MetricsReport>(sources, loop_metrics_);
  auto who_has = [this](const ControlCall& call) {
    return WhoHas(call.request, call.body, call.reply, call.reply_body);
  };
  auto change = [this](bool add, const ControlCall& call) {
    return Change(add, call.request, call.body, call.reply);
  };
  auto write_snapshot = [this] { return WriteSnapshotNow(); };
  ops_ = std::make_unique<ControlOps>(
      ControlContext{parts, *clock_, *stats_, who_has, change, write_snapshot, *relay_});
}

int64_t Daemon::NextDeadline(int64_t now) const {
  int64_t deadline = std::min(engine_->NextDeadline(), now + kMaxWaitMs);
  if (store_->builder()->pending() > 0)
    deadline = std::min(deadline, publish_policy_.next_publish_ms());
  if (snapshot_writer_->busy()) {
    // Look for the write's end now and then; its deadline waits until it has ended.
    deadline = std::min(deadline, now + kSnapshotCheckMs);
  } else if (config_.snapshot_interval_ms > 0) {
    deadline = std::min(deadline, next_snapshot_ms_);
  }
  bool file_feeds = false;
  for (const auto& feed : feeds_) file_feeds |= feed->poll_fd() < 0;
  if (file_feeds) deadline = std::min(deadline, next_feed_poll_ms_);
  deadline = std::min(deadline, digests_->NextDeadline(now));
  if (notifier_ != nullptr) deadline = std::min(deadline, notifier_->NextPingMs());
  if (metrics_server_) deadline = std::min(deadline, next_metrics_ms_);
  deadline = std::min(deadline, relay_->NextDeadline(now));
  if (feeds_behind_) deadline = now;
  return deadline;
}

void Daemon::RunOnce(int64_t max_wait_ms) {
  int64_t now = clock_->NowMs();
  std::vector<zmq::pollitem_t> items;
  transport_->AppendPollItems(&items);
  const size_t control_at = items.size();
  control_->AppendPollItems(&items);
  const size_t socket_at = items.size();
  if (who_has_socket_) who_has_socket_->AppendPollItems(&items);
  const size_t feeds_at = items.size();
  for (const auto& feed : feeds_) {
    items.push_back(
        {nullptr, feed->poll_fd(), static_cast<short>(feed->poll_fd() >= 0 ? ZMQ_POLLIN : 0), 0});
  }
  const int64_t wait = std::clamp<int64_t>(NextDeadline(now) - now, 0, max_wait_ms);
  try {
    Poll(&items, wait);
  } catch (const zmq::error_t& e) {
    if (e.num() != EINTR) spdlog::error("poll: {}", e.what());
    return;  // a signal: the caller looks at its flags
  }
  now = clock_->NowMs();
  engine_->SetWallClock(WallMs(), now);
  // Lookups first: a who-has waits for no peer frame, feed line or timer of this turn.
  ServeLookups(items.data() + control_at, socket_at - control_at, items.data() + socket_at,
               feeds_at - socket_at, now);
  transport_->Process(
      items.data(), now, [this, now](std::string_view payload, const std::string& link_node) {
        // A summary can take a while to decode: lookups that came meanwhile go first.
        ServeLookupsNow();
        // A frame that makes the engine throw is refused like a malformed one (counted, logged
        // at a limited rate); the next frame is served.
        Status s;
        try {
          s = RelayService::IsRelayFrame(payload) ? relay_->OnFrame(payload, now, link_node)
                                                  : engine_->OnMessage(payload, now, link_node);
        } catch (const std::exception& e) {
          s = Status::Corruption("internal error: " + EscapeBytes(e.what()));
        }
        loop_metrics_.CountIn(payload, s);
        return s;
      });
  PollFeeds(items, feeds_at, now);
  PollRouteLog(now);
  digests_->Poll(now);
  MaybeStartNewEpoch(now);
  MaybePublish(now);
  if (now >= engine_->NextDeadline()) engine_->OnTick(now);
  FlushOutgoing(now);
  relay_->Poll(*engine_, transport_.get(), now);
  MaybeSnapshot(now);
  WatchWallClock(now);
  MaybePublishMetrics(now);
  PingWatchdog(now);
}

// Sleeping in poll costs a wake-up (tens of microseconds on an idle machine) when the next
// request comes; right after a request another one is likely, so the loop first polls
// without sleeping for up to control_busy_poll. Idle, it sleeps as before.
int Daemon::Poll(std::vector<zmq::pollitem_t>* items, int64_t wait_ms) {
  if (wait_ms > 0 && config_.control_busy_poll_us > 0) {
    while (std::chrono::steady_clock::now() < busy_poll_until_) {
      const int ready = zmq::poll(items->data(), items->size(), std::chrono::milliseconds(0));
      if (ready > 0) return ready;
    }
  }
  return zmq::poll(items->data(), items->size(), std::chrono::milliseconds(wait_ms));
}

void Daemon::ServeLookups(const zmq::pollitem_t* control_items, size_t control_count,
                          const zmq::pollitem_t* socket_items, size_t socket_count, int64_t now) {
  size_t served = static_cast<size_t>(control_->Process(
      control_items, control_count, now,
      [this](const nlohmann::json& req, std::string_view body, nlohmann::json* reply,
             std::string* reply_body) { return ops_->Handle(req, body, reply, reply_body); }));
  if (who_has_socket_) {
    served += who_has_socket_->Process(
        socket_items, socket_count,
        [this](std::string_view lines, std::string* out) { WhoHasLines(lines, out); });
  }
  ServedRequests(served);
}

// Only the who-has socket: its lines are lookups and nothing else, so serving them here, in
// the middle of the transport's receiving, cannot change what the loop is doing.
void Daemon::ServeLookupsNow() {
  if (!who_has_socket_) return;
  ServedRequests(who_has_socket_->ServeReady(
      [this](std::string_view lines, std::string* out) { WhoHasLines(lines, out); }));
}

void Daemon::ServedRequests(size_t count) {
  if (count == 0 || config_.control_busy_poll_us <= 0) return;
  busy_poll_until_ =
      std::chrono::steady_clock::now() + std::chrono::microseconds(config_.control_busy_poll_us);
}

void Daemon::Notify(const std::string& state) {
  if (notifier_ == nullptr) return;
  const Status s = notifier_->Notify(state);
  if (!s.ok() && !notify_failed_) {
    notify_failed_ = true;
    spdlog::warn("systemd notification failed (logged once): {}", s.message());
  }
}

// Pinged at the end of a turn: a loop stuck in a handler or a snapshot stops pinging, and
// systemd (WatchdogSec=) restarts the daemon.
void Daemon::PingWatchdog(int64_t now) {
  if (notifier_ == nullptr || notifier_->MaybePing(now) || notify_failed_) return;
  notify_failed_ = true;
  spdlog::warn("systemd watchdog ping failed (logged once)");
}

void Daemon::PollFeeds(const std::vector<zmq::pollitem_t>& items, size_t first, int64_t now) {
  const bool timer = now >= next_feed_poll_ms_ || feeds_behind_;
  if (timer) next_feed_poll_ms_ = now + kFeedPollMs;
  feeds_behind_ = false;
  for (size_t i = 0; i < feeds_.size(); ++i) {
    Feed& feed = *feeds_[i];
    const bool ready = feed.poll_fd() >= 0 && (items[first + i].revents & ZMQ_POLLIN);
    if (ready || timer || !feed.is_open()) {
      feeds_behind_ |= feed.Poll(store_.get(), now);
    }
  }
}

// The route log is read on the feeds' timer; requests that went direct are settled against
// the peers' liveness as often.
void Daemon::PollRouteLog(int64_t now) {
  if (!route_log_ || now < next_route_log_poll_ms_) return;
  next_route_log_poll_ms_ = now + kFeedPollMs;
  const bool more = route_log_->Poll(
      now, WallMs(), &routes_, [this](std::string_view node) { return engine_->IsMember(node); });
  if (more) next_route_log_poll_ms_ = now;
  if (routes_.pending() == 0) return;
  std::map<std::string, int64_t, std::less<>> heard;
  for (const PeerInfo& p : engine_->Peers(now)) {
    if (p.last_heard_ms != 0) heard[p.node_id] = p.last_heard_ms;
  }
  routes_.Settle(now, config_.failure_timeout_ms,
                 [&heard](std::string_view node) -> std::optional<int64_t> {
                   const auto it = heard.find(node);
                   if (it == heard.end()) return std::nullopt;
                   return it->second;
                 });
}

// A peer proved an epoch of this node above the one it runs (GossipEngine::SupersededEpoch):
// it restarted below an earlier incarnation, so its frames read as that incarnation's. It
// starts an epoch above both and publishes its full summary in it.
void Daemon::MaybeStartNewEpoch(int64_t now) {
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

void Daemon::MaybePublish(int64_t now) {
  SummaryBuilder* builder = store_->builder();
  const PublishAction action =
      publish_policy_.Decide(builder->pending(), builder->current().filter.bits(), now);
  if (action == PublishAction::kWait) return;
  Publish(now);
  if (action == PublishAction::kPublishAndFlush) {
    ++publish_stats_.immediate;
    engine_->FlushNow(now);
  }
}

void Daemon::Publish(int64_t now) {
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
  if (pub.full) {
    ++publish_stats_.full;
    engine_->PublishFull(builder->current(), now);
    return;
  }
  const uint64_t refused_before = engine_->stats().local_publish_refused;
  engine_->PublishDelta(pub.delta, now);
  ++publish_stats_.deltas;
  if (engine_->stats().local_publish_refused != refused_before) {
    ++publish_stats_.refused_deltas;
    ++publish_stats_.full;
    engine_->PublishFull(builder->current(), now);
  }
}

void Daemon::FlushOutgoing(int64_t now) {
  for (const Outgoing& out : engine_->TakeOutgoing()) {
    loop_metrics_.CountOut(out.endpoint, out.payload);
    transport_->Send(out, now);
  }
  for (const std::string& endpoint : engine_->TakeDropped()) transport_->Close(endpoint);
}

void Daemon::ApplyFaults() {
  FaultInjection f;
  f.drop = config_.test_fault_drop;
  f.duplicate = config_.test_fault_duplicate;
  f.reorder = config_.test_fault_reorder;
  f.blocked.insert(config_.test_fault_blocked.begin(), config_.test_fault_blocked.end());
  if (f.any()) {
    spdlog::warn(
        "TEST ONLY: injecting peer message faults: drop {}, duplicate {}, reorder {}, "
        "{} blocked endpoints",
        f.drop, f.duplicate, f.reorder, f.blocked.size());
  }
  transport_->SetFaults(std::move(f));
}

// The loop only copies the counters here; the writer thread checksums, writes and syncs.
void Daemon::MaybeSnapshot(int64_t now) {
  TakeSnapshotResult();
  if (config_.snapshot_interval_ms <= 0 || now < next_snapshot_ms_) return;
  if (snapshot_writer_->busy()) return;  // the one under way ends first; retried next turn
  next_snapshot_ms_ = now + config_.snapshot_interval_ms;
  const uint64_t changes = store_->stats().adds + store_->stats().removes;
  if (changes == changes_at_snapshot_ && snapshot_stats_.written > 0) return;
  SnapshotState snap = TakeSnapshotState();
  snapshot_under_way_ = {snap.adds + snap.removes, clock_->NowMs(), snap.written_unix_ms};
  snapshot_writer_->Start(std::move(snap));
}

Status Daemon::StartMetrics() {
  if (config_.metrics_listen.empty()) return Status::Ok();
  MetricsServerOptions options;
  options.max_connections = listener_limits_.metrics;
  metrics_server_ = std::make_unique<MetricsServer>(config_.metrics_listen, options);
  std::string bound;
  PEERBLOOM_RETURN_IF_ERROR(metrics_server_->Start(&bound));
  PEERBLOOM_RETURN_IF_ERROR(data_dir_->WriteFile("metrics.endpoint", bound + "\n"));
  MaybePublishMetrics(clock_->NowMs());
  spdlog::info("serving metrics on http://{}/metrics", bound);
  return Status::Ok();
}

// Rendering reads every part, so it runs here on the loop's thread; the server's threads
// only copy the finished text.
void Daemon::MaybePublishMetrics(int64_t now) {
  if (!metrics_server_ || now < next_metrics_ms_) return;
  next_metrics_ms_ = now + MetricsServer::kRefreshMs;
  metrics_server_->Publish(metrics_->Render(now, WallMs()));
}

// Timers do not read the wall clock, so a step changes nothing but epochs' names and
// snapshots' dates; it is counted and logged (at most once a minute) for whoever wonders why
// the log's times jumped.
void Daemon::WatchWallClock(int64_t now) {
  const int64_t offset = WallMs() - now;
  const int64_t step = offset - wall_minus_mono_ms_;
  const bool first = !wall_minus_mono_set_;
  wall_minus_mono_ms_ = offset;
  wall_minus_mono_set_ = true;
  if (first || std::abs(step) < kClockJumpMs) return;
  ++fault_stats_.clock_jumps;
  fault_stats_.last_clock_jump_ms = step;
  uint64_t suppressed = 0;
  if (clock_log_.Allow(now, &suppressed)) {
    spdlog::warn("wall clock stepped by {} ms, timers unaffected ({} steps so far)", step,
                 fault_stats_.clock_jumps);
  }
}

void Daemon::TakeSnapshotResult() {
  Status s;
  if (!snapshot_writer_->TakeResult(&s)) return;
  SnapshotFinished(s, snapshot_under_way_.changes, snapshot_under_way_.started_ms,
                   snapshot_under_way_.written_unix_ms);
}

void Daemon::SnapshotFinished(const Status& s, uint64_t changes, int64_t started_ms,
                              int64_t written_unix_ms) {
  if (!s.ok()) {
    ++snapshot_stats_.failed;
    if (snapshot_failures_in_row_ == 0) ++snapshot_stats_.failure_episodes;
    ++snapshot_failures_in_row_;
    snapshot_stats_.failing = true;
    uint64_t suppressed = 0;
    if (snapshot_log_.Allow(clock_->NowMs(), &suppressed)) {
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
  changes_at_snapshot_ = changes;
  snapshot_stats_.last_duration_ms = clock_->NowMs() - started_ms;
  snapshot_stats_.last_unix_ms = written_unix_ms;
}

SnapshotState Daemon::TakeSnapshotState() {
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
  for (const auto& feed : feeds_) {
    if (!feed->is_fifo() && feed->position().inode != 0) snap.feeds.push_back(feed->position());
  }
  if (!snapshot_writer_->busy()) snap.cells = snapshot_writer_->TakeSpareBuffer();
  snap.cells.assign(f.raw_cells());
  return snap;
}

// Synchronous: a write under way ends first (the newer one must land last), then this one is
// written on the loop's thread, so the caller knows it is on disk when this returns.
Status Daemon::WriteSnapshotNow() {
  if (snapshot_writer_->busy()) {
    const Status earlier = snapshot_writer_->Wait();
    SnapshotFinished(earlier, snapshot_under_way_.changes, snapshot_under_way_.started_ms,
                     snapshot_under_way_.written_unix_ms);
  }
  const int64_t started = clock_->NowMs();
  SnapshotState snap = TakeSnapshotState();
  Status s = WriteSnapshot(snapshot_path_, snap);
  SnapshotFinished(s, snap.adds + snap.removes, started, snap.written_unix_ms);
  return s;
}

void Daemon::set_snapshot_gate_for_test(std::function<void()> gate) {
  snapshot_writer_->set_gate_for_test(std::move(gate));
}

void Daemon::Reload() {
  Config fresh;
  Status s = LoadConfig(config_.source_path, &fresh);
  if (!s.ok()) {
    spdlog::error("reload refused, keeping the running config: {}", s.message());
    return;
  }
  config_.seeds = fresh.seeds;
  config_.seed_key_files = fresh.seed_key_files;
  config_.authorized_keys = fresh.authorized_keys;
  std::map<std::string, std::string> authorized;
  std::vector<ListedNode> listed;
  s = LoadKeys(&authorized, &listed);
  if (!s.ok()) {
    spdlog::error("reload: {}", s.message());
    return;
  }
  transport_->SetAuthorized(std::move(authorized));
  if (config_.curve) {
    listed_ = listed;
    engine_->SetListed(std::move(listed), clock_->NowMs());
    // Sign keys too: a rotated `sign=` key is checked from now on, without a restart, by the
    // gossip engine and by the relay (broadcasts and purges).
    GossipOptions sign_options;
    s = LoadOriginKeys(config_, keys_, &sign_options);
    if (s.ok()) {
      sign_keys_ = std::move(sign_options.sign_keys);
      engine_->SetSignKeys(sign_keys_);
      relay_->SetOriginKeys(signer_, sign_keys_, config_.require_signatures);
    } else {
      spdlog::error("reload: sign keys kept: {}", s.message());
    }
  }
  config_.test_fault_drop = fresh.test_fault_drop;
  config_.test_fault_duplicate = fresh.test_fault_duplicate;
  config_.test_fault_reorder = fresh.test_fault_reorder;
  config_.test_fault_blocked = fresh.test_fault_blocked;
  config_.test_wall_clock_offset_ms = fresh.test_wall_clock_offset_ms;
  ApplyFaults();
  digests_->Reload(fresh, clock_->NowMs());
  std::vector<Seed> seeds;
  for (const Seed& seed : config_.seeds) {
    if (seed.endpoint != advertise_) seeds.push_back(seed);
  }
  engine_->SetSeeds(std::move(seeds), clock_->NowMs());
  std::string previous;
  if (SetLogLevel(fresh.log_level, &previous).ok()) config_.log_level = fresh.log_level;
  ++reloads_;
  spdlog::info("reloaded: {} seeds, log_level {}", config_.seeds.size(), config_.log_level);
}

Status Daemon::Run(volatile std::sig_atomic_t* stop, volatile std::sig_atomic_t* reload) {
  // Requests, feed lines and peer frames are isolated where they are handled; what still
  // escapes a turn of the loop ends it, but only after the final snapshot, so the changes
  // applied since the last periodic one survive the restart.
  std::string failure;
  // The first watchdog ping goes out at the end of the first turn (NextPingMs is 0 until
  // then, so that turn does not wait).
  Notify("READY=1\nSTATUS=serving peers on " + advertise_);
  try {
    while (*stop == 0) {
      if (*reload != 0) {
        *reload = 0;
        Notify(SdNotifier::ReloadingState());
        Reload();
        Notify("READY=1\nSTATUS=serving peers on " + advertise_);
      }
      RunOnce(kMaxWaitMs);
    }
  } catch (const std::exception& e) {
    failure = "unexpected error in the event loop: " + EscapeBytes(e.what());
  }
  Notify("STOPPING=1\nSTATUS=writing the final snapshot");
  if (relay_) (void)relay_->SaveSeen();
  if (failure.empty()) {
    spdlog::info("stopping: writing the final snapshot");
    return WriteSnapshotNow();
  }
  spdlog::critical("{}; writing the final snapshot", failure);
  const Status s = WriteSnapshotNow();
  return Status::Corruption(
      failure + (s.ok() ? "; final snapshot written" : "; final snapshot failed: " + s.message()));
}

}  // namespace peerbloom::daemon
