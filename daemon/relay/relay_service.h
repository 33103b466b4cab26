// RelayService: the daemon's side of the broadcast relay (docs/relay.md). It owns the
// RelayNode of this node, carries its packets in wire frames of type 5 over the Transport to
// the endpoints gossip membership knows for the configured relay links (`relay_links`), drives
// its ticks from the event loop and keeps the recent deliveries for the `listen` control
// operation, which reads them after a cursor.
//
// Broadcast payloads start with one kind byte (RelayPayloadKind): plain messages, cluster-wide
// purges and the purge results nodes broadcast back. A purge is handed to the PurgeHandler
// the daemon installs (the filter check, relay_purge.h); an action it calls for (an HTTP
// PURGE, the purge command) runs on the PurgeRunner's thread, and the result is broadcast
// when it is done, on a later turn of the loop. Purges asked for at this node only
// (StartLocalPurge) run there too; their results wait for the control client to fetch them.
//
// Thread-safety: none; the daemon's event loop owns it.
#ifndef PEERBLOOM_DAEMON_RELAY_RELAY_SERVICE_H_
#define PEERBLOOM_DAEMON_RELAY_RELAY_SERVICE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/relay/purge_runner.h"
#include "daemon/store/local_files.h"
#include "daemon/transport/transport.h"
#include "peerbloom/gossip.h"
#include "peerbloom/relay.h"
#include "peerbloom/status.h"

namespace peerbloom::daemon {

// The first byte of every broadcast payload. Frozen values.
enum class RelayPayloadKind : uint8_t {
  kMessage = 0,      // `peerbloom broadcast`: the rest is the operator's bytes
  kPurge = 1,        // `peerbloom purge URL --cluster`: the rest is the URL
  kPurgeResult = 2,  // a node's answer to a purge: JSON (docs/relay.md, "Cluster-wide purge")
};
std::string_view RelayPayloadKindName(RelayPayloadKind kind);

// One delivery as `listen` returns it.
struct RelayReceived {
  uint64_t seq = 0;  // 1, 2, ... in delivery order at this node since start
  std::string origin;
  uint64_t id = 0;
  uint32_t hops = 0;
  RelayPayloadKind kind = RelayPayloadKind::kMessage;
  std::string body;  // the payload after the kind byte
};

class RelayService {
 public:
  // Runs for each delivered purge (at every node, the origin included), on the loop; returns
  // the filter check's JSON object (relay_purge.h). Where it names an action, the runner does
  // the action; the object is then broadcast back as the purge result.
  using PurgeHandler = std::function<nlohmann::json(const RelayReceived& purge, int64_t now_ms)>;

  // Deliveries kept for `listen`, at most this many and this many payload bytes; older ones
  // are dropped (a reader behind them is told).
  static constexpr size_t kMaxKept = 100000;
  static constexpr size_t kMaxKeptBytes = size_t{64} << 20;

  // `first_id`: above any message id this node used before (docs/relay.md).
  RelayService(const Config& config, const SipKey& index_key, uint64_t cluster_tag,
               uint64_t first_id);
  RelayService(const RelayService&) = delete;
  RelayService& operator=(const RelayService&) = delete;

  // Whether `frame` is a broadcast frame (wire type 5): the loop hands those here instead of
  // to the gossip engine.
  static bool IsRelayFrame(std::string_view frame);
  // One broadcast frame from a peer on a link authenticated as `link_node_id` (empty without
  // CURVE: then any sender id is taken). Non-OK for a frame the transport should count
  // refused, among them one whose sender is not the link's node.
  Status OnFrame(std::string_view frame, int64_t now_ms, std::string_view link_node_id = {});
  // Signed origins (docs/relay.md, "Origin signatures"): this node signs its broadcasts with
  // `signer` (may be null) and takes a message only when its origin signed it with a key of
  // `keys` (may be null: no keys); an origin without keys passes unsigned unless `require`.
  void SetOriginKeys(std::shared_ptr<const OriginSigner> signer,
                     std::shared_ptr<const SignKeyRing> keys, bool require);
  // Refreshes the links from membership, ticks the relay when due, sends what it queued and
  // runs the purge handler on new purges.
  void Poll(const GossipEngine& engine, Transport* transport, int64_t now_ms);
  int64_t NextDeadline(int64_t now_ms) const;

  // Originates a message of `kind`. ResourceExhausted over this node's own rate,
  // InvalidArgument over the payload cap.
  Status Broadcast(RelayPayloadKind kind, std::string_view body, int64_t now_ms, uint64_t* id);
  // Deliveries with seq > `after`, at most `max`. *missed: deliveries after `after` that are
  // no longer kept.
  std::vector<const RelayReceived*> After(uint64_t after, size_t max, uint64_t* missed) const;
  uint64_t last_seq() const { return next_seq_ - 1; }
  bool repairs_pending() const { return !node_->Idle(); }

