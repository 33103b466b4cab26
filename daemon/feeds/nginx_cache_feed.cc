#include "daemon/feeds/nginx_cache_feed.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "daemon/feeds/feed.h"
#include "peerbloom/byte_io.h"
#include "peerbloom/escape.h"
#include "peerbloom/nginx_cache.h"

namespace peerbloom::daemon {
namespace {

constexpr uint32_t kDirMask = IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM |
                              IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW |
                              IN_EXCL_UNLINK;
constexpr int kMaxRetries = 20;  // a file short of its header for 10 s is left alone
constexpr uint8_t kStateVersion = 1;

std::string_view KeyBytes(const NginxKey& key) {
  return {reinterpret_cast<const char*>(key.data()), key.size()};
}

std::string Errno(int err) { return std::strerror(err); }

// A level directory's name: exactly `width` lower-case hex digits.
bool IsLevelName(std::string_view name, int width) {
  if (name.size() != static_cast<size_t>(width)) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string Join(const std::string& dir, std::string_view name) {
  std::string out = dir;
  out += '/';
  out += name;
  return out;
}

}  // namespace

size_t NginxCacheFeed::KeyHash::operator()(const NginxKey& k) const noexcept {
  uint64_t h = 0;
  std::memcpy(&h, k.data(), sizeof(h));  // MD5 output: any 8 bytes are uniform
  return static_cast<size_t>(h);
}

NginxCacheFeed::NginxCacheFeed(FeedConfig config) : config_(std::move(config)) {
  // The config parser checked the levels.
  (void)ParseNginxLevels(config_.levels, &levels_);
}

NginxCacheFeed::~NginxCacheFeed() {
  if (reading_ != nullptr) ::closedir(reading_);
  if (inotify_fd_ >= 0) ::close(inotify_fd_);
}

Status NginxCacheFeed::Restore(const FeedPosition& position, size_t max_files) {
  if (position.state.empty()) return Status::Ok();
  const std::string where = "feed '" + config_.path + "': saved cache files: ";
  ByteReader in(position.state);
  uint8_t version = 0;
  uint64_t count = 0;
  if (!in.ReadU8(&version) || version != kStateVersion) {
    return Status::Corruption(where + "unknown version " + std::to_string(version));
  }
  if (!in.ReadVarint(&count) || count > max_files) return Status::Corruption(where + "bad count");
  std::unordered_map<NginxKey, Entry, KeyHash> files;
  files.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    std::string_view name_bytes, key_bytes;
    uint8_t flag = 0;
    if (!in.ReadBytes(16, &name_bytes) || !in.ReadU8(&flag) || flag > 1 ||
        (flag == 1 && !in.ReadBytes(16, &key_bytes))) {
      return Status::Corruption(where + "truncated or bad entry " + std::to_string(i));
    }
    NginxKey name, key;
    std::memcpy(name.data(), name_bytes.data(), 16);
    std::memcpy(key.data(), flag == 1 ? key_bytes.data() : name_bytes.data(), 16);
    if (!files.emplace(name, Entry{key, 0}).second) {
      return Status::Corruption(where + "name saved twice");
    }
  }
  if (in.remaining() != 0) return Status::Corruption(where + "trailing bytes");
  // The snapshot's counters hold these files' keys already.
  files_ = std::move(files);
  stats_.files = files_.size();
  stats_.names_xor = {};
  variants_.clear();
  for (const auto& [name, entry] : files_) {
    Toggle(name);
    IndexVariant(name, entry.key);
  }
  return Status::Ok();
}

FeedPosition NginxCacheFeed::position() const {
  FeedPosition out;
  out.path = config_.path;
  struct stat st;
  if (::stat(config_.path.c_str(), &st) == 0) {
    out.device = st.st_dev;
    out.inode = st.st_ino;
  }
  out.state.reserve(1 + 10 + files_.size() * 17);
  PutU8(&out.state, kStateVersion);
  PutVarint(&out.state, files_.size());
  for (const auto& [name, entry] : files_) {
    out.state.append(KeyBytes(name));
    if (entry.key == name) {
      out.state.push_back('\0');
    } else {
      out.state.push_back('\1');
      out.state.append(KeyBytes(entry.key));
    }
  }
  return out;
}

bool NginxCacheFeed::Holds(const NginxKey& name, NginxKey* key) const {
  const auto it = files_.find(name);
  if (it == files_.end()) return false;
  if (key != nullptr) *key = it->second.key;
  return true;
}

std::vector<NginxKey> NginxCacheFeed::NamesOf(const NginxKey& key) const {
  std::vector<NginxKey> out;
  // The file of a response without Vary carries its key's name.
  const auto own = files_.find(key);
  if (own != files_.end() && own->second.key == key) out.push_back(key);
  const auto [begin, end] = variants_.equal_range(key);
  for (auto it = begin; it != end; ++it) out.push_back(it->second);
  return out;
}

std::string NginxCacheFeed::PathOf(const NginxKey& name) const {
  return NginxCacheFilePath(config_.path, levels_, name);
}

std::vector<std::string> NginxCacheFeed::PurgePaths(std::string_view key_bytes) const {
  std::vector<std::string> out;
  NginxKey key;
  if (key_bytes.size() != key.size()) return out;
  std::memcpy(key.data(), key_bytes.data(), key.size());
  out.push_back(PathOf(key));
  for (const NginxKey& name : NamesOf(key)) {
    if (name != key) out.push_back(PathOf(name));
  }
  return out;
}

void NginxCacheFeed::Error(int64_t now_ms, const std::string& message) {
  stats_.last_error = message;
  uint64_t suppressed = 0;
  if (log_.Allow(now_ms, &suppressed)) {
    spdlog::warn("feed '{}': {} ({} similar lines suppressed)", config_.path, LogSafe(message),
                 suppressed);
  }
}

void NginxCacheFeed::OpenInotify(int64_t now_ms) {
  inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_fd_ < 0) {
    Error(now_ms, "inotify unavailable (" + Errno(errno) + "); scanning every " +
                      std::to_string(kFallbackScanMs / 1000) + " s instead");
  }
}

