// LocalNode: this node as it gossips itself. It holds the heartbeat and the node's own
// summary as the daemon publishes it, and what neighbours were last told of it: deltas
// published between two rounds leave as one (docs/gossip.md).
//
// Pure state: no frames are sent from here. The engine asks for the pending update each
// round, sends it, and marks it announced.
#ifndef PEERBLOOM_LIB_GOSSIP_LOCAL_NODE_H_
#define PEERBLOOM_LIB_GOSSIP_LOCAL_NODE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lib/gossip/delta_cache.h"
#include "peerbloom/gossip.h"
#include "peerbloom/summary.h"
#include "peerbloom/wire.h"

namespace peerbloom {

// The origin signatures that travel with an update (empty without a signer).
struct UpdateSigs {
  std::string state;  // of the summary state after the update
  std::string delta;  // deltas only
};

class LocalNode {
 public:
  // Uses node_id, endpoint, public_key, key_scheme and recent_delta_bytes of `options`.
  explicit LocalNode(const GossipOptions& options);
  LocalNode(const LocalNode&) = delete;
  LocalNode& operator=(const LocalNode&) = delete;

  // Heartbeats start at 1 so that a peer's first sight of the node counts as progress.
  void Start();
  // The heartbeat advances by one: the node's digest entry is gossiped at the next round.
  // Nothing else moves it: what peers say of this node's heartbeat is never taken (a restart
  // is a new epoch, so beats never need to jump past an earlier incarnation's).
  void Beat();
  // Whether the node's entry changed since the last call.
  bool TakeFresh();

  // False (nothing changes) when the summary is not this node's or of another key scheme.
  bool PublishFull(const Summary& summary);
  // False (nothing changes) when the delta does not fit the held summary: origin, epoch,
  // base version, geometry, positions or result digest.
  bool PublishDelta(const SummaryDelta& delta);

  // The update due to neighbours: a full summary after PublishFull, else one delta from the
  // announced version to the current one (the published deltas' net flips). False when
  // nothing is due.
  bool PendingUpdate(WireType* type, std::string* codec_bytes);
  // The signatures of the update PendingUpdate returned.
  UpdateSigs SignPending(WireType type, std::string_view codec_bytes);
  // The update from PendingUpdate went out at `now_ms`.
  void MarkAnnounced(WireType type, const std::string& codec_bytes, int64_t now_ms,
                     const UpdateSigs& sigs = {});
  // The signature of the held summary's state, made once per version (empty without a
  // signer).
  const std::string& StateSig();

  // The codec bytes of the held summary, encoded once per version. False without one.
  bool Encoded(std::string* codec_bytes);
  // The announced deltas from version `have` to the announced version, or none.
  std::vector<const CachedDelta*> DeltasFrom(uint64_t have) const;
  // The node's digest entry: only announced versions are named.
  DigestEntry Entry() const;

  uint64_t epoch() const { return own_.epoch; }
  uint64_t heartbeat() const { return heartbeat_; }
  bool has_summary() const { return has_own_; }
  // A full summary was published but not sent yet.
  bool full_pending() const { return own_full_pending_; }
  uint64_t announced_version() const { return announced_version_; }
  int64_t announced_ms() const { return announced_ms_; }
  const Summary& summary() const { return own_; }

 private:
  const std::string node_id_;
  const std::string endpoint_;
  const std::string public_key_;
  const KeyScheme key_scheme_;
  const size_t recent_delta_bytes_;
  const bool probes_;  // runs the probe failure detector: its entry says so

  uint64_t heartbeat_ = 0;
  bool fresh_ = false;
  bool has_own_ = false;
  Summary own_;
  uint64_t own_digest_ = 0;
  uint64_t announced_version_ = 0;  // what neighbours were last sent
  uint64_t announced_digest_ = 0;
  int64_t announced_ms_ = 0;
  bool own_full_pending_ = false;
  std::vector<uint64_t> pending_flips_;  // since the announced version, unsorted
  DeltaCache own_recent_;
  std::string own_encoded_;  // cache of EncodeSummary(own_), empty when stale
  // Signed origins: the signer (may be null), the state signature of own_ (empty when stale)
  // and the certificate of own_.epoch.
  const std::shared_ptr<const OriginSigner> signer_;
  const uint64_t cluster_tag_;
  std::string own_state_sig_;
  std::string own_epoch_cert_;
  uint64_t own_cert_epoch_ = 0;
  std::string beat_sig_;  // of (own_.epoch, heartbeat_); empty without a signer

  void SignBeat();
};

}  // namespace peerbloom

#endif  // PEERBLOOM_LIB_GOSSIP_LOCAL_NODE_H_