  void set_purge_handler(PurgeHandler handler, std::unique_ptr<PurgeRunner> runner) {
    purge_handler_ = std::move(handler);
    purge_runner_ = std::move(runner);
  }
  // Runs the action of a purge asked for at this node only (`checked`: CheckPurge's result)
  // on the runner. *ticket: what to ask LocalPurgeResult with. ResourceExhausted when the
  // runner's queue is full.
  Status StartLocalPurge(nlohmann::json checked, uint64_t* ticket);
  // *done: whether that purge has finished; then *result holds its result, which is handed
  // out once. NotFound for a ticket not (or no longer) known: at most kMaxLocalResults
  // finished results wait to be fetched, the oldest are dropped.
  Status LocalPurgeResult(uint64_t ticket, bool* done, nlohmann::json* result);
  static constexpr size_t kMaxLocalResults = 1024;

  nlohmann::json Stats() const;
  const RelayStats& relay_stats() const { return node_->stats(); }

  // Keeps the seen messages in `dir`'s relay.seen (docs/relay.md, "Replays across a
  // restart"): restores them now, then writes them before a delivered purge's action runs and
  // every kSeenSaveMs while others arrive. Corruption for a file that cannot be read back
  // (the caller decides; nothing is restored). `dir` must outlive this service.
  Status KeepSeenIn(const DataDir* dir);
  // Writes them now (at stop). Errors are counted and logged.
  Status SaveSeen();
  static constexpr int64_t kSeenSaveMs = 5000;
  // Saves for delivered purges are at least this far apart.
  static constexpr int64_t kSeenGapMs = 1000;
  // Results answering one origin's purges: at most relay_rate_limit / kResultShare a second.
  static constexpr uint32_t kResultShare = 4;

 private:
  void RefreshLinks(const GossipEngine& engine, int64_t now_ms);
  void TakeDeliveries();
  void Send(Transport* transport, int64_t now_ms);
  void RunPurges(int64_t now_ms);
  // Whether messages were seen since relay.seen was last written (false without a data dir).
  bool SeenUnsaved() const;
  // Broadcasts the result of a purge `origin` sent, unless results answering `origin` have
  // used their share of this node's broadcast rate this second (kResultShare): then it is
  // dropped and counted, so one origin's purge flood cannot spend the budget the answers to
  // other origins and this node's own broadcasts need.
  void BroadcastPurgeResult(const std::string& origin, const nlohmann::json& result,
                            int64_t now_ms);

  const Config& config_;
  uint64_t cluster_tag_;
  std::unique_ptr<RelayNode> node_;
  struct LinkInfo {
    std::string endpoint;
    std::string public_key;
    bool up = false;
  };
  std::map<std::string, LinkInfo> links_;  // relay link id -> where it is
  int64_t next_tick_ms_ = 0;
  int64_t next_refresh_ms_ = 0;
  std::deque<RelayReceived> kept_;
  size_t kept_bytes_ = 0;
  uint64_t next_seq_ = 1;
  PurgeHandler purge_handler_;
  std::vector<RelayReceived> purges_pending_;  // their ids on disk (or no data dir): to run
  std::vector<RelayReceived> purges_unsaved_;  // delivered since relay.seen was last written
  std::unique_ptr<PurgeRunner> purge_runner_;
  uint64_t next_ticket_ = 1;  // local purges; ticket 0: a cluster purge
  std::set<uint64_t> local_running_;
  std::map<uint64_t, nlohmann::json> local_results_;
  // Counters beyond RelayStats.
  uint64_t frames_refused_ = 0;
  uint64_t sender_mismatch_ = 0;  // frames naming another sender than their link's node
  std::shared_ptr<const OriginSigner> signer_;
  std::shared_ptr<const SignKeyRing> sign_keys_;
  bool require_signatures_ = false;
  const DataDir* seen_dir_ = nullptr;
  uint64_t seen_saved_changes_ = 0;
  int64_t next_seen_save_ms_ = 0;
  int64_t last_seen_save_ms_ = INT64_MIN / 2;
  uint64_t seen_saves_ = 0;
  uint64_t seen_save_errors_ = 0;
  uint64_t sent_no_endpoint_ = 0;  // packets for a link membership has no endpoint for
  uint64_t broadcasts_ = 0;
  uint64_t broadcasts_refused_ = 0;
  uint64_t purges_ = 0;
  uint64_t purge_actions_refused_ = 0;  // the runner's queue was full
  uint64_t purge_errors_ = 0;           // purges whose handling threw (contained, logged)
  uint64_t listen_dropped_ = 0;         // deliveries dropped from the `listen` buffer
  // Results broadcast this second per purge origin (cleared each second), and those dropped.
  std::unordered_map<std::string, uint32_t> results_this_second_;
  int64_t results_second_ = -1;
  uint64_t purge_results_dropped_ = 0;
};

// Whether the relay keys of `config` make valid RelayOptions (the config parser's check).
Status ValidateRelayConfig(const Config& config);

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_RELAY_RELAY_SERVICE_H_
