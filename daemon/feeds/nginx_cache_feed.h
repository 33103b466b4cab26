// NginxCacheFeed: a `[[feeds]]` entry of format "nginx-cache", an nginx proxy_cache_path whose
// files are the node's live set (docs/nginx.md). nginx names a cache file by the MD5 of its
// cache key and evicts by deleting the file, so the set of files present is exactly what the
// cache holds: the feed keeps the counting filter equal to it.
//
// How it follows the directory: inotify on the root and on every level directory (added as
// nginx creates them), a file counted when it appears under its final name (nginx writes a
// temporary file and renames it, so IN_MOVED_TO; IN_CLOSE_WRITE for one written in place) and
// uncounted when it is deleted or renamed away. A file's key is read from its KEY line, not
// its name, so Vary variants (another name, the same key) count for their key. Names that are
// not 32 lower-case hex digits (temporary files, anything an operator leaves there) are
// ignored; a file too short for its header is retried (kRetryMs) until it is whole or gone.
//
// A scan walks the whole tree and makes the live set equal to what it finds: at start (on top
// of the set a snapshot saved), when the kernel's event queue overflowed, when a directory
// could not be watched, on the `rescan` control operation and every `rescan_interval`. It runs
// on the loop in slices (kScanEntriesPerPoll directory entries a turn) while events keep
// being applied; only names it has not seen before are read. What a scan adds or removes
// that the events had not is drift, counted and logged.
//
// Thread-safety: none (the loop's thread). Resource owner: not copyable; owns the inotify
// descriptor.
#ifndef PEERBLOOM_DAEMON_FEEDS_NGINX_CACHE_FEED_H_
#define PEERBLOOM_DAEMON_FEEDS_NGINX_CACHE_FEED_H_

#include <dirent.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/observe/log_limiter.h"
#include "daemon/store/local_store.h"
#include "daemon/store/snapshot.h"
#include "peerbloom/nginx_cache.h"

namespace peerbloom::daemon {

struct NginxFeedStats {
  uint64_t files = 0;          // cache files counted now (the live set)
  uint64_t adds = 0;           // files counted, by events and scans
  uint64_t removes = 0;        // files uncounted
  uint64_t events = 0;         // inotify events read
  uint64_t overflows = 0;      // times the kernel's queue overflowed (a scan follows)
  uint64_t ignored = 0;        // names that are not cache files (temporary files, others)
  uint64_t foreign = 0;        // files with a cache name whose header this cannot read
  uint64_t retries = 0;        // reads of a file too short for its header, tried again
  uint64_t watch_errors = 0;   // directories that could not be watched
  uint64_t watches = 0;        // directories watched now
  uint64_t scans = 0;          // scans finished
  uint64_t drift_added = 0;    // files scans found that events had not counted
  uint64_t drift_removed = 0;  // counted files scans did not find
  int64_t last_scan_ms = 0;    // duration of the last finished scan
  std::string last_scan_trigger;
  bool scanning = false;
  std::string last_error;  // the last directory or file error, or ""
  // The XOR of the counted files' names (their 16 bytes): equal to the XOR over the names of
  // the files present exactly when the sets agree (but for a 2^-128 chance), so an operator
  // or a test can compare the live set with `ls` without listing it.
  NginxKey names_xor{};
};

class NginxCacheFeed {
 public:
  static constexpr size_t kScanEntriesPerPoll = 4096;
  static constexpr size_t kEventsPerPoll = 4096;
  static constexpr int64_t kRetryMs = 500;

  explicit NginxCacheFeed(FeedConfig config);
  ~NginxCacheFeed();
  NginxCacheFeed(const NginxCacheFeed&) = delete;
  NginxCacheFeed& operator=(const NginxCacheFeed&) = delete;

  // The live set a snapshot saved (see position()); the first scan then corrects it against
  // the files present. Corruption when it does not decode.
  Status Restore(const FeedPosition& position, size_t max_files);
  // Applies what happened: events, a slice of a running scan, retries; starts the first scan.
  // Returns true when more is waiting (the loop polls again at once).
  bool Poll(LocalStore* store, int64_t now_ms);
  // The inotify descriptor (poll it for reading), or -1 before the first Poll or when inotify
  // is not available (then the feed rescans every kFallbackScanMs).
  int poll_fd() const { return inotify_fd_; }
  // When Poll needs to run without an event (a retry, a periodic scan), INT64_MAX if never.
  int64_t NextDeadline(int64_t now_ms) const;

