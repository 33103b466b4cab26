// Feed: one configured feed (a regular file followed like `tail -F`, or a FIFO), read without
// blocking through FileFollower and applied to the local store. Two formats:
//  - "line": lib's generic line feed (peerbloom/feed.h; docs/operations.md, "The line feed");
//  - "squid-store-log": Squid's store.log, turned into exact set changes by StoreLogState's
//    live-key set (docs/squid.md), which is saved in snapshots with the position.
// Rotation, truncation and resuming at a snapshot's position are FileFollower's.
//
// Thread-safety: none. Resource owner: not copyable.
#ifndef PEERBLOOM_DAEMON_FEEDS_FEED_H_
#define PEERBLOOM_DAEMON_FEEDS_FEED_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/feeds/file_follower.h"
#include "daemon/observe/log_limiter.h"
#include "daemon/store/local_store.h"
#include "daemon/store/snapshot.h"
#include "peerbloom/squid_store_log_state.h"

namespace peerbloom::daemon {

// Rebuilds of a store.log feed's live set from the cache_dirs (docs/squid.md).
struct RebuildStats {
  bool running = false;
  uint64_t started = 0;
  uint64_t finished = 0;
  uint64_t failed = 0;
  // The last finished one.
  uint64_t held = 0;     // keys the cache_dirs hold
  uint64_t journal = 0;  // store.log events replayed on top
  uint64_t added = 0;    // keys the live set had lost
  uint64_t removed = 0;  // keys it held that the cache did not
  int64_t duration_ms = 0;
  std::string trigger;     // why the last one started
  std::string last_error;  // why the last one failed, or ""
};

struct FeedStats {
  uint64_t lines = 0;
  uint64_t adds = 0;
  uint64_t removes = 0;
  uint64_t removes_refused = 0;
  uint64_t malformed = 0;
};

// A message that quotes bytes of a feed or a directory, fit for the log: escaped whole when
// it holds control bytes or bytes that are not UTF-8.
std::string LogSafe(const std::string& message);

class Feed {
 public:
  // `seed` keys a store.log feed's live-key table (use the index key: it is secret).
  Feed(FeedConfig config, const SipKey& seed);
  Feed(const Feed&) = delete;
  Feed& operator=(const Feed&) = delete;

  // Resumes a regular file at a snapshot's position when the file is still the same one.
  // Corruption when a store.log feed's saved live-key set does not decode.
  Status Restore(const FeedPosition& position, size_t max_keys);
  // Applies the complete lines available now (bounded per call). Returns true when a limit
  // stopped it with more to read.
  bool Poll(LocalStore* store, int64_t now_ms);
  // For zmq::poll: the FIFO's read end, or -1 for regular files (polled on a timer).
  int poll_fd() const { return follower_.poll_fd(); }

  FeedPosition position() const;
  const FeedConfig& config() const { return config_; }
  const FeedStats& stats() const { return stats_; }
  const FileFollowerStats& follower_stats() const { return follower_.stats(); }
  // Bytes not read yet: the rest of the current file and the rotated files queued after it.
  uint64_t unread_bytes() const { return follower_.unread_bytes(); }
  // Why the saved position's tail could not be read, or "" (see FileFollower).
  const std::string& resume_lost() const { return follower_.last_resume_lost(); }
  // Null for line feeds.
  const StoreLogState* store_log() const { return store_log_.get(); }

  // Starts reading what Squid holds in `cache_dirs` (the configured ones when empty) on a
  // worker thread; Poll() replaces the live set with it when the read is done, replaying the
  // store.log events applied meanwhile. `trigger` says why (logged and in stats).
  // FailedPrecondition when this is not a store.log feed, a rebuild runs, or no cache_dir is
  // given. Stopping the daemon does not wait for a running read.
  Status StartRebuild(std::vector<std::string> cache_dirs, const std::string& trigger,
                      int64_t now_ms);
  const RebuildStats& rebuild_stats() const { return rebuild_stats_; }
  bool is_fifo() const { return follower_.is_fifo(); }
  bool is_open() const { return follower_.is_open(); }

 private:
  void ApplyLine(std::string_view line, LocalStore* store, int64_t now_ms);
  void ApplyStoreLogLine(std::string_view line, LocalStore* store, int64_t now_ms);
  void Malformed(const Status& why, int64_t now_ms);
  void ReportResume(int64_t now_ms);
  void FinishRebuild(LocalStore* store, int64_t now_ms);

  FeedConfig config_;
  FileFollower follower_;
  std::unique_ptr<StoreLogState> store_log_;
  std::vector<std::string> lines_;
  FeedStats stats_;
  std::string key_bytes_;
  LogLimiter log_;
  LogLimiter io_log_;
  FileFollowerStats reported_;  // the follower's counters when resumes were last reported
  bool restored_ = false;       // Restore() gave a saved position
  bool first_poll_ = true;
  struct RebuildJob;  // shared with the worker thread
  std::shared_ptr<RebuildJob> rebuild_;
  int64_t rebuild_started_ms_ = 0;
  RebuildStats rebuild_stats_;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_FEEDS_FEED_H_
