#include "daemon/file_follower.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "peerbloom/hash.h"

namespace peerbloom::daemon {
namespace {

constexpr size_t kReadChunk = 64 * 1024;

std::string Q(const std::string& s) { return "'" + s + "'"; }
std::string Q(uint64_t v) { return "'" + std::to_string(v) + "'"; }

// The last `n` bytes of a + b.
std::string LastBytes(std::string_view a, std::string_view b, size_t n) {
  if (b.size() >= n) return std::string(b.substr(b.size() - n));
  const size_t from_a = std::min(a.size(), n - b.size());
  std::string out(a.substr(a.size() - from_a));
  out.append(b);
  return out;
}

// Reads exactly `size` bytes at `offset`; false on a short read or an error.
bool PreadAll(int fd, char* buf, size_t size, uint64_t offset) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, buf + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

FileFollower::FileFollower(std::string path, FileFollowerOptions options)
    : path_(std::move(path)), options_(options) {}

FileFollower::~FileFollower() { Close(); }

uint64_t FileFollower::Fingerprint(const char* data, size_t size) noexcept {
  return SipHash64(1, 3, SipKey{}, data, size);
}

FollowerPosition FileFollower::position() const {
  if (fd_ < 0 && resume_) return *resume_;  // not reopened yet: the saved one still holds
  FollowerPosition p;
  p.device = device_;
  p.inode = inode_;
  p.offset = consumed_offset_;
  p.fingerprint_bytes = static_cast<uint32_t>(tail_.size());
  p.fingerprint = Fingerprint(tail_.data(), tail_.size());
  return p;
}

void FileFollower::Close() {
  if (fd_ >= 0) ::close(fd_);
  if (fifo_writer_fd_ >= 0) ::close(fifo_writer_fd_);
  fd_ = fifo_writer_fd_ = -1;
}

void FileFollower::StartAt(uint64_t offset, std::string tail) {
  if (!fifo_) ::lseek(fd_, static_cast<off_t>(offset), SEEK_SET);
  read_offset_ = consumed_offset_ = offset;
  carry_.clear();
  partial_.clear();
  skipping_ = false;
  recent_ = tail;
  tail_ = std::move(tail);
}

Status FileFollower::Open() {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::Ok();  // not there yet: try again next poll
    return Status::IOError("cannot open " + Q(path_) + ": " + std::strerror(errno));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode))) {
    ::close(fd);
    return Status::IOError(Q(path_) + " is not a regular file or a fifo");
  }
  fd_ = fd;
  fifo_ = S_ISFIFO(st.st_mode);
  device_ = static_cast<uint64_t>(st.st_dev);
  inode_ = static_cast<uint64_t>(st.st_ino);
  ++stats_.opens;
  resume_mismatch_.clear();
  if (fifo_) {
    // Our own write end keeps read() at EAGAIN instead of end-of-file between writers.
    fifo_writer_fd_ = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    StartAt(0, "");
  } else if (resume_) {
    if (!TryResume(static_cast<uint64_t>(st.st_size))) StartAt(0, "");
  } else if (first_open_ && options_.start_at_end) {
    SeekToLastLine(static_cast<uint64_t>(st.st_size));
  } else {
    StartAt(0, "");
  }
  resume_.reset();
  first_open_ = false;
  return Status::Ok();
}

bool FileFollower::TryResume(uint64_t size) {
  const FollowerPosition& p = *resume_;
  if (p.device != device_ || p.inode != inode_) {
    resume_mismatch_ = "file at " + Q(path_) + " is not the saved one (inode " + Q(inode_) +
                       ", saved " + Q(p.inode) + ")";
  } else if (size < p.offset) {
    resume_mismatch_ = "file at " + Q(path_) + " has " + Q(size) +
                       " bytes, fewer than the saved offset " + Q(p.offset);
  } else if (p.fingerprint_bytes > kFingerprintBytes || p.fingerprint_bytes > p.offset) {
    resume_mismatch_ = "saved position of " + Q(path_) + " is inconsistent";
  } else {
    std::string tail(p.fingerprint_bytes, '\0');
    if (PreadAll(fd_, tail.data(), tail.size(), p.offset - tail.size()) &&
        Fingerprint(tail.data(), tail.size()) == p.fingerprint) {
      StartAt(p.offset, std::move(tail));
      ++stats_.resumes;
      return true;
    }
    resume_mismatch_ =
        "bytes before the saved offset " + Q(p.offset) + " of " + Q(path_) + " changed";
  }
  ++stats_.resume_mismatches;
  return false;
}

// Starts after the last '\n' within the last max_line_bytes + 1 bytes. Without one, the
// file ends inside an over-long line: start at the end and skip to the next '\n'.
void FileFollower::SeekToLastLine(uint64_t size) {
  const size_t window = static_cast<size_t>(std::min<uint64_t>(size, options_.max_line_bytes + 1));
  std::string buf(window, '\0');
  if (!PreadAll(fd_, buf.data(), window, size - window)) return StartAt(0, "");
  const size_t nl = buf.rfind('\n');
  if (nl == std::string::npos && window == size) return StartAt(0, "");
  if (nl == std::string::npos) {
    StartAt(size, LastBytes("", buf, kFingerprintBytes));
    skipping_ = true;
    ++stats_.long_lines_skipped;
    return;
  }
  const uint64_t start = size - window + nl + 1;
  std::string tail(static_cast<size_t>(std::min<uint64_t>(start, kFingerprintBytes)), '\0');
  if (!PreadAll(fd_, tail.data(), tail.size(), start - tail.size())) return StartAt(0, "");
  StartAt(start, std::move(tail));
}

