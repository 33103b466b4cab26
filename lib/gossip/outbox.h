// Outbox: frames out of the gossip engine. It writes each frame's header (this node's
// identity, epoch and heartbeat, the link flags), queues the frame for its endpoint and keeps
// the endpoints whose links the transport may close.
//
// Every endpoint may have at most max_pending_bytes_per_endpoint queued between two
// TakeOutgoing() calls; a frame that does not fit is dropped and counted. Nothing is lost for
// good: a dropped numbered frame is asked for again (below), a dropped digest is repaired by
// the next anti-entropy exchange.
//
// Summary frames (full summaries and deltas) and relay tree frames (prunes, grafts) to each
// endpoint are numbered 1, 2, ... (wire version 5), and kept for a resend: those sent in the
// last kKeptIntervals gossip intervals, and at least the last kKeptFrames, within kKeptBytes.
// A receiver that finds a number missing asks for it again (Resend) and gets the same bytes.
// A busy link carries more than kKeptFrames frames an interval, so the asks a receiver makes
// over about an interval must find them kept. A frame dropped here for a full queue still takes its
// number: the receiver sees the gap.
//
// A gap shows only when a later frame of the stream arrives, so the last frame of a burst, if
// lost, has nothing after it to show it. While frames are being lost around this node (it
// asked for a resend, or was asked for one, within the last kLossMemoryIntervals gossip
// intervals), a link whose last numbered frame went a quarter interval ago with nothing after
// it gets a tail mark: an empty numbered prune. Its number shows the receiver the gap (readers
// of version 5 and up; it prunes nothing). A second mark follows half an interval later while
// the link stays silent. On a network that loses nothing no mark is sent.
#ifndef PEERBLOOM_LIB_GOSSIP_OUTBOX_H_
#define PEERBLOOM_LIB_GOSSIP_OUTBOX_H_

#include <cstdint>
#include <deque>
#include <functional>
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
  // Whether this node chose the member at an endpoint as a neighbour. Once set, every frame
  // says so by its flags, whatever its sender passed: the neighbour flag to a chosen member,
  // the unlink flag to any other, so a member that holds a reverse link this node dropped
  // (its unlink frame lost) drops it at the next frame it gets from this node.
  void SetChosenLookup(std::function<bool(const std::string& endpoint)> chosen);
  // Whether this node pushes deltas to the member at an endpoint. Version 6: every frame to a
  // member it does not push to carries NO_PUSH (older readers skip the flag).
  void SetPushLookup(std::function<bool(const std::string& endpoint)> pushes);
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
  // An empty digest whose flags say the link as it is now (version 6: NO_PUSH when this node
  // stopped pushing deltas to the receiver).
  void SendLinkState(const std::string& endpoint, const std::string& public_key);

  // Asks the sender at `endpoint` to send these frames of its stream to us again.
  void SendResend(const std::string& endpoint, const std::string& public_key,
                  const std::vector<uint64_t>& seqs);
  // Sends again the kept numbered frames of these numbers to `endpoint`; numbers no longer
  // kept are skipped. Returns how many were sent.
  size_t Resend(const std::string& endpoint, const std::string& public_key,
                const std::vector<uint64_t>& seqs);

  // Tail marks (above). The clock every frame is stamped with (the engine's, set on each call
  // into it); must outlive the outbox.
  void SetClock(const int64_t* clock_ms) { clock_ms_ = clock_ms; }
  // Marks the streams to these links whose tails are due. Streams to other endpoints (a
  // requester answered once) are left unmarked: the requester asks again for what it lacks.
  void MarkTails(const std::vector<LinkTarget>& targets);
  // When MarkTails has work next (INT64_MAX: none).
  int64_t NextMarkMs() const { return Lossy() ? next_mark_ms_ : INT64_MAX; }
  static constexpr int64_t kLossMemoryIntervals = 60;
  // Marks after a link's last frame: a quarter interval after it, then half an interval after
  // the first mark (a mark lost with the frame it shows would leave the gap hidden).
  static constexpr int kTailMarks = 2;

  // Whether the endpoint's queue has no room left.
  bool QueueFull(const std::string& endpoint) const;
  // The link to `endpoint` is no longer needed (listed once until TakeDropped).
  void NoteDropped(const std::string& endpoint);

  std::vector<Outgoing> TakeOutgoing();
  std::vector<std::string> TakeDropped();

  // Per endpoint: frames kept for a resend (those of the last kKeptIntervals, and at least
  // the last kKeptFrames), and the bytes they may take.
  static constexpr int64_t kKeptIntervals = 2;
  static constexpr size_t kKeptFrames = 64;
  static constexpr size_t kKeptBytes = size_t{256} << 10;

 private:
  struct Kept {
    uint64_t seq = 0;
    WireType type = WireType::kDelta;
    std::string payload;
    int64_t sent_ms = 0;
  };
  // The numbered frames to one endpoint. The counter outlives the kept frames (a link
  // dropped and made again keeps numbering on), so a receiver never sees numbers go back.
  struct Stream {
    uint64_t next_seq = 1;
    std::deque<Kept> kept;
    size_t kept_bytes = 0;
    int64_t last_ms = 0;     // when the last numbered frame (or tail mark) was sent
    int marks = kTailMarks;  // tail marks sent since the last frame (none due at first)
  };
  // The stream to `endpoint` when frames are numbered (version 5), else null.
  Stream* StreamTo(const std::string& endpoint);
  // When the stream's next tail mark is due (INT64_MAX: none).
  int64_t MarkDueMs(const Stream& stream) const;
  // Takes the frame's number (already written into it) and keeps it for a resend.
  void Keep(Stream* stream, uint64_t seq, WireType type, const std::string& payload);

  const uint64_t cluster_tag_;
  const std::string node_id_;
  const std::string endpoint_;
  const std::string public_key_;
  const size_t max_pending_bytes_;
  const uint8_t wire_version_;
  const bool probes_;  // every header says the node runs the probe detector
  const int64_t interval_ms_;
  const LocalNode& self_;
  GossipStats* const stats_;
  std::function<bool(const std::string&)> chosen_;
  std::function<bool(const std::string&)> pushes_;

  int64_t Now() const { return clock_ms_ != nullptr ? *clock_ms_ : 0; }
  // Frames were lost on this node's links lately (a resend asked or answered).
  bool Lossy() const { return lossy_until_ms_ > Now(); }
  void NoteLoss() { lossy_until_ms_ = Now() + kLossMemoryIntervals * interval_ms_; }

  // Header() for a frame to `endpoint` (the chosen and push lookups decide the link flags).
  WireHeader HeaderTo(const std::string& endpoint, bool chosen, bool contact) const;
  // A digest with no entries: its header is the message.
  void SendEmptyDigest(const std::string& endpoint, const std::string& public_key,
                       const WireHeader& h);

  std::vector<Outgoing> outgoing_;
  std::unordered_map<std::string, size_t> pending_bytes_;
  std::vector<std::string> dropped_;
  std::unordered_map<std::string, Stream> streams_;
  const int64_t* clock_ms_ = nullptr;
  int64_t lossy_until_ms_ = INT64_MIN;
  int64_t next_mark_ms_ = INT64_MAX;  // the earliest tail mark due (while lossy)
};

}  // namespace peerbloom

#endif  // PEERBLOOM_LIB_GOSSIP_OUTBOX_H_
