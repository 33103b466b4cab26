// Gaps in numbered link streams, and when to ask for them again.
#include "lib/gossip/link_streams.h"

#include <algorithm>

#include "peerbloom/wire.h"

namespace peerbloom {

LinkStreams::LinkStreams(int64_t grace_ms, int64_t retry_ms, GossipStats* stats)
    : grace_ms_(grace_ms), retry_ms_(retry_ms), stats_(stats) {}

bool LinkStreams::Note(const std::string& sender, uint64_t sender_epoch, uint64_t seq,
                       int64_t now_ms) {
  Stream& s = streams_[sender];
  if (s.next == 0 || s.epoch != sender_epoch) {
    gapped_.erase(sender);
    s = Stream();
    s.epoch = sender_epoch;
    // A stream seen from near its start (a new link, or the answer to a request) lost its
    // first frames on the way: numbers from 1 are asked for. Further in, the numbers before
    // went to an earlier incarnation of this node, or are gone.
    s.next = seq <= kFirstFrames ? 1 : seq;
    if (seq == s.next) {
      s.next = seq + 1;
      return false;
    }
  }
  if (seq < s.next) {
    if (s.missing.erase(seq) != 0 && s.missing.empty()) gapped_.erase(sender);
    return true;
  }
  // Numbers skipped are missing; only the latest kMaxResendSeqs can still be kept by the
  // sender, so older ones are not asked for.
  const uint64_t first = seq - s.next > kMaxResendSeqs ? seq - kMaxResendSeqs : s.next;
  if (s.missing.empty() && first < seq) s.ask_ms = now_ms + grace_ms_;
  for (uint64_t n = first; n < seq; ++n) s.missing.emplace(n, 0);
  stats_->link_gaps += seq - s.next;
  while (s.missing.size() > kMaxResendSeqs) s.missing.erase(s.missing.begin());
  if (!s.missing.empty()) gapped_.insert(sender);
  s.next = seq + 1;
  return false;
}

std::vector<std::pair<std::string, std::vector<uint64_t>>> LinkStreams::TakeDue(int64_t now_ms) {
  std::vector<std::pair<std::string, std::vector<uint64_t>>> due;
  for (auto g = gapped_.begin(); g != gapped_.end();) {
    Stream& s = streams_[*g];
    if (s.ask_ms > now_ms) {
      ++g;
      continue;
    }
    std::vector<uint64_t> seqs;
    for (auto it = s.missing.begin(); it != s.missing.end();) {
      seqs.push_back(it->first);
      it = ++it->second >= kMaxAsks ? s.missing.erase(it) : std::next(it);
    }
    s.ask_ms = now_ms + retry_ms_;
    due.emplace_back(*g, std::move(seqs));
    g = s.missing.empty() ? gapped_.erase(g) : std::next(g);
  }
  return due;
}

int64_t LinkStreams::NextDueMs() const {
  int64_t next = INT64_MAX;
  for (const std::string& sender : gapped_) next = std::min(next, streams_.at(sender).ask_ms);
  return next;
}

void LinkStreams::Forget(const std::string& sender) {
  streams_.erase(sender);
  gapped_.erase(sender);
}

size_t LinkStreams::missing() const {
  size_t n = 0;
  for (const std::string& sender : gapped_) n += streams_.at(sender).missing.size();
  return n;
}

}  // namespace peerbloom