  // Starts a scan unless one runs (then only its trigger is noted). `trigger` is logged.
  void RequestScan(std::string_view trigger);

  // The live set to save in a snapshot: path, the root's device and inode, and in `state`
  // each file's name and key.
  FeedPosition position() const;
  const FeedConfig& config() const { return config_; }
  const NginxFeedStats& stats() const { return stats_; }
  // Whether `name` (a cache file's name) is counted, and under which key.
  bool Holds(const NginxKey& name, NginxKey* key = nullptr) const;
  // The names of the counted files whose KEY is `key` (for purges).
  std::vector<NginxKey> NamesOf(const NginxKey& key) const;
  // Path of a counted file.
  std::string PathOf(const NginxKey& name) const;
  // The paths of the counted files of `key_bytes` (16 bytes; none for another length), and
  // the path nginx would give the key's own file even when it is not counted (a file the
  // events have not shown yet is purged too).
  std::vector<std::string> PurgePaths(std::string_view key_bytes) const;

  static constexpr int64_t kFallbackScanMs = 10000;

 private:
  struct KeyHash {
    size_t operator()(const NginxKey& k) const noexcept;
  };
  struct Entry {
    NginxKey key;
    uint32_t scan = 0;  // the scan generation that last saw it
  };
  struct Pending {  // a file to read again
    int64_t due_ms = 0;
    int tries = 0;
  };
  struct ScanDir {
    std::string path;
    int depth = 0;
    bool from_event = false;  // a directory nginx made: what it holds is news, not drift
  };

  void OpenInotify(int64_t now_ms);
  void ReadEvents(LocalStore* store, int64_t now_ms, bool* more);
  void ScanSlice(LocalStore* store, int64_t now_ms, bool* more);
  void FinishScan(LocalStore* store, int64_t now_ms);
  void Watch(const std::string& dir, int depth, int64_t now_ms);
  // A file under its final name appeared or was rewritten: count it under its KEY.
  // `from_scan`: a scan listed it (a name already counted is not read again).
  void FileSeen(const std::string& path, std::string_view name, LocalStore* store, int64_t now_ms,
                bool from_scan, bool from_event = false);
  void FileGone(std::string_view name, LocalStore* store);
  void Count(const NginxKey& name, const NginxKey& key, LocalStore* store);
  void Toggle(const NginxKey& name);  // in or out of names_xor
  // variants_: a counted file whose name is not its key's (a Vary variant) in or out.
  void IndexVariant(const NginxKey& name, const NginxKey& key);
  void UnindexVariant(const NginxKey& name, const NginxKey& key);
  void Error(int64_t now_ms, const std::string& message);

  FeedConfig config_;
  std::vector<int> levels_;
  int inotify_fd_ = -1;
  bool started_ = false;
  std::unordered_map<int, ScanDir> watches_;            // watch descriptor -> directory
  std::unordered_map<NginxKey, Entry, KeyHash> files_;  // name -> key
  // key -> names of its counted Vary variants (files not named by their key): few, and what
  // a purge of the key looks up without reading every file's entry.
  std::unordered_multimap<NginxKey, NginxKey, KeyHash> variants_;
  std::unordered_map<std::string, Pending> pending_;  // path -> retry

  // The running scan.
  bool scanning_ = false;
  bool scan_again_ = false;  // asked for while one ran
  uint32_t scan_generation_ = 0;
  int64_t scan_started_ms_ = 0;
  std::vector<ScanDir> scan_dirs_;  // still to read
  DIR* reading_ = nullptr;          // the directory being read, left open between slices
  ScanDir reading_dir_;
  uint64_t scan_added_ = 0;
  std::string scan_trigger_;
  std::string next_trigger_;
  int64_t next_periodic_scan_ms_ = 0;

  NginxFeedStats stats_;
  std::string key_text_;
  LogLimiter log_;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_FEEDS_NGINX_CACHE_FEED_H_
