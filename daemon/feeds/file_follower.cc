#include "daemon/feeds/file_follower.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <string_view>

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

int64_t MtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

// A rotated name that only a decompressor could read.
bool IsCompressedName(std::string_view name) {
  for (std::string_view ext : {".gz", ".bz2", ".xz", ".zst", ".lz4", ".lzma", ".Z", ".zip"}) {
    if (name.size() > ext.size() && name.substr(name.size() - ext.size()) == ext) return true;
  }
  return false;
}

// The number at the end of a rotated name ("store.log.2" -> 2), or -1. Both Squid's
// `logfile_rotate` (.0 newest) and logrotate (.1 newest) count up with age.
int64_t RotationNumber(std::string_view name) {
  size_t i = name.size();
  while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') --i;
  if (i == name.size() || name.size() - i > 12) return -1;
  return std::stoll(std::string(name.substr(i)));
}

}  // namespace

FileFollower::FileFollower(std::string path, FileFollowerOptions options)
    : path_(std::move(path)), options_(options) {}

FileFollower::~FileFollower() {
  Close();
  for (const OpenFile& f : pending_) ::close(f.fd);
}

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
  p.head_bytes = head_bytes_;
  p.head_fingerprint = head_fingerprint_;
  struct stat st;
  if (fd_ >= 0 && !fifo_ && ::fstat(fd_, &st) == 0) p.mtime_ns = MtimeNs(st);
  return p;
}

uint64_t FileFollower::unread_bytes() const {
  if (fd_ < 0 || fifo_) return 0;
  struct stat st;
  uint64_t unread = 0;
  if (::fstat(fd_, &st) == 0 && static_cast<uint64_t>(st.st_size) > consumed_offset_) {
    unread = static_cast<uint64_t>(st.st_size) - consumed_offset_;
  }
  for (const OpenFile& f : pending_) {
    if (::fstat(f.fd, &st) == 0) unread += static_cast<uint64_t>(st.st_size);
  }
  return unread;
}

void FileFollower::Close() {
  if (fd_ >= 0) ::close(fd_);
  if (fifo_writer_fd_ >= 0) ::close(fifo_writer_fd_);
  fd_ = fifo_writer_fd_ = -1;
}

void FileFollower::MakeCurrent(const OpenFile& file) {
  fd_ = file.fd;
  device_ = file.device;
  inode_ = file.inode;
}

void FileFollower::StartAt(uint64_t offset, std::string tail) {
  if (!fifo_) ::lseek(fd_, static_cast<off_t>(offset), SEEK_SET);
  read_offset_ = consumed_offset_ = offset;
  head_bytes_ = 0;  // UpdateHead() hashes the first bytes again
  head_fingerprint_ = 0;
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
  const OpenFile file{
      fd,          static_cast<uint64_t>(st.st_dev),  static_cast<uint64_t>(st.st_ino),
      MtimeNs(st), static_cast<uint64_t>(st.st_size), path_};
  fifo_ = S_ISFIFO(st.st_mode);
  ++stats_.opens;
  resume_mismatch_.clear();
  if (fifo_) {
    MakeCurrent(file);
    // Our own write end keeps read() at EAGAIN instead of end-of-file between writers.
    fifo_writer_fd_ = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    StartAt(0, "");
  } else if (resume_) {
    Resume(file);
  } else if (first_open_ && options_.start_at_end) {
    MakeCurrent(file);
    SeekToLastLine(file.size);
  } else {
    MakeCurrent(file);
    StartAt(0, "");
  }
  resume_.reset();
  first_open_ = false;
  UpdateHead();
  return Status::Ok();
}

