// LinkStreams: the receiving side of numbered link streams (wire version 5, docs/gossip.md,
// "Lost frames on a link"). Each sender numbers the full summaries, deltas, prunes and grafts
// it sends to this node 1, 2, ... (Outbox); a number that is skipped is a frame lost on the way
// (the network, a reconnect, a full queue). The number is asked for again a fiftieth of an interval
// later, and again every quarter interval, at most kMaxAsks times; the sender answers from the
// frames it keeps. A stream restarts with the sender's epoch; the first frame of a stream only sets
// where it stands (what came before was for an earlier incarnation of this node, or is gone),
// unless its number is at most kFirstFrames: then the numbers before it are asked for.
//
// Not thread-safe; owned by Dissemination.
#ifndef PEERBLOOM_LIB_GOSSIP_LINK_STREAMS_H_
#define PEERBLOOM_LIB_GOSSIP_LINK_STREAMS_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lib/util/string_hash.h"
#include "peerbloom/gossip.h"

namespace peerbloom {

class LinkStreams {
 public:
  // Five asks span about an interval (the sender keeps its frames for two): with 5 % loss
  // each way, three asks all failed for about one lost frame in a thousand, which at 1,000
  // nodes left a few adds waiting for anti-entropy.
  static constexpr int kMaxAsks = 5;
  // A stream whose first frame seen is numbered at most this was seen from its start: the
  // numbers before it were lost, and are asked for.
  static constexpr uint64_t kFirstFrames = 4;

  // `grace_ms`: how long a gap may wait for a late frame before it is asked for; `retry_ms`:
  // the wait between asks. `stats` counts the gaps (link_gaps) and must outlive this.
  LinkStreams(int64_t grace_ms, int64_t retry_ms, GossipStats* stats);

  // Frame number `seq` (not 0) from `sender` in its epoch `sender_epoch`. True when the frame
  // came before or fills a gap (a resend, a network duplicate or a late copy): that it is held
  // already says nothing of a second path.
  bool Note(const std::string& sender, uint64_t sender_epoch, uint64_t seq, int64_t now_ms);

  // The numbers due to be asked for, by sender (at most kMaxResendSeqs each, oldest first).
  std::vector<std::pair<std::string, std::vector<uint64_t>>> TakeDue(int64_t now_ms);
  // When TakeDue has work next (INT64_MAX: none).
  int64_t NextDueMs() const;

  // The sender is gone or restarted: its stream is void.
  void Forget(const std::string& sender);

  // Numbers missing from every stream, not yet given up (tests).
  size_t missing() const;

 private:
  struct Stream {
    uint64_t epoch = 0;
    uint64_t next = 0;                // the number expected next
    std::map<uint64_t, int> missing;  // number -> asks so far
    int64_t ask_ms = 0;               // when the missing numbers are asked for next
  };

  const int64_t grace_ms_;
  const int64_t retry_ms_;
  GossipStats* const stats_;
  StringMap<Stream> streams_;
  StringSet gapped_;  // senders whose streams have numbers missing
};

}  // namespace peerbloom

#endif  // PEERBLOOM_LIB_GOSSIP_LINK_STREAMS_H_
