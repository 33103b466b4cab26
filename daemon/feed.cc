// Lines in, filter changes out. A malformed line is counted and logged at a limited rate;
// the reasons quote the line's bytes escaped (peerbloom/escape.h), so a line that is not UTF-8
// or holds control bytes cannot garble the log.
#include "daemon/feed.h"

#include <spdlog/spdlog.h>

#include "peerbloom/escape.h"
#include "peerbloom/feed.h"
#include "peerbloom/squid_store_log.h"

namespace peerbloom::daemon {
namespace {

FileFollowerOptions FollowerOptions(const FeedConfig& config) {
  FileFollowerOptions o;
  o.max_line_bytes = kMaxFeedLineBytes;
  o.start_at_end = config.start_at_end;
  return o;
}

}  // namespace

Feed::Feed(FeedConfig config, const SipKey& seed)
    : config_(std::move(config)), follower_(config_.path, FollowerOptions(config_)) {
  if (config_.format == "squid-store-log") store_log_ = std::make_unique<StoreLogState>(seed);
}

Status Feed::Restore(const FeedPosition& p, size_t max_keys) {
  if (store_log_ != nullptr && !p.state.empty()) {
    Status s = store_log_->DecodeFrom(p.state, max_keys);
    if (!s.ok()) {
      return Status::Corruption("feed '" + config_.path + "': saved live keys: " + s.message());
    }
  }
  follower_.ResumeFrom({p.device, p.inode, p.offset, p.fingerprint_bytes, p.fingerprint});
  return Status::Ok();
}

FeedPosition Feed::position() const {
  const FollowerPosition p = follower_.position();
  FeedPosition out{config_.path,        p.device,      p.inode, p.offset,
                   p.fingerprint_bytes, p.fingerprint, ""};
  if (store_log_ != nullptr) store_log_->EncodeTo(&out.state);
  return out;
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
  for (const std::string& line : lines_) {
    // A line is bytes from outside: one that makes parsing throw is malformed like any other,
    // and the feed goes on with the next.
    try {
      if (store_log_ != nullptr) {
        ApplyStoreLogLine(line, store, now_ms);
      } else {
        ApplyLine(line, store, now_ms);
      }
    } catch (const std::exception& e) {
      Malformed(Status::Corruption("internal error: " + EscapeBytes(e.what())), now_ms);
    }
  }
  return more;
}

void Feed::Malformed(const Status& why, int64_t now_ms) {
  ++stats_.malformed;
  uint64_t suppressed = 0;
  if (log_.Allow(now_ms, &suppressed)) {
    spdlog::warn("feed '{}': line {}: {} ({} similar lines suppressed)", config_.path, stats_.lines,
                 why.message(), suppressed);
  }
}

void Feed::ApplyStoreLogLine(std::string_view line, LocalStore* store, int64_t now_ms) {
  ++stats_.lines;
  SquidKey key;
  Status error;
  switch (store_log_->ApplyLine(line, &key, &error)) {
    case StoreLogDecision::kAdd:
      store->Add(SquidKeyBytes(key));
      ++stats_.adds;
      break;
    case StoreLogDecision::kRemove:
      if (store->Remove(SquidKeyBytes(key))) {
        ++stats_.removes;
      } else {
        ++stats_.removes_refused;
      }
      break;
    case StoreLogDecision::kMalformed:
      Malformed(error, now_ms);
      break;
    case StoreLogDecision::kIgnore:
      break;
  }
}

void Feed::ApplyLine(std::string_view line, LocalStore* store, int64_t now_ms) {
  ++stats_.lines;
  FeedLine parsed;
  Status s = ParseFeedLine(line, store->options().key_scheme, &parsed);
  if (s.ok() && parsed.op != FeedOp::kNone) {
    s = FeedLineKeyBytes(parsed, store->encoder(), &key_bytes_);
  }
  if (!s.ok()) {
    Malformed(s, now_ms);
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