// Whether `file` is the one the saved position was taken in, judged by content: an inode is
// reused as soon as a rotation frees it, and two store.logs can end on the same 64 bytes
// (a periodic store_digest line), but not also begin with the same 4 KiB of timestamped
// lines. On a match, *tail holds the bytes just before the saved offset.
bool FileFollower::Matches(const OpenFile& file, std::string* tail) const {
  const FollowerPosition& p = *resume_;
  const bool same_inode = file.device == p.device && file.inode == p.inode;
  if (file.size < p.offset ||
      p.fingerprint_bytes > std::min<uint64_t>(p.offset, kFingerprintBytes) ||
      p.head_bytes > std::min<uint64_t>(p.offset, kHeadBytes)) {
    return false;
  }
  // Nothing read yet, or a position from before head hashes: only the inode can tell.
  if ((p.offset == 0 || p.head_bytes == 0) && !same_inode) return false;
  std::string bytes(p.head_bytes, '\0');
  if (p.head_bytes > 0 && (!PreadAll(file.fd, bytes.data(), bytes.size(), 0) ||
                           Fingerprint(bytes.data(), bytes.size()) != p.head_fingerprint)) {
    return false;
  }
  bytes.assign(p.fingerprint_bytes, '\0');
  if (!PreadAll(file.fd, bytes.data(), bytes.size(), p.offset - bytes.size()) ||
      Fingerprint(bytes.data(), bytes.size()) != p.fingerprint) {
    return false;
  }
  *tail = std::move(bytes);
  return true;
}

void FileFollower::Resume(const OpenFile& at_path) {
  const FollowerPosition p = *resume_;
  resume_lost_.clear();
  resume_newer_files_ = 0;
  std::string tail;
  if (Matches(at_path, &tail)) {
    MakeCurrent(at_path);
    StartAt(p.offset, std::move(tail));
    ++stats_.resumes;
    return;
  }
  ++stats_.resume_mismatches;
  std::vector<std::string> unreadable;
  std::vector<OpenFile> rotated = OpenRotatedFiles(&unreadable);
  // Copies (copytruncate) match too: prefer the file that kept the inode.
  auto found = rotated.end();
  for (auto it = rotated.begin(); it != rotated.end(); ++it) {
    std::string t;
    if ((found == rotated.end() || it->inode == p.inode) && Matches(*it, &t)) {
      found = it;
      tail = std::move(t);
    }
  }
  if (found != rotated.end()) {
    const OpenFile file = *found;
    rotated.erase(found);
    resume_mismatch_ = "file at " + Q(path_) + " is not the saved one: resuming in " +
                       Q(file.name) + " at byte " + Q(p.offset);
    ++stats_.resumes_rotated;
    ++stats_.rotated_files_read;
    MakeCurrent(file);
    StartAt(p.offset, std::move(tail));
    resume_newer_files_ = QueueNewer(std::move(rotated), file, at_path);
    return;
  }
  ++stats_.resumes_lost;
  resume_lost_ = "lines after byte " + Q(p.offset) + " of the file that was at " + Q(path_) +
                 " (inode " + Q(p.inode) + ") are lost: no file at the path or under a rotated" +
                 " name holds them";
  if (!unreadable.empty()) resume_lost_ += " (compressed, not read: " + Q(unreadable[0]) + ")";
  resume_mismatch_ = resume_lost_;
  // Rotated files written after the position was taken hold only later lines; without a
  // modification time (an older snapshot) none can be told apart from older ones.
  OpenFile saved;
  saved.mtime_ns = p.mtime_ns == 0 ? INT64_MAX : p.mtime_ns;
  saved.name = path_ + ".lost";
  resume_newer_files_ = QueueNewer(std::move(rotated), saved, at_path);
  NextPendingFile();
}

