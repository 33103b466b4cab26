// FileFollower: reads the lines appended to a file (store.log, a line feed) or a FIFO, like
// `tail -F`, without blocking, with a position that survives restarts.
//
//  - Poll() returns the complete lines written since the last call. A partial last line
//    waits until its '\n' arrives. Each poll is bounded in bytes and lines; a line longer
//    than max_line_bytes is skipped (counted), never buffered whole.
//  - Rotation by rename (logrotate's default, `squid -k rotate`): when a different file
//    appears at the path, the old file is read to its end first, then the new one from its
//    start. A path that is missing for a while keeps the old file open.
//  - copytruncate: when the file gets shorter than what was read, or the bytes just before the
//    position change, it is read again from the start.
//  - position() is the end of the last returned line: (device, inode, offset), a hash of the
//    file's first bytes (up to 4 KiB), a hash of up to 64 bytes just before the offset, and
//    the file's modification time. Persist it together with the state the lines were
//    applied to. ResumeFrom() at restart finds the file the position points at by its
//    content (both hashes; an inode alone is reused right after a rotation): at the path,
//    or among its rotated names when the file was rotated while the daemon was down
//    (`path.0`, `path.1`, `path-20261123`, ...: any regular file in the same directory whose
//    name is the path's plus a '.', '-' or '_' suffix, compressed ones excepted). It then
//    reads that file's remaining tail, the rotated files newer than it (oldest first, by
//    modification time), and the file at the path from its start.
//  - When no file matches, the lines after the position are lost: last_resume_lost() says
//    which file and range, and the rotated files modified after the position was taken are
//    read before the file at the path (docs/squid.md, "Rebuilding the live set").
//  - FIFOs are read as they come (no offsets, no resume). The follower holds a write end open
//    so that writers may come and go without an end-of-file on every poll.
//
// Plain POSIX I/O, no inotify: the daemon calls Poll() on a timer (or when poll_fd() is
// readable, for a FIFO). Thread-safety: none. Resource owner: not copyable.
#ifndef PEERBLOOM_DAEMON_FEEDS_FILE_FOLLOWER_H_
#define PEERBLOOM_DAEMON_FEEDS_FILE_FOLLOWER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "peerbloom/status.h"

namespace peerbloom::daemon {

struct FileFollowerOptions {
  // Default: 32 KiB (the store.log and line-feed parsers' limit). Longer lines are skipped.
  size_t max_line_bytes = 32 * 1024;
  // Default: 10000. Lines returned by one Poll(); the rest waits for the next.
  size_t max_lines_per_poll = 10000;
  // Default: 4 MiB. Bytes read by one Poll().
  size_t max_bytes_per_poll = 4 << 20;
  // Default: false. On the very first open without a position to resume: skip what the
  // file already holds (start after its last complete line).
  bool start_at_end = false;
};

// Where a follower stands, for snapshots.
struct FollowerPosition {
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t offset = 0;             // bytes of the file consumed (ends on a line boundary)
  uint32_t fingerprint_bytes = 0;  // min(offset, 64)
  uint64_t fingerprint = 0;        // hash of the fingerprint_bytes bytes before offset
  uint32_t head_bytes = 0;         // min(offset, 4096); 0 in positions saved before it existed
  uint64_t head_fingerprint = 0;   // hash of the file's first head_bytes bytes
  int64_t mtime_ns = 0;            // the file's modification time when the position was taken
  bool operator==(const FollowerPosition&) const = default;
};

struct FileFollowerStats {
  uint64_t lines = 0;                  // lines returned
  uint64_t bytes = 0;                  // bytes read
  uint64_t long_lines_skipped = 0;     // lines longer than max_line_bytes
  uint64_t opens = 0;                  // files opened (first sight, rotations, reopen after errors)
  uint64_t rotations = 0;              // a different file appeared at the path
  uint64_t truncations = 0;            // the file shrank or was rewritten under the position
  uint64_t resumes = 0;                // saved positions that matched
  uint64_t resume_mismatches = 0;      // saved positions not at the path (found rotated or lost)
  uint64_t resumes_rotated = 0;        // saved positions found under a rotated name
  uint64_t resumes_lost = 0;           // saved positions that matched no file: lines lost
  uint64_t rotated_files_read = 0;     // rotated files read after a resume (tail or whole)
  uint64_t dropped_partial_lines = 0;  // an unterminated last line of a rotated-away file
  uint64_t read_errors = 0;
};

class FileFollower {
 public:
  static constexpr uint32_t kFingerprintBytes = 64;
  static constexpr uint32_t kHeadBytes = 4096;
  // Rotated names looked at when resuming; more are ignored (and said so).
  static constexpr size_t kMaxRotatedFiles = 64;

