#include "daemon/feeds/route_log_feed.h"

#include <algorithm>
#include <utility>

#include "peerbloom/squid_route_log.h"

namespace peerbloom::daemon {
namespace {

FileFollowerOptions Options() {
  FileFollowerOptions o;
  o.start_at_end = true;
  return o;
}

}  // namespace

RouteLogFeed::RouteLogFeed(std::string path, const std::map<std::string, std::string>& names)
    : follower_(std::move(path), Options()) {
  for (const auto& [node, name] : names) node_of_[name] = node;
}

bool RouteLogFeed::Poll(int64_t now_ms, int64_t wall_ms, RouteOutcomes* outcomes,
                        const std::function<bool(std::string_view)>& is_member) {
  bool more = false;
  const Status s = follower_.Poll(&lines_, &more);
  if (!s.ok()) {
    ++stats_.read_errors;
    last_error_ = s.message();
    return false;
  }
  for (const std::string& line : lines_) {
    ++stats_.lines;
    RouteLogEntry e = ParseRouteLogLine(line);
    if (e.outcome == RouteLogOutcome::kNotRouted) continue;
    ++stats_.routed;
    const auto it = node_of_.find(e.peer);
    if (it != node_of_.end()) {
      e.peer = it->second;
    } else {
      ++stats_.unnamed;
    }
    if (!is_member(e.peer)) {
      outcomes->Report(
          e.peer,
          e.outcome == RouteLogOutcome::kPeer ? RouteOutcome::kHit : RouteOutcome::kUnreachable, 1,
          /*known=*/false);
      continue;
    }
    if (e.outcome == RouteLogOutcome::kPeer) {
      outcomes->Report(e.peer, RouteOutcome::kHit, 1);
      continue;
    }
    // The request's end in monotonic time: never later than now, whatever the clocks say.
    const int64_t age = e.unix_ms > 0 ? std::max<int64_t>(0, wall_ms - e.unix_ms) : 0;
    outcomes->Direct(e.peer, now_ms - age);
  }
  return more;
}

}  // namespace peerbloom::daemon