// Splits carry_ into lines, stopping at the per-poll line limit.
void FileFollower::Split(std::vector<std::string>* lines, bool* limited) {
  const uint64_t carry_start = read_offset_ - carry_.size();
  size_t pos = 0;
  size_t consumed = 0;  // carry_ bytes up to and including the last '\n' handled
  while (pos < carry_.size()) {
    if (lines->size() >= options_.max_lines_per_poll) {
      *limited = true;
      break;
    }
    const char* nl =
        static_cast<const char*>(std::memchr(carry_.data() + pos, '\n', carry_.size() - pos));
    const size_t end = nl == nullptr ? carry_.size() : static_cast<size_t>(nl - carry_.data());
    const std::string_view segment(carry_.data() + pos, end - pos);
    pos = nl == nullptr ? end : end + 1;
    if (skipping_) {
      if (nl != nullptr) skipping_ = false;
    } else if (partial_.size() + segment.size() > options_.max_line_bytes) {
      ++stats_.long_lines_skipped;
      partial_.clear();
      skipping_ = nl == nullptr;
    } else {
      partial_.append(segment);
      if (nl != nullptr) {
        lines->push_back(std::move(partial_));
        partial_.clear();
        ++stats_.lines;
      }
    }
    if (nl != nullptr) consumed = pos;
  }
  if (consumed > 0) {
    consumed_offset_ = carry_start + consumed;
    tail_ = LastBytes(recent_, std::string_view(carry_).substr(0, consumed), kFingerprintBytes);
  }
  recent_ = LastBytes(recent_, std::string_view(carry_).substr(0, pos), kFingerprintBytes);
  carry_.erase(0, pos);
}

bool FileFollower::Pump(std::vector<std::string>* lines, size_t* budget, bool* limited) {
  Split(lines, limited);
  char buf[kReadChunk];
  while (!*limited && *budget > 0) {
    const ssize_t n = ::read(fd_, buf, std::min(sizeof(buf), *budget));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0) return false;
    if (n == 0) break;
    *budget -= static_cast<size_t>(n);
    read_offset_ += static_cast<uint64_t>(n);
    stats_.bytes += static_cast<uint64_t>(n);
    carry_.append(buf, static_cast<size_t>(n));
    Split(lines, limited);
  }
  if (*budget == 0) *limited = true;
  return true;
}

// The file shrank below what was read, or the bytes before the position were rewritten
// (copytruncate followed by enough new writes to hide the shrink).
bool FileFollower::Truncated() {
  struct stat st;
  if (::fstat(fd_, &st) != 0) return false;
  if (static_cast<uint64_t>(st.st_size) < read_offset_) return true;
  if (tail_.empty()) return false;
  std::string now(tail_.size(), '\0');
  if (!PreadAll(fd_, now.data(), now.size(), consumed_offset_ - tail_.size())) return true;
  return now != tail_;
}

bool FileFollower::Rotated() {
  struct stat st;
  if (::stat(path_.c_str(), &st) != 0) return false;  // missing for now: keep the old file
  return static_cast<uint64_t>(st.st_dev) != device_ || static_cast<uint64_t>(st.st_ino) != inode_;
}

void FileFollower::SwitchToNewFile() {
  if (!partial_.empty() || skipping_) ++stats_.dropped_partial_lines;
  Close();
  ++stats_.rotations;
  resume_.reset();
  (void)Open();  // a failure leaves it closed; the next Poll() retries and reports it
}

Status FileFollower::Poll(std::vector<std::string>* lines, bool* more) {
  lines->clear();
  if (more != nullptr) *more = false;
  if (fd_ < 0) {
    PEERBLOOM_RETURN_IF_ERROR(Open());
    if (fd_ < 0) return Status::Ok();
  }
  size_t budget = options_.max_bytes_per_poll;
  bool limited = false;
  if (!fifo_ && Truncated()) {  // before reading: new bytes at the old offset are not ours
    ++stats_.truncations;
    StartAt(0, "");
  }
  // Bounded: at most one truncation and one rotation are handled per poll.
  for (int round = 0; round < 3 && fd_ >= 0; ++round) {
    if (!Pump(lines, &budget, &limited)) {
      const int err = errno;
      ++stats_.read_errors;
      if (!fifo_) resume_ = position();
      Close();
      return Status::IOError("cannot read " + Q(path_) + ": " + std::strerror(err));
    }
    if (limited || fifo_) break;
    if (Truncated()) {
      ++stats_.truncations;
      StartAt(0, "");
      continue;
    }
    if (!Rotated()) break;
    // Read what was appended to the old file since, then move to the new one.
    if (!Pump(lines, &budget, &limited) || limited) break;
    SwitchToNewFile();
  }
  if (more != nullptr) *more = limited;
  return Status::Ok();
}

}  // namespace peerbloom::daemon