void NginxCacheFeed::Watch(const std::string& dir, int depth, int64_t now_ms) {
  if (inotify_fd_ < 0) return;
  const int wd = ::inotify_add_watch(inotify_fd_, dir.c_str(), kDirMask);
  if (wd < 0) {
    const int err = errno;
    ++stats_.watch_errors;
    std::string why = "cannot watch '" + dir + "': " + Errno(err);
    if (err == ENOSPC) why += " (raise fs.inotify.max_user_watches)";
    if (err == EACCES) why += " (the daemon needs read access: docs/nginx.md)";
    Error(now_ms, why + "; scanning every " + std::to_string(kFallbackScanMs / 1000) + " s");
    return;
  }
  watches_[wd] = ScanDir{dir, depth};
  stats_.watches = watches_.size();
}

void NginxCacheFeed::RequestScan(std::string_view trigger) {
  if (scanning_) {
    scan_again_ = true;
    next_trigger_ = trigger;
    return;
  }
  scanning_ = true;
  stats_.scanning = true;
  ++scan_generation_;
  scan_trigger_ = trigger;
  scan_started_ms_ = -1;  // set by the next Poll
  scan_added_ = 0;
  scan_dirs_.clear();
  if (reading_ != nullptr) {  // a directory nginx made, half read: the scan reads it again
    ::closedir(reading_);
    reading_ = nullptr;
  }
  scan_dirs_.push_back(ScanDir{config_.path, 0});
}

void NginxCacheFeed::Toggle(const NginxKey& name) {
  for (size_t i = 0; i < name.size(); ++i) stats_.names_xor[i] ^= name[i];
}

void NginxCacheFeed::IndexVariant(const NginxKey& name, const NginxKey& key) {
  if (name != key) variants_.emplace(key, name);
}