std::vector<FileFollower::OpenFile> FileFollower::OpenRotatedFiles(
    std::vector<std::string>* unreadable) const {
  const size_t slash = path_.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path_.substr(0, slash);
  const std::string base = slash == std::string::npos ? path_ : path_.substr(slash + 1);
  std::vector<OpenFile> files;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return files;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (name.size() <= base.size() + 1 || name.substr(0, base.size()) != base ||
        std::string_view("._-").find(name[base.size()]) == std::string_view::npos) {
      continue;
    }
    const std::string full = dir + "/" + std::string(name);
    if (IsCompressedName(name)) {
      unreadable->push_back(full);
      continue;
    }
    if (files.size() == kMaxRotatedFiles) break;
    const int fd = ::open(full.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0) continue;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      continue;
    }
    files.push_back({fd, static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                     MtimeNs(st), static_cast<uint64_t>(st.st_size), full});
  }
  ::closedir(d);
  return files;
}

// Queues the rotated files newer than `after`, oldest first, then the file at the path;
// closes the rest; returns how many rotated files it queued. Newer: modified later, or at the
// same time with a lower rotation number (the clock that stamps files ticks every few
// milliseconds).
size_t FileFollower::QueueNewer(std::vector<OpenFile> rotated, const OpenFile& after,
                                const OpenFile& at_path) {
  auto older = [](const OpenFile& a, const OpenFile& b) {
    if (a.mtime_ns != b.mtime_ns) return a.mtime_ns < b.mtime_ns;
    return RotationNumber(a.name) > RotationNumber(b.name);
  };
  std::sort(rotated.begin(), rotated.end(), older);
  size_t queued = 0;
  for (OpenFile& f : rotated) {
    const bool same_as_path = f.device == at_path.device && f.inode == at_path.inode;
    if (older(after, f) && !same_as_path) {
      pending_.push_back(f);
      ++queued;
    } else {
      ::close(f.fd);
    }
  }
  pending_.push_back(at_path);
  return queued;
}

// The current file is read to its end: move to the next queued one, from its start.
void FileFollower::NextPendingFile() {
  if (!partial_.empty() || skipping_) ++stats_.dropped_partial_lines;
  if (fd_ >= 0) ::close(fd_);
  const OpenFile next = pending_.front();
  pending_.erase(pending_.begin());
  if (next.name != path_) ++stats_.rotated_files_read;
  MakeCurrent(next);
  StartAt(0, "");
}

// Keeps head_fingerprint_ over the first min(consumed, 4 KiB) bytes: one pread per poll
// until 4 KiB are consumed, none after.
void FileFollower::UpdateHead() {
  if (fd_ < 0 || fifo_) return;
  const uint64_t want = std::min<uint64_t>(consumed_offset_, kHeadBytes);
  if (head_bytes_ == want) return;
  std::string head(static_cast<size_t>(want), '\0');
  if (!PreadAll(fd_, head.data(), head.size(), 0)) return;
  head_bytes_ = static_cast<uint32_t>(want);
  head_fingerprint_ = Fingerprint(head.data(), head.size());
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
  // Bounded: at most one truncation and one rotation are handled per poll, plus one step
  // per file queued by a resume.
  const size_t rounds = 3 + pending_.size();
  for (size_t round = 0; round < rounds && fd_ >= 0; ++round) {
    if (!Pump(lines, &budget, &limited)) {
      const int err = errno;
      ++stats_.read_errors;
      if (!fifo_) resume_ = position();
      Close();
      // The next Open() searches the rotated names again and queues what follows.
      for (const OpenFile& f : pending_) ::close(f.fd);
      pending_.clear();
      return Status::IOError("cannot read " + Q(path_) + ": " + std::strerror(err));
    }
    if (limited || fifo_) break;
    if (Truncated()) {
      ++stats_.truncations;
      StartAt(0, "");
      continue;
    }
    if (!pending_.empty()) {
      NextPendingFile();
      continue;
    }
    if (!Rotated()) break;
    // Read what was appended to the old file since, then move to the new one.
    if (!Pump(lines, &budget, &limited) || limited) break;
    SwitchToNewFile();
  }
  UpdateHead();
  if (more != nullptr) *more = limited || !pending_.empty();
  return Status::Ok();
}

}  // namespace peerbloom::daemon
