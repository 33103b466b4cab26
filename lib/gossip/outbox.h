// Outbox: frames out of the gossip engine. It writes each frame's header (this node's
// identity, epoch and heartbeat, the link flags), queues the frame for its endpoint and keeps
// the endpoints whose links the transport may close.
//
// Every endpoint may have at most max_pending_bytes_per_endpoint queued between two
// TakeOutgoing() calls; a frame that does not fit is dropped and counted. Nothing is lost for
// good: a dropped delta shows as a gap at the receiver (which asks for a full summary), a
// dropped digest or full summary is repaired by the next anti-entropy exchange.
#ifndef PEERBLOOM_LIB_GOSSIP_OUTBOX_H_
#define PEERBLOOM_LIB_GOSSIP_OUTBOX_H_

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lib/gossip/local_node.h"
#include "peerbloom/gossip.h"
#include "peerbloom/wire.h"

namespace peerbloom {

// A destination of round traffic.
struct LinkTarget {
  std::string endpoint;
  std::string public_key;
  std::string member_id;
  bool chosen = false;  // frames carry kWireFlagNeighbour
  bool push = false;    // deltas may go on it (chosen, or one of the capped inbound links)
};

class Outbox {
 public:
  // Uses cluster_tag, node_id, endpoint, public_key and max_pending_bytes_per_endpoint of
  // `options`. `self` (epoch, heartbeat of every header) and `stats` (message counters) must
  // outlive the outbox.
  Outbox(const GossipOptions& options, const LocalNode& self, GossipStats* stats);
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;

  // The header of a frame from this node: `chosen` sets the neighbour flag, `contact` adds
  // the advertised endpoint and key.
  WireHeader Header(bool chosen, bool contact) const;
  // Queues one encoded frame, or drops it when the endpoint's queue is full.
  void Send(const std::string& endpoint, const std::string& public_key, std::string payload,
            WireType type);

  // Encode and Send. A frame that does not encode is not sent.
  void SendDigest(const std::string& endpoint, const std::string& public_key, bool chosen,
                  const DigestBody& body);
  // `state_sig` and `delta_sig`: the origin's signatures (empty: unsigned).
  void SendSummaryBytes(const std::string& endpoint, const std::string& public_key, bool chosen,
                        WireType type, std::string_view codec_bytes,
                        std::string_view state_sig = {}, std::string_view delta_sig = {});
  void SendRequests(const std::string& endpoint, const std::string& public_key,
                    const std::vector<FullRequest>& requests);
  // A prune or graft frame; false when it did not encode.
  bool SendOrigins(const std::string& endpoint, const std::string& public_key, bool chosen,
                   WireType type, const std::vector<std::string>& origins);
  void SendImports(const std::string& endpoint, const std::string& public_key, bool chosen,
                   const std::vector<ImportedDigestEntry>& entries);
  // A probe of the probe failure detector. `contact`: add this node's endpoint and key (for a
  // member that may not know them yet).
  void SendProbe(const std::string& endpoint, const std::string& public_key, bool chosen,
                 const ProbeBody& body, bool contact);
  // An empty digest with the unlink flag: the receiver stops counting this node as linked.
  void SendUnlink(const std::string& endpoint, const std::string& public_key);

  // Whether the endpoint's queue has no room left.
  bool QueueFull(const std::string& endpoint) const;
  // The link to `endpoint` is no longer needed (listed once until TakeDropped).
  void NoteDropped(const std::string& endpoint);

  std::vector<Outgoing> TakeOutgoing();
  std::vector<std::string> TakeDropped();

 private:
  const uint64_t cluster_tag_;
  const std::string node_id_;
  const std::string endpoint_;
  const std::string public_key_;
  const size_t max_pending_bytes_;
  const uint8_t wire_version_;
  const bool probes_;  // every header says the node runs the probe detector
  const LocalNode& self_;
  GossipStats* const stats_;

  std::vector<Outgoing> outgoing_;
  std::unordered_map<std::string, size_t> pending_bytes_;
  std::vector<std::string> dropped_;
};

}  // namespace peerbloom

#endif  // PEERBLOOM_LIB_GOSSIP_OUTBOX_H_
