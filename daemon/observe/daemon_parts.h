// DaemonParts: the parts of a running daemon that the control operations (ControlOps) and
// the stats answers (StatsReport) read, as references. Daemon wires them after Start has made every
// part; every reference must outlive the holder.
#ifndef PEERBLOOM_DAEMON_OBSERVE_DAEMON_PARTS_H_
#define PEERBLOOM_DAEMON_OBSERVE_DAEMON_PARTS_H_

#include <memory>
#include <string>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/feeds/feed.h"
#include "daemon/feeds/nginx_cache_feed.h"
#include "daemon/feeds/route_log_feed.h"
#include "daemon/observe/helper_reports.h"
#include "daemon/observe/route_outcomes.h"
#include "daemon/store/local_store.h"
#include "peerbloom/gossip.h"

namespace peerbloom::daemon {

struct DaemonParts {
  const Config& config;
  const std::string& endpoint;  // the advertised peer endpoint
  LocalStore& store;
  const GossipEngine& engine;
  const std::vector<std::unique_ptr<Feed>>& feeds;
  const std::vector<std::unique_ptr<NginxCacheFeed>>& nginx_feeds;
  RouteOutcomes& routes;                           // outcomes of requests routed to peers
  const HelperReports& helpers;                    // what Squid's helpers answered
  const std::unique_ptr<RouteLogFeed>& route_log;  // null without squid_route_log
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_OBSERVE_DAEMON_PARTS_H_
