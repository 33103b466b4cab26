// Feed: one configured line feed (a regular file followed like `tail -F`, or a FIFO), read
// without blocking and applied to the local store. The line grammar is lib's
// (peerbloom/feed.h; docs/operations.md, "The line feed").
//
// Regular files: read from the saved offset (or the start, or the end with start_at_end);
// a new inode at the path (rotation) is picked up after the old file's rest is read; a file
// shorter than the offset (truncation) is read again from the start. FIFOs: the daemon also
// holds a write end open so writers may come and go without an end-of-file storm.
//
// Thread-safety: none. Resource owner: not copyable.
#ifndef PEERBLOOM_DAEMON_FEED_H_
#define PEERBLOOM_DAEMON_FEED_H_

#include <cstdint>
#include <string>

#include "daemon/config.h"
#include "daemon/local_store.h"
#include "daemon/log_limiter.h"
#include "daemon/snapshot.h"

namespace peerbloom::daemon {

struct FeedStats {
  uint64_t lines = 0;
  uint64_t adds = 0;
  uint64_t removes = 0;
  uint64_t removes_refused = 0;
  uint64_t malformed = 0;  // includes over-long lines
  uint64_t bytes = 0;
  uint64_t reopens = 0;    // rotations, truncations, first opens
};

class Feed {
 public:
  explicit Feed(FeedConfig config);
  ~Feed();
  Feed(const Feed&) = delete;
  Feed& operator=(const Feed&) = delete;

  // Resumes a regular file at a snapshot's position when the file is still the same one.
  void Restore(const FeedPosition& position) { restored_ = position; }
  // Reads what is available (at most `budget_bytes`) and applies complete lines.
  // Returns true when it stopped at the budget with more to read.
  bool Poll(LocalStore* store, int64_t now_ms, size_t budget_bytes);
  // For zmq::poll: the FIFO's read end, or -1 for regular files (polled on a timer).
  int poll_fd() const { return fifo_ ? fd_ : -1; }

  FeedPosition position() const;
  const FeedConfig& config() const { return config_; }
  const FeedStats& stats() const { return stats_; }
  bool is_fifo() const { return fifo_; }
  bool is_open() const { return fd_ >= 0; }

 private:
  bool Open(int64_t now_ms);
  void CheckRotation(int64_t now_ms);
  void Close();
  void Consume(const char* data, size_t size, LocalStore* store, int64_t now_ms);
  void ApplyLine(std::string_view line, LocalStore* store, int64_t now_ms);

  FeedConfig config_;
  int fd_ = -1;
  int fifo_writer_fd_ = -1;
  bool fifo_ = false;
  uint64_t device_ = 0;
  uint64_t inode_ = 0;
  uint64_t offset_ = 0;     // bytes consumed from the current file
  std::string partial_;     // an incomplete last line
  bool skipping_ = false;   // inside an over-long line
  FeedPosition restored_;
  FeedStats stats_;
  std::string key_bytes_;
  LogLimiter log_;
  int64_t missing_logged_ms_ = INT64_MIN / 2;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_FEED_H_
