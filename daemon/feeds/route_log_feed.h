// RouteLogFeed: follows Squid's route log (`squid_route_log`, peerbloom/squid_route_log.h) and
// turns each routed request into an outcome for RouteOutcomes: a hit at the peer at once, a
// request that went direct held until the peer's liveness tells a false hit from an
// unreachable peer. The log is followed like a feed (rotation by rename or copytruncate), from
// its end at start: outcomes of requests before the daemon started are not counted.
//
// Thread-safety: none (the loop's thread). Resource owner: not copyable.
#ifndef PEERBLOOM_DAEMON_FEEDS_ROUTE_LOG_FEED_H_
#define PEERBLOOM_DAEMON_FEEDS_ROUTE_LOG_FEED_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/feeds/file_follower.h"
#include "daemon/observe/route_outcomes.h"
#include "peerbloom/status.h"

namespace peerbloom::daemon {

struct RouteLogStats {
  uint64_t lines = 0;    // lines read
  uint64_t routed = 0;   // of them, routed requests
  uint64_t unnamed = 0;  // routed to a cache_peer name no node id maps to (counted as is)
  uint64_t read_errors = 0;
};

class RouteLogFeed {
 public:
  // `names`: node id -> cache_peer name (squid_peer_names); a name not in it is taken as the
  // node id itself, as the helper answers it.
  RouteLogFeed(std::string path, const std::map<std::string, std::string>& names);
  RouteLogFeed(const RouteLogFeed&) = delete;
  RouteLogFeed& operator=(const RouteLogFeed&) = delete;

  // Reads what the log gained. `now_ms` (monotonic) and `wall_ms` (Unix ms) place each
  // request in monotonic time by its logged end. A peer that, named or as is, is not a
  // member (`is_member`) counts in the totals and `untracked` only, as unreachable when it
  // went direct: the log's bytes never become a row, a stats key or a metric label. True when
  // a read limit stopped it early.
  bool Poll(int64_t now_ms, int64_t wall_ms, RouteOutcomes* outcomes,
            const std::function<bool(std::string_view)>& is_member);

  const RouteLogStats& stats() const { return stats_; }
  const FileFollower& follower() const { return follower_; }
  const std::string& last_error() const { return last_error_; }

 private:
  FileFollower follower_;
  std::map<std::string, std::string, std::less<>> node_of_;  // cache_peer name -> node id
  std::vector<std::string> lines_;
  RouteLogStats stats_;
  std::string last_error_;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_FEEDS_ROUTE_LOG_FEED_H_
