#include "daemon/feeds/feed_service.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace peerbloom::daemon {

FeedService::FeedService(const Config& config, const SipKey& seed) : config_(config) {
  for (const FeedConfig& fc : config.feeds) {
    if (fc.format == "nginx-cache") {
      nginx_feeds_.push_back(std::make_unique<NginxCacheFeed>(fc));
    } else {
      feeds_.push_back(std::make_unique<Feed>(fc, seed));
    }
  }
  if (!config.squid_route_log.empty()) {
    route_log_ = std::make_unique<RouteLogFeed>(config.squid_route_log, config.squid_peer_names);
  }
}

Status FeedService::Restore(const FeedPosition& position) {
  for (auto& feed : feeds_) {
    if (feed->config().path != position.path) continue;
    PEERBLOOM_RETURN_IF_ERROR(feed->Restore(position, static_cast<size_t>(config_.capacity) * 4));
  }
  for (auto& feed : nginx_feeds_) {
    if (feed->config().path != position.path) continue;
    PEERBLOOM_RETURN_IF_ERROR(feed->Restore(position, static_cast<size_t>(config_.capacity) * 4));
  }
  return Status::Ok();
}

std::vector<FeedPosition> FeedService::Positions() const {
  std::vector<FeedPosition> out;
  for (const auto& feed : feeds_) {
    if (!feed->is_fifo() && feed->position().inode != 0) out.push_back(feed->position());
  }
  for (const auto& feed : nginx_feeds_) out.push_back(feed->position());
  return out;
}

void FeedService::AppendPollItems(std::vector<zmq::pollitem_t>* items) const {
  for (const auto& feed : feeds_) {
    items->push_back(
        {nullptr, feed->poll_fd(), static_cast<short>(feed->poll_fd() >= 0 ? ZMQ_POLLIN : 0), 0});
  }
  for (const auto& feed : nginx_feeds_) {
    items->push_back(
        {nullptr, feed->poll_fd(), static_cast<short>(feed->poll_fd() >= 0 ? ZMQ_POLLIN : 0), 0});
  }
}

void FeedService::Poll(const zmq::pollitem_t* items, LocalStore* store, int64_t now) {
  const bool timer = now >= next_feed_poll_ms_ || feeds_behind_;
  if (timer) next_feed_poll_ms_ = now + kFeedPollMs;
  feeds_behind_ = false;
  for (size_t i = 0; i < feeds_.size(); ++i) {
    Feed& feed = *feeds_[i];
    const bool ready = feed.poll_fd() >= 0 && (items[i].revents & ZMQ_POLLIN);
    if (ready || timer || !feed.is_open()) feeds_behind_ |= feed.Poll(store, now);
  }
  for (size_t i = 0; i < nginx_feeds_.size(); ++i) {
    NginxCacheFeed& feed = *nginx_feeds_[i];
    const bool ready = feed.poll_fd() >= 0 && (items[feeds_.size() + i].revents & ZMQ_POLLIN);
    if (ready || timer || feed.NextDeadline(now) <= now) feeds_behind_ |= feed.Poll(store, now);
  }
}

// The route log is read on the feeds' timer; requests that went direct are settled against
// the peers' liveness as often.
void FeedService::PollRouteLog(const GossipEngine& engine, int64_t now, int64_t wall_ms) {
  if (!route_log_ || now < next_route_log_poll_ms_) return;
  next_route_log_poll_ms_ = now + kFeedPollMs;
  const bool more = route_log_->Poll(
      now, wall_ms, &routes_, [&engine](std::string_view node) { return engine.IsMember(node); });
  if (more) next_route_log_poll_ms_ = now;
  if (routes_.pending() == 0) return;
  std::map<std::string, int64_t, std::less<>> heard;
  for (const PeerInfo& p : engine.Peers(now)) {
    if (p.last_heard_ms != 0) heard[p.node_id] = p.last_heard_ms;
  }
  routes_.Settle(now, config_.failure_timeout_ms,
                 [&heard](std::string_view node) -> std::optional<int64_t> {
                   const auto it = heard.find(node);
                   if (it == heard.end()) return std::nullopt;
                   return it->second;
                 });
}

int64_t FeedService::NextDeadline(int64_t now) const {
  if (feeds_behind_) return now;
  int64_t deadline = INT64_MAX;
  bool file_feeds = false;
  for (const auto& feed : feeds_) file_feeds |= feed->poll_fd() < 0;
  if (file_feeds) deadline = next_feed_poll_ms_;
  for (const auto& feed : nginx_feeds_) deadline = std::min(deadline, feed->NextDeadline(now));
  return deadline;
}

}  // namespace peerbloom::daemon