void NginxCacheFeed::UnindexVariant(const NginxKey& name, const NginxKey& key) {
  if (name == key) return;
  const auto [begin, end] = variants_.equal_range(key);
  for (auto it = begin; it != end; ++it) {
    if (it->second == name) {
      variants_.erase(it);
      return;
    }
  }
}

void NginxCacheFeed::Count(const NginxKey& name, const NginxKey& key, LocalStore* store) {
  auto [it, inserted] = files_.try_emplace(name, Entry{key, scan_generation_});
  if (inserted) Toggle(name);
  if (!inserted) {
    it->second.scan = scan_generation_;
    if (it->second.key == key) return;
    store->Remove(KeyBytes(it->second.key));  // rewritten under another key
    ++stats_.removes;
    UnindexVariant(name, it->second.key);
    it->second.key = key;
  }
  IndexVariant(name, key);
  store->Add(KeyBytes(key));
  ++stats_.adds;
  stats_.files = files_.size();
}

void NginxCacheFeed::FileGone(std::string_view name, LocalStore* store) {
  NginxKey n;
  if (!ParseNginxCacheFileName(name, &n)) return;
  const auto it = files_.find(n);
  if (it == files_.end()) return;
  store->Remove(KeyBytes(it->second.key));
  Toggle(it->first);
  UnindexVariant(it->first, it->second.key);
  files_.erase(it);
  ++stats_.removes;
  stats_.files = files_.size();
}

void NginxCacheFeed::FileSeen(const std::string& path, std::string_view name, LocalStore* store,
                              int64_t now_ms, bool from_scan, bool from_event) {
  NginxKey n;
  if (!ParseNginxCacheFileName(name, &n)) {
    ++stats_.ignored;
    return;
  }
  if (from_scan) {
    const auto it = files_.find(n);
    if (it != files_.end()) {  // known: a name keeps its key
      it->second.scan = scan_generation_;
      return;
    }
  }
  std::string why;
  bool gone = false;
  switch (ReadNginxCacheFileKey(path, &key_text_, &why, &gone)) {
    case NginxFileState::kValid: {
      pending_.erase(path);
      const bool known = files_.count(n) != 0;
      Count(n, NginxKeyOf(key_text_), store);
      if (from_scan && !from_event && !known) ++scan_added_;
      return;
    }
    case NginxFileState::kPartial: {
      if (gone) {
        pending_.erase(path);
        FileGone(name, store);
        return;
      }
      Pending& p = pending_[path];
      if (++p.tries > kMaxRetries) {
        pending_.erase(path);
        ++stats_.foreign;
        Error(now_ms, "'" + path + "' stayed shorter than its header: " + why);
        FileGone(name, store);
        return;
      }
      p.due_ms = now_ms + kRetryMs;
      return;
    }
    case NginxFileState::kForeign:
      pending_.erase(path);
      ++stats_.foreign;
      Error(now_ms, "'" + path + "' is not a cache file this version reads: " + why);
      FileGone(name, store);
      return;
  }
}