  explicit FileFollower(std::string path, FileFollowerOptions options = FileFollowerOptions());
  ~FileFollower();
  FileFollower(const FileFollower&) = delete;
  FileFollower& operator=(const FileFollower&) = delete;

  // Where to continue when the file is (re)opened next. Ignored for FIFOs.
  void ResumeFrom(const FollowerPosition& position) { resume_ = position; }

  // Replaces *lines with the complete lines available now (without their '\n'). A missing
  // file is not an error: no lines, is_open() stays false, the next Poll() tries again.
  // IOError when the file cannot be opened or read; the position is kept and the next
  // Poll() resumes from it. *more (if given) is set when a limit stopped the poll early.
  Status Poll(std::vector<std::string>* lines, bool* more = nullptr);

  // The end of the last line returned (or skipped).
  FollowerPosition position() const;
  const FileFollowerStats& stats() const noexcept { return stats_; }
  const std::string& path() const noexcept { return path_; }
  bool is_open() const noexcept { return fd_ >= 0; }
  bool is_fifo() const noexcept { return fifo_; }
  // The descriptor to watch for a FIFO, -1 otherwise (regular files are polled on a timer).
  int poll_fd() const noexcept { return fifo_ ? fd_ : -1; }
  // Why the last saved position was not used at the path, or "" when it was (or none was
  // given). Set both when it was found under a rotated name and when it was lost.
  const std::string& last_resume_mismatch() const noexcept { return resume_mismatch_; }
  // Which file and byte range could not be read because no file matched the saved position,
  // or "" (the error an operator must see; the daemon logs it).
  const std::string& last_resume_lost() const noexcept { return resume_lost_; }
  // Files queued to be read before the file at the path (rotated files after a resume).
  size_t pending_files() const noexcept { return pending_.size(); }
  // Rotated files the last resume queued after the one it resumed in (or, when the position
  // was lost, the ones it reads at all), before the file at the path. Unlike pending_files(),
  // it keeps its value once Poll() has read them (the poll that resumes usually does).
  size_t last_resume_newer_files() const noexcept { return resume_newer_files_; }
  // Bytes not read yet: the current file's beyond the last line returned, plus the queued
  // files' (0 for a FIFO or while nothing is open).
  uint64_t unread_bytes() const;

  // The hash stored in FollowerPosition::fingerprint.
  static uint64_t Fingerprint(const char* data, size_t size) noexcept;

 private:
  // A file opened for reading, not yet current.
  struct OpenFile {
    int fd = -1;
    uint64_t device = 0;
    uint64_t inode = 0;
    int64_t mtime_ns = 0;
    uint64_t size = 0;
    std::string name;
  };

  Status Open();
  void Close();
  void MakeCurrent(const OpenFile& file);
  void StartAt(uint64_t offset, std::string tail);
  void Resume(const OpenFile& at_path);
  bool Matches(const OpenFile& file, std::string* tail) const;
  std::vector<OpenFile> OpenRotatedFiles(std::vector<std::string>* unreadable) const;
  // Returns the rotated files queued (the file at the path not counted).
  size_t QueueNewer(std::vector<OpenFile> rotated, const OpenFile& after, const OpenFile& at_path);
  void NextPendingFile();
  void UpdateHead();
  void SeekToLastLine(uint64_t size);
  // Reads and splits until end of data or a limit. Returns false on a read error.
  bool Pump(std::vector<std::string>* lines, size_t* budget, bool* limited);
  void Split(std::vector<std::string>* lines, bool* limited);
  bool Truncated();
  bool Rotated();
  void SwitchToNewFile();

  std::string path_;
  FileFollowerOptions options_;
  std::optional<FollowerPosition> resume_;
  bool first_open_ = true;

  int fd_ = -1;
  int fifo_writer_fd_ = -1;
  bool fifo_ = false;
  uint64_t device_ = 0;
  uint64_t inode_ = 0;
  uint64_t read_offset_ = 0;      // bytes read from the file
  uint64_t consumed_offset_ = 0;  // end of the last complete line
  std::string carry_;             // read but not yet split (a poll hit its line limit)
  std::string partial_;           // split, waiting for its '\n'
  bool skipping_ = false;         // inside an over-long line
  std::string recent_;            // up to 64 bytes read just before carry_
  std::string tail_;              // up to 64 bytes just before consumed_offset_
  uint32_t head_bytes_ = 0;       // the first bytes hashed into head_fingerprint_
  uint64_t head_fingerprint_ = 0;
  std::vector<OpenFile> pending_;  // read after the current file, in order
  std::string resume_mismatch_;
  std::string resume_lost_;
  size_t resume_newer_files_ = 0;
  FileFollowerStats stats_;
};

}  // namespace peerbloom::daemon

#endif  // PEERBLOOM_DAEMON_FEEDS_FILE_FOLLOWER_H_
