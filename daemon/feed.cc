// Non-blocking reads only: the event loop must never wait on a feed.
#include "daemon/feed.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "peerbloom/feed.h"

namespace peerbloom::daemon {
namespace {
constexpr size_t kReadChunk = 256 * 1024;
}  // namespace

Feed::Feed(FeedConfig config) : config_(std::move(config)) {}

Feed::~Feed() { Close(); }

void Feed::Close() {
  if (fd_ >= 0) ::close(fd_);
  if (fifo_writer_fd_ >= 0) ::close(fifo_writer_fd_);
  fd_ = fifo_writer_fd_ = -1;
  partial_.clear();
  skipping_ = false;
}

FeedPosition Feed::position() const {
  // Resume at the start of an incomplete last line, so it is read whole next time.
  const uint64_t offset = offset_ >= partial_.size() ? offset_ - partial_.size() : 0;
  return {config_.path, device_, inode_, fifo_ ? 0 : offset};
}

bool Feed::Open(int64_t now_ms) {
  struct stat st;
  if (::stat(config_.path.c_str(), &st) != 0) {
    if (now_ms - missing_logged_ms_ >= 60000) {
      spdlog::warn("feed '{}': {}; waiting for it to appear", config_.path, std::strerror(errno));
      missing_logged_ms_ = now_ms;
    }
    return false;
  }
  fifo_ = S_ISFIFO(st.st_mode);
  fd_ = ::open(config_.path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    spdlog::error("feed '{}': cannot open: {}", config_.path, std::strerror(errno));
    return false;
  }
  ++stats_.reopens;
  device_ = st.st_dev;
  inode_ = st.st_ino;
  offset_ = 0;
  if (fifo_) {
    // Our own write end keeps the FIFO from reporting end-of-file between writers.
    fifo_writer_fd_ = ::open(config_.path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    return true;
  }
  if (restored_.inode == inode_ && restored_.device == device_ &&
      restored_.offset <= static_cast<uint64_t>(st.st_size)) {
    offset_ = restored_.offset;
  } else if (config_.start_at_end && stats_.reopens == 1) {
    offset_ = static_cast<uint64_t>(st.st_size);
  }
  restored_ = FeedPosition();
  if (::lseek(fd_, static_cast<off_t>(offset_), SEEK_SET) < 0) offset_ = 0;
  spdlog::info("feed '{}': reading from offset {}", config_.path, offset_);
  return true;
}

void Feed::CheckRotation(int64_t now_ms) {
  struct stat at_path;
  struct stat open_file;
  if (::fstat(fd_, &open_file) == 0 && static_cast<uint64_t>(open_file.st_size) < offset_) {
    spdlog::info("feed '{}': truncated, reading again from the start", config_.path);
    offset_ = 0;
    partial_.clear();
    (void)::lseek(fd_, 0, SEEK_SET);
    return;
  }
  if (::stat(config_.path.c_str(), &at_path) != 0) return;  // removed: keep the old one
  if (static_cast<uint64_t>(at_path.st_ino) == inode_ &&
      static_cast<uint64_t>(at_path.st_dev) == device_) {
    return;
  }
  spdlog::info("feed '{}': rotated, following the new file", config_.path);
  Close();
  Open(now_ms);
}

bool Feed::Poll(LocalStore* store, int64_t now_ms, size_t budget_bytes) {
  if (fd_ < 0 && !Open(now_ms)) return false;
  std::string buffer(kReadChunk, '\0');
  size_t used = 0;
  while (used < budget_bytes) {
    const ssize_t n = ::read(fd_, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EAGAIN, or the end of a regular file
    used += static_cast<size_t>(n);
    stats_.bytes += static_cast<uint64_t>(n);
    Consume(buffer.data(), static_cast<size_t>(n), store, now_ms);
  }
  if (used >= budget_bytes) return true;
  if (!fifo_) CheckRotation(now_ms);
  return false;
}

void Feed::Consume(const char* data, size_t size, LocalStore* store, int64_t now_ms) {
  while (size > 0) {
    const char* nl = static_cast<const char*>(std::memchr(data, '\n', size));
    const size_t take = nl ? static_cast<size_t>(nl - data) : size;
    if (!skipping_) {
      if (partial_.size() + take > kMaxFeedLineBytes) {
        skipping_ = true;
        partial_.clear();
      } else {
        partial_.append(data, take);
      }
    }
    if (nl == nullptr) {
      offset_ += take;
      return;
    }
    offset_ += take + 1;
    if (skipping_) {
      ++stats_.lines;
      ++stats_.malformed;
      skipping_ = false;
    } else {
      ApplyLine(partial_, store, now_ms);
    }
    partial_.clear();
    data += take + 1;
    size -= take + 1;
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