void NginxCacheFeed::ReadEvents(LocalStore* store, int64_t now_ms, bool* more) {
  alignas(struct inotify_event) char buffer[64 * 1024];
  size_t events = 0;
  while (events < kEventsPerPoll) {
    const ssize_t n = ::read(inotify_fd_, buffer, sizeof(buffer));
    if (n <= 0) {
      if (n < 0 && errno != EAGAIN && errno != EINTR) Error(now_ms, "inotify: " + Errno(errno));
      return;
    }
    for (ssize_t off = 0; off < n;) {
      const auto* ev = reinterpret_cast<const struct inotify_event*>(buffer + off);
      off += static_cast<ssize_t>(sizeof(struct inotify_event) + ev->len);
      ++events;
      ++stats_.events;
      if (ev->mask & IN_Q_OVERFLOW) {
        ++stats_.overflows;
        Error(now_ms, "inotify event queue overflowed; rescanning");
        RequestScan("event queue overflow");
        continue;
      }
      const auto w = watches_.find(ev->wd);
      if (w == watches_.end()) continue;
      if (ev->mask & IN_IGNORED) {
        watches_.erase(w);
        stats_.watches = watches_.size();
        continue;
      }
      if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
        if (w->second.depth == 0) {
          Error(now_ms, "the cache directory itself was removed or moved; rescanning");
          RequestScan("cache directory replaced");
        }
        continue;
      }
      if (ev->len == 0) continue;
      const std::string_view name(ev->name, ::strnlen(ev->name, ev->len));
      const ScanDir dir = w->second;
      const std::string path = Join(dir.path, name);
      const bool at_files = dir.depth == static_cast<int>(levels_.size());
      if (ev->mask & IN_ISDIR) {
        // nginx creates level directories as it needs them: watch the new one and read
        // what was written in it before the watch was in place.
        if (!at_files && (ev->mask & (IN_CREATE | IN_MOVED_TO)) &&
            IsLevelName(name, levels_[dir.depth])) {
          Watch(path, dir.depth + 1, now_ms);
          scan_dirs_.push_back(ScanDir{path, dir.depth + 1, /*from_event=*/true});
        }
        continue;
      }
      if (!at_files) {
        if (ev->mask & (IN_MOVED_TO | IN_CLOSE_WRITE)) ++stats_.ignored;
        continue;
      }
      if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) {
        FileGone(name, store);
      } else if (ev->mask & IN_MOVED_TO) {
        FileSeen(path, name, store, now_ms, /*from_scan=*/false);
      } else if (ev->mask & IN_CLOSE_WRITE) {
        // nginx closes a new file after renaming it (IN_MOVED_TO read it) and rewrites a
        // header in place on revalidation: a name keeps its key, so a counted name is not read
        // again; one written in place from the start is.
        FileSeen(path, name, store, now_ms, /*from_scan=*/true, /*from_event=*/true);
      }
    }
  }
  *more = true;
}

// Reads at most kScanEntriesPerPoll entries a call: a directory left half read stays open
// (reading_) for the next call, so a cache without levels (every file in one directory) is
// read in slices too.
void NginxCacheFeed::ScanSlice(LocalStore* store, int64_t now_ms, bool* more) {
  size_t budget = kScanEntriesPerPoll;
  while (budget > 0 && (reading_ != nullptr || !scan_dirs_.empty())) {
    if (reading_ == nullptr) {
      reading_dir_ = scan_dirs_.back();
      scan_dirs_.pop_back();
      reading_ = ::opendir(reading_dir_.path.c_str());
      if (reading_ == nullptr) {
        const int err = errno;
        if (reading_dir_.depth == 0) {
          // Without the root nothing can be said of the cache: keep the set, try later.
          Error(now_ms,
                "cannot read the cache directory: " + Errno(err) +
                    (err == EACCES ? " (the daemon needs read access: docs/nginx.md)" : ""));
          scanning_ = false;
          stats_.scanning = false;
          scan_dirs_.clear();
          next_periodic_scan_ms_ = now_ms + kFallbackScanMs;
          return;
        }
        if (err != ENOENT) Error(now_ms, "cannot read '" + reading_dir_.path + "': " + Errno(err));
        continue;
      }
      if (reading_dir_.depth == 0 && scanning_) Watch(reading_dir_.path, 0, now_ms);
    }
    const ScanDir& dir = reading_dir_;
    const bool at_files = dir.depth == static_cast<int>(levels_.size());
    const dirent* e = nullptr;
    while (budget > 0 && (e = ::readdir(reading_)) != nullptr) {
      const std::string_view name(e->d_name);
      if (name == "." || name == "..") continue;
      --budget;
      const std::string path = Join(dir.path, name);
      if (!at_files) {
        if (IsLevelName(name, levels_[dir.depth])) {
          Watch(path, dir.depth + 1, now_ms);
          scan_dirs_.push_back(ScanDir{path, dir.depth + 1, dir.from_event});
        } else {
          ++stats_.ignored;
        }
        continue;
      }
      if (e->d_type != DT_REG && e->d_type != DT_UNKNOWN) {
        ++stats_.ignored;
        continue;
      }
      FileSeen(path, name, store, now_ms, /*from_scan=*/true, dir.from_event);
    }
    if (e == nullptr) {  // the directory is done
      ::closedir(reading_);
      reading_ = nullptr;
    }
  }
  if (reading_ != nullptr || !scan_dirs_.empty()) {
    *more = true;
    return;
  }
  if (scanning_) FinishScan(store, now_ms);
}

