// Lines in, filter changes out. A malformed line is counted and logged at a limited rate.
#include "daemon/feed.h"

#include <spdlog/spdlog.h>

#include "peerbloom/feed.h"

namespace peerbloom::daemon {
namespace {

FileFollowerOptions FollowerOptions(const FeedConfig& config) {
  FileFollowerOptions o;
  o.max_line_bytes = kMaxFeedLineBytes;
  o.start_at_end = config.start_at_end;
  return o;
}

}  // namespace

Feed::Feed(FeedConfig config)
    : config_(std::move(config)), follower_(config_.path, FollowerOptions(config_)) {}

void Feed::Restore(const FeedPosition& p) {
  follower_.ResumeFrom({p.device, p.inode, p.offset, p.fingerprint_bytes, p.fingerprint});
}

FeedPosition Feed::position() const {
  const FollowerPosition p = follower_.position();
  return {config_.path, p.device, p.inode, p.offset, p.fingerprint_bytes, p.fingerprint};
}

bool Feed::Poll(LocalStore* store, int64_t now_ms) {
  bool more = false;
  Status s = follower_.Poll(&lines_, &more);
  if (!s.ok()) {
    uint64_t suppressed = 0;
    if (io_log_.Allow(now_ms, &suppressed))
      spdlog::error("feed '{}': {}", config_.path, s.message());
    return false;
  }
  for (const std::string& line : lines_) ApplyLine(line, store, now_ms);
  return more;
}

void Feed::ApplyLine(std::string_view line, LocalStore* store, int64_t now_ms) {
  ++stats_.lines;
  FeedLine parsed;
  Status s = ParseFeedLine(line, store->options().key_scheme, &parsed);
  if (s.ok() && parsed.op != FeedOp::kNone) {
    s = FeedLineKeyBytes(parsed, store->encoder(), &key_bytes_);
  }
  if (!s.ok()) {
    ++stats_.malformed;
    uint64_t suppressed = 0;
    if (log_.Allow(now_ms, &suppressed)) {
      spdlog::warn("feed '{}': line {}: {} ({} similar lines suppressed)", config_.path,
                   stats_.lines, s.message(), suppressed);
    }
    return;
  }
  if (parsed.op == FeedOp::kAdd) {
    store->Add(key_bytes_);
    ++stats_.adds;
  } else if (parsed.op == FeedOp::kRemove) {
    if (store->Remove(key_bytes_)) {
      ++stats_.removes;
    } else {
      ++stats_.removes_refused;
    }
  }
}

}  // namespace peerbloom::daemon
