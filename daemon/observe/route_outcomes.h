// RouteOutcomes: what became of the requests a cache routed to a peer because that peer's
// summary claimed the URL (docs/squid.md, "What became of routed requests"). A routed request
// ends as a hit at the peer, as a false hit (the peer was up and did not hold it: one wasted
// hop) or as unreachable (the peer was down or cut off: the request went direct for want of
// it). The false-hit rate, false hits over hits and false hits, is the measured counterpart
// of the summary's estimated false-positive rate; outages do not count in it.
//
// Outcomes come from the daemon's own reading of Squid's route log (RouteLogFeed), and from
// the `report` control operation (`peerbloom report`, `peerbloom squid-outcomes`), whose
// misses count as false hits as reported. A request from the log that went direct is held
// until the peer is heard from after it (a false hit: the peer was alive) or a failure
// timeout passes without a word from the peer (unreachable).
//
// Counters only grow; the number of nodes tracked and of requests held are bounded.
// Thread-safety: none (the loop's thread).
#ifndef PEERBLOOM_DAEMON_OBSERVE_ROUTE_OUTCOMES_H_
#define PEERBLOOM_DAEMON_OBSERVE_ROUTE_OUTCOMES_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace peerbloom::daemon {

struct RouteCounts {
  uint64_t routed = 0;       // hits + false_hits + unreachable
  uint64_t hits = 0;         // the peer held the URL
  uint64_t false_hits = 0;   // the peer was up and did not: the request went on direct
  uint64_t unreachable = 0;  // the peer was down or cut off: the request went direct
  // false_hits / (hits + false_hits), 0 before any.
  double FalseHitRate() const {
    const uint64_t answered = hits + false_hits;
    return answered == 0 ? 0.0 : static_cast<double>(false_hits) / static_cast<double>(answered);
  }
};

enum class RouteOutcome { kHit, kFalseHit, kUnreachable };

class RouteOutcomes {
 public:
  // Nodes beyond this many are not tracked one by one (counted in the totals and `untracked`):
  // a report names any node, and memory must not grow with what a client sends.
  static constexpr size_t kMaxNodes = 4096;
  // Requests that went direct and wait to be told apart; more are settled as false hits.
  static constexpr size_t kMaxPending = 100000;

  // Counts `count` outcomes of requests routed to `node`. A node that is not `known` (not a
  // member: a name a client made up) counts in the totals and `untracked` only, so that what
  // a client names cannot grow the per-node table, stats or /metrics.
  void Report(std::string_view node, RouteOutcome outcome, uint64_t count, bool known = true);
  // A request routed to `node` went direct at monotonic time `at_ms`: a false hit or an
  // unreachable peer, settled by Settle.
  void Direct(std::string_view node, int64_t at_ms);
  // Settles the held requests: a false hit when `last_heard(node)` (monotonic ms the node was
  // last heard from, nullopt for a node not known) is after the request, unreachable when
  // `failure_timeout_ms` passed since it without a word from the node.
  void Settle(int64_t now_ms, int64_t failure_timeout_ms,
              const std::function<std::optional<int64_t>(std::string_view)>& last_heard);

  // The counts of `node`, zero when nothing was reported for it.
  RouteCounts For(std::string_view node) const;
  const RouteCounts& total() const { return total_; }
  const std::map<std::string, RouteCounts, std::less<>>& nodes() const { return nodes_; }
  uint64_t reports() const { return reports_; }
  uint64_t untracked() const { return untracked_; }
  size_t pending() const { return pending_.size(); }

 private:
  struct Pending {
    std::string node;
    int64_t at_ms = 0;
  };
  std::map<std::string, RouteCounts, std::less<>> nodes_;
  RouteCounts total_;
  std::deque<Pending> pending_;  // in arrival order
  uint64_t reports_ = 0;
  uint64_t untracked_ = 0;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_OBSERVE_ROUTE_OUTCOMES_H_