void NginxCacheFeed::FinishScan(LocalStore* store, int64_t now_ms) {
  uint64_t removed = 0;
  for (auto it = files_.begin(); it != files_.end();) {
    if (it->second.scan == scan_generation_) {
      ++it;
      continue;
    }
    store->Remove(KeyBytes(it->second.key));
    ++stats_.removes;
    ++removed;
    Toggle(it->first);
    UnindexVariant(it->first, it->second.key);
    it = files_.erase(it);
  }
  stats_.files = files_.size();
  scanning_ = false;
  stats_.scanning = false;
  ++stats_.scans;
  stats_.last_scan_ms = now_ms - scan_started_ms_;
  stats_.last_scan_trigger = scan_trigger_;
  const bool first = stats_.scans == 1;
  if (first) {
    spdlog::info("feed '{}': {} cache files ({} found since the snapshot, {} gone), {} ms",
                 config_.path, files_.size(), scan_added_, removed, stats_.last_scan_ms);
  } else if (scan_added_ != 0 || removed != 0) {
    stats_.drift_added += scan_added_;
    stats_.drift_removed += removed;
    spdlog::warn(
        "feed '{}': scan ({}) found drift: {} files the events had not counted, {} counted files "
        "gone; now {} files",
        config_.path, scan_trigger_, scan_added_, removed, files_.size());
  } else {
    spdlog::debug("feed '{}': scan ({}) found no drift, {} files", config_.path, scan_trigger_,
                  files_.size());
  }
  if (config_.rescan_interval_ms > 0) next_periodic_scan_ms_ = now_ms + config_.rescan_interval_ms;
  if (inotify_fd_ < 0 || stats_.watch_errors != 0) {
    next_periodic_scan_ms_ = now_ms + kFallbackScanMs;
  }
  if (scan_again_) {
    scan_again_ = false;
    RequestScan(next_trigger_);
  }
}

bool NginxCacheFeed::Poll(LocalStore* store, int64_t now_ms) {
  if (!started_) {
    started_ = true;
    OpenInotify(now_ms);
    RequestScan("start");
  }
  if (scanning_ && scan_started_ms_ < 0) scan_started_ms_ = now_ms;
  if (!scanning_ && next_periodic_scan_ms_ != 0 && now_ms >= next_periodic_scan_ms_) {
    next_periodic_scan_ms_ = 0;
    RequestScan(inotify_fd_ < 0 || stats_.watch_errors != 0 ? "no inotify watch" : "periodic");
    scan_started_ms_ = now_ms;
  }
  bool more = false;
  if (inotify_fd_ >= 0) ReadEvents(store, now_ms, &more);
  if (!pending_.empty()) {
    std::vector<std::string> due;
    for (const auto& [path, p] : pending_) {
      if (p.due_ms <= now_ms) due.push_back(path);
    }
    for (const std::string& path : due) {
      ++stats_.retries;
      FileSeen(path, std::string_view(path).substr(path.rfind('/') + 1), store, now_ms, false);
    }
  }
  if (!scan_dirs_.empty() || reading_ != nullptr) ScanSlice(store, now_ms, &more);
  return more;
}

int64_t NginxCacheFeed::NextDeadline(int64_t now_ms) const {
  if (!started_ || !scan_dirs_.empty() || reading_ != nullptr) return now_ms;
  int64_t deadline = INT64_MAX;
  for (const auto& [path, p] : pending_) deadline = std::min(deadline, p.due_ms);
  if (next_periodic_scan_ms_ != 0) deadline = std::min(deadline, next_periodic_scan_ms_);
  return deadline;
}

}  // namespace peerbloom::daemon
