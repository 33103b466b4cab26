// Feed: one configured line feed (a regular file followed like `tail -F`, or a FIFO), read
// without blocking through FileFollower and applied to the local store. The line grammar is
// lib's (peerbloom/feed.h; docs/operations.md, "The line feed"). Rotation, truncation and
// resuming at a snapshot's position are FileFollower's (daemon/file_follower.h).
//
// Thread-safety: none. Resource owner: not copyable.
#ifndef PEERBLOOM_DAEMON_FEED_H_
#define PEERBLOOM_DAEMON_FEED_H_

#include <cstdint>
#include <string>
#include <vector>

#include "daemon/config.h"
#include "daemon/file_follower.h"
#include "daemon/local_store.h"
#include "daemon/log_limiter.h"
#include "daemon/snapshot.h"

namespace peerbloom::daemon {

struct FeedStats {
  uint64_t lines = 0;
  uint64_t adds = 0;
  uint64_t removes = 0;
  uint64_t removes_refused = 0;
  uint64_t malformed = 0;
};

class Feed {
 public:
  explicit Feed(FeedConfig config);
  Feed(const Feed&) = delete;
  Feed& operator=(const Feed&) = delete;

  // Resumes a regular file at a snapshot's position when the file is still the same one.
  void Restore(const FeedPosition& position);
  // Applies the complete lines available now (bounded per call). Returns true when a limit
  // stopped it with more to read.
  bool Poll(LocalStore* store, int64_t now_ms);
  // For zmq::poll: the FIFO's read end, or -1 for regular files (polled on a timer).
  int poll_fd() const { return follower_.poll_fd(); }

  FeedPosition position() const;
  const FeedConfig& config() const { return config_; }
  const FeedStats& stats() const { return stats_; }
  const FileFollowerStats& follower_stats() const { return follower_.stats(); }
  bool is_fifo() const { return follower_.is_fifo(); }
  bool is_open() const { return follower_.is_open(); }

 private:
  void ApplyLine(std::string_view line, LocalStore* store, int64_t now_ms);

  FeedConfig config_;
  FileFollower follower_;
  std::vector<std::string> lines_;
  FeedStats stats_;
  std::string key_bytes_;
  LogLimiter log_;
  LogLimiter io_log_;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_FEED_H_
