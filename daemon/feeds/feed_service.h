// FeedService: the files and FIFOs the caches write, read into the node's state on the loop:
// the line and store.log feeds into the store, Squid's route log into routing outcomes
// (settled against the peers' liveness). A FIFO is read when the loop's poll finds it
// readable; files on a timer (kFeedPollMs), at once again while a feed is behind.
//
// Thread-safety: none (the loop's thread; a store.log rebuild reads on its own thread, see
// feed.h).
#ifndef PEERBLOOM_DAEMON_FEEDS_FEED_SERVICE_H_
#define PEERBLOOM_DAEMON_FEEDS_FEED_SERVICE_H_

#include <cstdint>
#include <memory>
#include <vector>
#include <zmq.hpp>

#include "daemon/config/config.h"
#include "daemon/feeds/feed.h"
#include "daemon/feeds/nginx_cache_feed.h"
#include "daemon/feeds/route_log_feed.h"
#include "daemon/observe/route_outcomes.h"
#include "daemon/store/local_store.h"
#include "daemon/store/snapshot.h"
#include "peerbloom/gossip.h"
#include "peerbloom/hash.h"

namespace peerbloom::daemon {

class FeedService {
 public:
  static constexpr int64_t kFeedPollMs = 100;

  // `config` must outlive the service. `seed` keys store.log feeds' live-key tables.
  FeedService(const Config& config, const SipKey& seed);

  // The position a snapshot saved for one of the feeds (others are ignored).
  Status Restore(const FeedPosition& position);
  // The positions to save in a snapshot (files only: a FIFO has none).
  std::vector<FeedPosition> Positions() const;

  // The FIFOs' and nginx-cache feeds' poll items, appended to `items` from `items->size()` on
  // (one per feed).
  void AppendPollItems(std::vector<zmq::pollitem_t>* items) const;
  // Reads what is due into `store`; `items` from `first` are those AppendPollItems added.
  void Poll(const zmq::pollitem_t* items, LocalStore* store, int64_t now);
  // Reads the route log when due and settles routed requests against `engine`'s liveness.
  void PollRouteLog(const GossipEngine& engine, int64_t now, int64_t wall_ms);
  int64_t NextDeadline(int64_t now) const;

  const std::vector<std::unique_ptr<Feed>>& feeds() const { return feeds_; }
  const std::vector<std::unique_ptr<NginxCacheFeed>>& nginx_feeds() const { return nginx_feeds_; }
  RouteOutcomes& routes() { return routes_; }
  const std::unique_ptr<RouteLogFeed>& route_log() const { return route_log_; }

 private:
  const Config& config_;
  std::vector<std::unique_ptr<Feed>> feeds_;
  std::vector<std::unique_ptr<NginxCacheFeed>> nginx_feeds_;
  int64_t next_feed_poll_ms_ = 0;
  bool feeds_behind_ = false;
  RouteOutcomes routes_;
  std::unique_ptr<RouteLogFeed> route_log_;  // null without squid_route_log
  int64_t next_route_log_poll_ms_ = 0;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_FEEDS_FEED_SERVICE_H_
