// RouteOutcomes: what became of the requests a cache routed to a peer because that peer's
// summary claimed the URL (docs/squid.md, "Routing misses"). A routed request ends as a hit
// at the peer or as a false hit (the peer did not hold it, one wasted hop); the false-hit
// rate is the measured counterpart of the summary's estimated false-positive rate.
//
// Outcomes come from the `report` control operation (`peerbloom report`, `peerbloom
// squid-outcomes`). Counters only grow; the number of nodes tracked is bounded.
// Thread-safety: none (the loop's thread).
#ifndef PEERBLOOM_DAEMON_ROUTE_OUTCOMES_H_
#define PEERBLOOM_DAEMON_ROUTE_OUTCOMES_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace peerbloom::daemon {

struct RouteCounts {
  uint64_t routed = 0;      // hits + false_hits
  uint64_t hits = 0;        // the peer held the URL
  uint64_t false_hits = 0;  // the peer did not: the request went on direct
  // false_hits / routed, 0 before anything was routed.
  double FalseHitRate() const {
    return routed == 0 ? 0.0 : static_cast<double>(false_hits) / static_cast<double>(routed);
  }
};

class RouteOutcomes {
 public:
  // Nodes beyond this many are not tracked one by one (counted in the totals and `untracked`):
  // a report names any node, and memory must not grow with what a client sends.
  static constexpr size_t kMaxNodes = 4096;

  // Counts `count` outcomes of requests routed to `node`.
  void Report(std::string_view node, bool hit, uint64_t count);

  // The counts of `node`, zero when nothing was reported for it.
  RouteCounts For(std::string_view node) const;
  const RouteCounts& total() const { return total_; }
  const std::map<std::string, RouteCounts, std::less<>>& nodes() const { return nodes_; }
  uint64_t reports() const { return reports_; }
  uint64_t untracked() const { return untracked_; }

 private:
  std::map<std::string, RouteCounts, std::less<>> nodes_;
  RouteCounts total_;
  uint64_t reports_ = 0;
  uint64_t untracked_ = 0;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_ROUTE_OUTCOMES_H_
