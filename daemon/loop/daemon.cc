// The event loop and the wiring of the services. Deadlines come from the injected clock;
// nothing here sleeps.
#include "daemon/loop/daemon.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <random>
#include <utility>

#include "daemon/control/descriptors.h"
#include "daemon/observe/log_format.h"
#include "daemon/relay/relay_purge.h"
#include "peerbloom/escape.h"
#include "peerbloom/wire.h"

namespace peerbloom::daemon {
namespace {

constexpr int64_t kMaxWaitMs = 1000;

}  // namespace

Daemon::Daemon(Config config, const Clock* clock)
    : config_(std::move(config)), clock_(clock), store_(std::make_unique<StoreService>(config_)) {}

Daemon::~Daemon() {
  observe_.reset();  // the /metrics server's threads first
  store_.reset();    // waits for a snapshot write under way
  // Sockets must close before the context: destroy their owners first.
  lookups_.reset();
  transport_.reset();
}

Status Daemon::Start() {
  observe_ = std::make_unique<ObserveService>(config_, clock_->NowMs());
  PEERBLOOM_RETURN_IF_ERROR(LoadClusterSecret(&config_));
  PEERBLOOM_RETURN_IF_ERROR(store_->Open());
  PEERBLOOM_RETURN_IF_ERROR(LoadKeySet(&config_, &keys_));
  PEERBLOOM_RETURN_IF_ERROR(store_->CreateStore());
  feeds_ = std::make_unique<FeedService>(config_, store_->store().hasher().key());
  uint64_t epoch = 0;
  PEERBLOOM_RETURN_IF_ERROR(store_->Restore(
      [feeds = feeds_.get()](const FeedPosition& p) { return feeds->Restore(p); }, &epoch));
  std::string bound;
  PEERBLOOM_RETURN_IF_ERROR(StartTransport(&bound));
  // The control endpoint and the who-has socket, their connections bounded by the descriptor
  // limit.
  lookups_ = std::make_unique<LookupService>(config_, *clock_, &context_,
                                             ListenerLimitsFor(DescriptorLimit()));
  PEERBLOOM_RETURN_IF_ERROR(lookups_->Start());
  PEERBLOOM_RETURN_IF_ERROR(StartGossip(epoch));
  PEERBLOOM_RETURN_IF_ERROR(StartRelay());
  digests_ = std::make_unique<DigestImporter>(engine_.get());
  PEERBLOOM_RETURN_IF_ERROR(digests_->Start(config_));
  Wire();
  PEERBLOOM_RETURN_IF_ERROR(
      observe_->StartMetrics(lookups_->limits().metrics, store_->data_dir(), clock_->NowMs()));
  LogStarted(bound);
  return Status::Ok();
}

void Daemon::LogStarted(const std::string& bound) const {
  const LocalStore& store = store_->store();
  spdlog::info(
      "peerbloomd '{}' serving peers on {} (advertised {}), control on {}, {} counters "
      "k={}, curve {}",
      config_.node_id, bound, advertise_, config_.control, store.filter().counters(),
      store.filter().k(), config_.curve ? "on" : "OFF");
  const ListenerLimits& limits = lookups_->limits();
  spdlog::info(
      "descriptor limit {}: connections held at most {} on the who-has socket, {} on /metrics, "
      "{} on a tcp control endpoint",
      DescriptorLimit(), limits.who_has, limits.metrics, limits.control);
}

// The peer socket, bound (its address in *bound) and advertised in peer.endpoint.
Status Daemon::StartTransport(std::string* bound) {
  TransportOptions to;
  to.listen = config_.listen;
  to.curve = config_.curve;
  to.keys = keys_.own;
  to.authorized = keys_.authorized;
  to.max_message_bytes = config_.max_message_bytes;
  to.send_queue_limit = config_.send_queue_limit;
  to.heartbeat_interval_ms = static_cast<int>(config_.link_heartbeat_interval_ms);
  to.heartbeat_timeout_ms = static_cast<int>(config_.link_heartbeat_timeout_ms);
  to.max_links = static_cast<size_t>(config_.max_links);
  transport_ = std::make_unique<Transport>(&context_, std::move(to));
  ApplyFaults();
  PEERBLOOM_RETURN_IF_ERROR(transport_->Start(bound));
  advertise_ = config_.advertise.empty() ? *bound : config_.advertise;
  return store_->data_dir().WriteFile("peer.endpoint", advertise_ + "\n");
}

Status Daemon::StartGossip(uint64_t epoch) {
  GossipOptions o;
  o.node_id = config_.node_id;
  o.endpoint = advertise_;
  o.public_key = config_.curve ? keys_.own.public_key : "";
  for (const Seed& seed : config_.seeds) {
    if (seed.endpoint != advertise_) o.seeds.push_back(seed);
  }
  o.key_scheme = config_.key_scheme;
  o.gossip_interval_ms = config_.gossip_interval_ms;
  o.failure_timeout_ms = config_.failure_timeout_ms;
  o.anti_entropy_interval_ms = config_.anti_entropy_interval_ms;
  o.failure_detector = config_.failure_detector;
  o.probe_interval_ms = config_.probe_interval_ms;
  o.suspicion_timeout_ms = config_.suspicion_timeout_ms;
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
  o.signer = keys_.signer;
  o.sign_keys = keys_.sign_keys;
  o.require_signatures = config_.require_signatures;
  // With CURVE, members are the allow-list's nodes; without, anyone who connects (loopback
  // only), up to max_members.
  o.listed_only = config_.curve;
  o.listed = keys_.listed;
  o.max_clock_skew_ms = config_.max_clock_skew_ms;
  PEERBLOOM_RETURN_IF_ERROR(ValidateGossipOptions(o));
  engine_ = std::make_unique<GossipEngine>(std::move(o));
  store_->StartPublishing(
      engine_.get(), [feeds = feeds_.get()] { return feeds->Positions(); }, epoch, clock_->NowMs());
  return Status::Ok();
}

// Message ids grow across restarts: the first is the wall clock in ms shifted left by 16, so
// a restarted node starts above every id it used unless it originated more than 65,536
// messages per ms of its previous run.
Status Daemon::StartRelay() {
  Status s = ValidateRelayConfig(config_);
  if (!s.ok()) return Status::InvalidArgument("relay settings: " + s.message());
  const uint64_t first_id = static_cast<uint64_t>(WallClockMs(config_)) << 16;
  LocalStore* store = &store_->store();
  relay_ = std::make_unique<RelayService>(config_, store->hasher().key(),
                                          ClusterTag(config_.cluster_secret), first_id);
  relay_->SetOriginKeys(keys_.signer, keys_.sign_keys, config_.require_signatures);
  // What it had seen before a restart: a replayed message stays a duplicate. A file that
  // cannot be read costs that protection for the window of the messages it held, not the
  // start; the next save replaces it.
  if (const Status seen = relay_->KeepSeenIn(&store_->data_dir()); !seen.ok()) {
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
  NginxPurgeFiles nginx_files;
  if (!feeds_->nginx_feeds().empty()) {
    nginx_files = [feed = feeds_->nginx_feeds().front().get()](std::string_view key) {
      return feed->PurgePaths(key);
    };
  }
  relay_->set_purge_handler(
      [&config = config_, store, nginx_files](const RelayReceived& purge, int64_t) {
        nlohmann::json result = CheckPurge(config, store, purge.body, nginx_files);
        result["purge_origin"] = purge.origin;
        result["purge_id"] = purge.id;
        return result;
      },
      std::move(runner));
  return Status::Ok();
}

// The stats, /metrics and the control operations read the parts Start made; they are wired
// last and hold references to them.
void Daemon::Wire() {
  const DaemonParts parts{config_,          advertise_,          store_->store(),
                          *engine_,         feeds_->feeds(),     feeds_->nginx_feeds(),
                          feeds_->routes(), lookups_->helpers(), feeds_->route_log()};
  observe_->Wire(parts, *transport_, lookups_->control(), lookups_->who_has_socket(), *digests_,
                 *store_, *relay_, lookups_->route_socket(), lookups_->nginx_routes());
  lookups_->Wire(parts, store_.get(), observe_->stats(), relay_.get(), &observe_->loop_metrics());
}

int64_t Daemon::NextDeadline(int64_t now) const {
  int64_t deadline = std::min(engine_->NextDeadline(), now + kMaxWaitMs);
  deadline = std::min(deadline, store_->NextDeadline(now));
  deadline = std::min(deadline, feeds_->NextDeadline(now));
  deadline = std::min(deadline, digests_->NextDeadline(now));
  if (notifier_ != nullptr) deadline = std::min(deadline, notifier_->NextPingMs());
  deadline = std::min(deadline, observe_->NextDeadline());
  return std::min(deadline, relay_->NextDeadline(now));
}

void Daemon::RunOnce(int64_t max_wait_ms) {
  int64_t now = clock_->NowMs();
  std::vector<zmq::pollitem_t> items;
  transport_->AppendPollItems(&items);
  lookups_->AppendPollItems(&items);
  const size_t feeds_at = items.size();
  feeds_->AppendPollItems(&items);
  const int64_t wait = std::clamp<int64_t>(NextDeadline(now) - now, 0, max_wait_ms);
  try {
    lookups_->Poll(&items, wait);
  } catch (const zmq::error_t& e) {
    if (e.num() != EINTR) spdlog::error("poll: {}", e.what());
    return;  // a signal: the caller looks at its flags
  }
  now = clock_->NowMs();
  engine_->SetWallClock(WallClockMs(config_), now);
  // Lookups first: a who-has waits for no peer frame, feed line or timer of this turn.
  lookups_->Serve(items, now);
  HandlePeerFrames(items, now);
  feeds_->Poll(items.data() + feeds_at, &store_->store(), now);
  feeds_->PollRouteLog(*engine_, now, WallClockMs(config_));
  digests_->Poll(now);
  store_->Poll(now);
  if (now >= engine_->NextDeadline()) engine_->OnTick(now);
  FlushOutgoing(now);
  relay_->Poll(*engine_, transport_.get(), now);
  observe_->Poll(now);
  PingWatchdog(now);
}

void Daemon::HandlePeerFrames(const std::vector<zmq::pollitem_t>& items, int64_t now) {
  transport_->Process(
      items.data(), now, [this, now](std::string_view payload, const std::string& link_node) {
        // A summary can take a while to decode: lookups that came meanwhile go first.
        lookups_->ServeNow();
        // A frame that makes the engine throw is refused like a malformed one (counted, logged
        // at a limited rate); the next frame is served.
        Status s;
        try {
          s = RelayService::IsRelayFrame(payload) ? relay_->OnFrame(payload, now, link_node)
                                                  : engine_->OnMessage(payload, now, link_node);
        } catch (const std::exception& e) {
          s = Status::Corruption("internal error: " + EscapeBytes(e.what()));
        }
        observe_->loop_metrics().CountIn(payload, s);
        return s;
      });
}

void Daemon::FlushOutgoing(int64_t now) {
  for (const Outgoing& out : engine_->TakeOutgoing()) {
    observe_->loop_metrics().CountOut(out.endpoint, out.payload);
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

Status Daemon::WriteSnapshotNow() { return store_->WriteSnapshotNow(clock_->NowMs()); }

void Daemon::set_snapshot_gate_for_test(std::function<void()> gate) {
  store_->set_snapshot_gate_for_test(std::move(gate));
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
  if (!ReloadKeys()) return;
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
  observe_->CountReload();
  spdlog::info("reloaded: {} seeds, log_level {}", config_.seeds.size(), config_.log_level);
}

// The keys, read once, go to every part that checks them: the allow-list to the transport
// (connections of removed keys are cut) and the gossip engine, the sign keys to the engine
// and the relay, so a rotated `sign=` key is checked from now on without a restart. A key
// set that cannot be read refuses the reload: nothing changes.
bool Daemon::ReloadKeys() {
  KeySet fresh;
  const Status s = LoadKeySet(&config_, &fresh);
  if (!s.ok()) {
    spdlog::error("reload refused, keeping the running keys: {}", s.message());
    return false;
  }
  transport_->SetAuthorized(fresh.authorized);
  if (config_.curve) {
    engine_->SetListed(fresh.listed, clock_->NowMs());
    engine_->SetSignKeys(fresh.sign_keys);
    relay_->SetOriginKeys(keys_.signer, fresh.sign_keys, config_.require_signatures);
  }
  fresh.signer = keys_.signer;  // this node's own key file is read at start only
  fresh.own = keys_.own;
  keys_ = std::move(fresh);
  return true;
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
