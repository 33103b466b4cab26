#include "daemon/feeds/file_follower.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/wait.h"

namespace peerbloom::daemon {
namespace {

using Lines = std::vector<std::string>;

uint64_t Inode(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0);
  return static_cast<uint64_t>(st.st_ino);
}

class FileFollowerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "follower.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/store.log";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Append(const std::string& text, const std::string& path = "") {
    std::ofstream out(path.empty() ? path_ : path, std::ios::app | std::ios::binary);
    out << text;
  }
  Lines Poll(FileFollower* f, bool* more = nullptr) {
    Lines lines;
    const Status s = f->Poll(&lines, more);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return lines;
  }

  std::string dir_;
  std::string path_;
};

TEST_F(FileFollowerTest, ReturnsAppendedLinesOnce) {
  Append("a\nb\n");
  FileFollower f(path_);
  EXPECT_EQ(Poll(&f), (Lines{"a", "b"}));
  EXPECT_EQ(Poll(&f), Lines{});
  Append("c\n");
  EXPECT_EQ(Poll(&f), Lines{"c"});
  EXPECT_EQ(f.position().offset, 6u);
  EXPECT_EQ(f.stats().lines, 3u);
}

TEST_F(FileFollowerTest, PartialLineWaitsForItsNewline) {
  Append("first\nsec");
  FileFollower f(path_);
  EXPECT_EQ(Poll(&f), Lines{"first"});
  EXPECT_EQ(f.position().offset, 6u);  // the partial line is not consumed
  Append("ond");
  EXPECT_EQ(Poll(&f), Lines{});
  Append("\n");
  EXPECT_EQ(Poll(&f), Lines{"second"});
  EXPECT_EQ(f.position().offset, 13u);
}

TEST_F(FileFollowerTest, MissingFileIsNotAnErrorUntilItAppears) {
  FileFollower f(path_);
  EXPECT_EQ(Poll(&f), Lines{});
  EXPECT_FALSE(f.is_open());
  Append("x\n");
  EXPECT_EQ(Poll(&f), Lines{"x"});
  EXPECT_TRUE(f.is_open());
}

TEST_F(FileFollowerTest, OverlongLinesAreSkippedAndCounted) {
  FileFollowerOptions options;
  options.max_line_bytes = 10;
  FileFollower f(path_, options);
  Append("short\n" + std::string(30, 'a') + "\nafter\n");
  EXPECT_EQ(Poll(&f), (Lines{"short", "after"}));
  EXPECT_EQ(f.stats().long_lines_skipped, 1u);
  // Exactly at the limit passes; one more byte, arriving across polls, is skipped.
  Append(std::string(10, 'b') + "\n" + std::string(8, 'c'));
  EXPECT_EQ(Poll(&f), Lines{std::string(10, 'b')});
  Append("ccc");
  EXPECT_EQ(Poll(&f), Lines{});
  Append("c\nok\n");
  EXPECT_EQ(Poll(&f), Lines{"ok"});
  EXPECT_EQ(f.stats().long_lines_skipped, 2u);
  EXPECT_EQ(f.position().offset, std::filesystem::file_size(path_));
}

TEST_F(FileFollowerTest, PollsAreBoundedInLinesAndBytes) {
  FileFollowerOptions options;
  options.max_lines_per_poll = 2;
  FileFollower f(path_, options);
  Append("1\n2\n3\n4\n5\n");
  bool more = false;
  EXPECT_EQ(Poll(&f, &more), (Lines{"1", "2"}));
  EXPECT_TRUE(more);
  EXPECT_EQ(f.position().offset, 4u);
  EXPECT_EQ(Poll(&f, &more), (Lines{"3", "4"}));
  EXPECT_EQ(Poll(&f, &more), Lines{"5"});
  EXPECT_FALSE(more);

  FileFollowerOptions small;
  small.max_bytes_per_poll = 4;
  FileFollower g(path_, small);
  EXPECT_EQ(Poll(&g, &more), (Lines{"1", "2"}));
  EXPECT_TRUE(more);
  EXPECT_EQ(Poll(&g, &more), (Lines{"3", "4"}));
  EXPECT_EQ(Poll(&g, &more), Lines{"5"});
}

// logrotate / squid -k rotate: rename, then a new file at the path. The old file's last
// lines (written after the previous poll) come first, then the new file from its start.
TEST_F(FileFollowerTest, RenameRotationFinishesOldFileThenReadsNewOne) {
  Append("a\nb\n");
  FileFollower f(path_);
  EXPECT_EQ(Poll(&f), (Lines{"a", "b"}));
  Append("c\n");
  std::filesystem::rename(path_, path_ + ".0");
  EXPECT_EQ(Poll(&f), Lines{"c"});  // no new file yet: keep reading the old one
  Append("d\n", path_ + ".0");
  Append("e\n");
  EXPECT_EQ(Poll(&f), (Lines{"d", "e"}));
  EXPECT_EQ(f.stats().rotations, 1u);
  EXPECT_EQ(f.position().offset, 2u);
  EXPECT_EQ(f.position().inode, Inode(path_));
}

// A rotated-away file that ends without '\n' (a writer cut short): its torn last line is
// dropped and counted, never glued to the new file's first line.
TEST_F(FileFollowerTest, TornLastLineOfARotatedFileIsDropped) {
  Append("a\ntor");
  FileFollower f(path_);
  EXPECT_EQ(Poll(&f), Lines{"a"});
  std::filesystem::rename(path_, path_ + ".0");
  Append("n\n");
  EXPECT_EQ(Poll(&f), Lines{"n"});
  EXPECT_EQ(f.stats().dropped_partial_lines, 1u);
  EXPECT_EQ(f.stats().rotations, 1u);
}

TEST_F(FileFollowerTest, ADirectoryIsRefused) {
  std::filesystem::create_directory(path_);
  FileFollower f(path_);
  Lines lines;
  const Status s = f.Poll(&lines);
  EXPECT_TRUE(s.IsIOError());
  EXPECT_EQ(s.message(), "'" + path_ + "' is not a regular file or a fifo");
  EXPECT_FALSE(f.is_open());
}

TEST_F(FileFollowerTest, CopyTruncateRestartsFromTheStart) {
  Append("one\ntwo\n");
  FileFollower f(path_);
  EXPECT_EQ(Poll(&f), (Lines{"one", "two"}));
  std::filesystem::resize_file(path_, 0);
  Append("x\n");
  EXPECT_EQ(Poll(&f), Lines{"x"});
  EXPECT_EQ(f.stats().truncations, 1u);
  EXPECT_EQ(f.stats().rotations, 0u);
}

// Truncated and refilled past the old offset before the next poll: the size alone cannot
// tell, the bytes before the position do.
TEST_F(FileFollowerTest, CopyTruncateHiddenByNewWritesIsDetected) {
  Append("one\ntwo\n");
  FileFollower f(path_);
  EXPECT_EQ(Poll(&f), (Lines{"one", "two"}));
  std::filesystem::resize_file(path_, 0);
  Append("alpha\nbeta\n");
  EXPECT_EQ(Poll(&f), (Lines{"alpha", "beta"}));
  EXPECT_EQ(f.stats().truncations, 1u);
}

TEST_F(FileFollowerTest, RestartResumesWithoutLossOrDuplicates) {
  Append("l1\nl2\nl3\npart");
  FollowerPosition saved;
  {
    FileFollower f(path_);
    EXPECT_EQ(Poll(&f), (Lines{"l1", "l2", "l3"}));
    saved = f.position();
  }
  EXPECT_EQ(saved.offset, 9u);
  EXPECT_EQ(saved.fingerprint_bytes, 9u);
  Append("ial\nl5\n");
  FileFollower g(path_);
  g.ResumeFrom(saved);
  EXPECT_EQ(g.position(), saved);  // before it opens, the saved position stands
  EXPECT_EQ(Poll(&g), (Lines{"partial", "l5"}));
  EXPECT_EQ(g.stats().resumes, 1u);
  EXPECT_EQ(g.stats().resume_mismatches, 0u);
  EXPECT_EQ(g.last_resume_mismatch(), "");
}

// Follows `path` to its current end and returns the position there.
FollowerPosition ReadAll(const std::string& path, Lines* lines = nullptr) {
  FileFollower f(path);
  Lines got;
  EXPECT_TRUE(f.Poll(&got).ok());
  if (lines != nullptr) *lines = got;
  return f.position();
}

// Sets a file's modification time (seconds since the epoch), so that the order of rotated
// files does not depend on how fast the test wrote them.
void SetMtime(const std::string& path, int64_t seconds) {
  const struct timespec times[2] = {{seconds, 0}, {seconds, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

// Squid's `squid -k rotate` while the daemon was down: store.log became store.log.0 with
// lines the daemon never read, and a new store.log started.
TEST_F(FileFollowerTest, ResumeFindsTheSavedFileUnderItsRotatedName) {
  Append("old1\nold2\n");
  const FollowerPosition saved = ReadAll(path_);
  Append("old3\nold4\n");
  std::filesystem::rename(path_, path_ + ".0");
  Append("new1\nnew2\n");
  SetMtime(path_ + ".0", 1000);
  FileFollower g(path_);
  g.ResumeFrom(saved);
  bool more = false;
  Lines got = Poll(&g, &more);
  while (more) {
    const Lines next = Poll(&g, &more);
    got.insert(got.end(), next.begin(), next.end());
  }
  EXPECT_EQ(got, (Lines{"old3", "old4", "new1", "new2"}));
  EXPECT_EQ(g.stats().resumes, 0u);
  EXPECT_EQ(g.stats().resume_mismatches, 1u);
  EXPECT_EQ(g.stats().resumes_rotated, 1u);
  EXPECT_EQ(g.stats().resumes_lost, 0u);
  EXPECT_EQ(g.stats().rotated_files_read, 1u);
  EXPECT_EQ(g.last_resume_newer_files(), 0u);
  EXPECT_EQ(
      g.last_resume_mismatch(),
      "file at '" + path_ + "' is not the saved one: resuming in '" + path_ + ".0' at byte '10'");
  EXPECT_EQ(g.last_resume_lost(), "");
  // Now at the path's file: appends and the next rotation are followed as usual.
  Append("new3\n");
  EXPECT_EQ(Poll(&g), Lines{"new3"});
  EXPECT_EQ(g.position().inode, Inode(path_));
}

// Reads every line available now, however many polls that takes (bounded).
Lines Drain(FileFollower* f) {
  Lines all;
  bool more = true;
  for (int i = 0; i < 100 && more; ++i) {
    Lines lines;
    EXPECT_TRUE(f->Poll(&lines, &more).ok());
    all.insert(all.end(), lines.begin(), lines.end());
  }
  return all;
}

// Squid's `logfile_rotate 3` rotated twice while the daemon was down: the saved file is now
// store.log.1, then come store.log.0 and store.log. An older store.log.2 must not be read.
TEST_F(FileFollowerTest, ResumeReadsNewerRotatedFilesInOrderSquidNumbering) {
  Append("ancient\n", path_ + ".2");
  SetMtime(path_ + ".2", 900);
  Append("a1\n");
  const FollowerPosition saved = ReadAll(path_);
  Append("a2\n");
  std::filesystem::rename(path_, path_ + ".1");
  Append("b1\nb2\n", path_ + ".0");
  Append("c1\n");
  SetMtime(path_ + ".1", 1000);
  SetMtime(path_ + ".0", 1000);  // the same tick: the rotation number orders them
  FileFollower g(path_);
  g.ResumeFrom(saved);
  EXPECT_EQ(Drain(&g), (Lines{"a2", "b1", "b2", "c1"}));
  EXPECT_EQ(g.stats().resumes_rotated, 1u);
  EXPECT_EQ(g.stats().rotated_files_read, 2u);
  EXPECT_EQ(g.pending_files(), 0u);
  EXPECT_EQ(g.last_resume_newer_files(), 1u);  // store.log.0, read by now
}

// logrotate's schemes: numbered from .1 with older ones compressed, or dated.
TEST_F(FileFollowerTest, ResumeReadsLogrotateAndDatedNames) {
  Append("x1\n");
  const FollowerPosition saved = ReadAll(path_);
  Append("x2\n");
  std::filesystem::rename(path_, path_ + "-20261122");
  Append("y1\n", path_ + "-20261123");
  Append("older\n", path_ + ".2.gz");
  Append("z1\n");
  SetMtime(path_ + ".2.gz", 500);
  SetMtime(path_ + "-20261122", 1000);
  SetMtime(path_ + "-20261123", 2000);
  FileFollower g(path_);
  g.ResumeFrom(saved);
  EXPECT_EQ(Drain(&g), (Lines{"x2", "y1", "z1"}));
  EXPECT_EQ(g.stats().rotated_files_read, 2u);
}

// logrotate's copytruncate while the daemon was down: the saved bytes are in a copy with
// another inode, the path's file was truncated and written again.
TEST_F(FileFollowerTest, ResumeFindsACopyTruncatedFile) {
  Append("k1\nk2\n");
  const FollowerPosition saved = ReadAll(path_);
  Append("k3\n");
  std::filesystem::copy_file(path_, path_ + ".1");
  std::filesystem::resize_file(path_, 0);
  Append("m1\nm2\nm3\n");
  SetMtime(path_ + ".1", 1000);
  FileFollower g(path_);
  g.ResumeFrom(saved);
  EXPECT_EQ(Drain(&g), (Lines{"k3", "m1", "m2", "m3"}));
  EXPECT_EQ(g.stats().resumes_rotated, 1u);
}

// Two store.logs can end on the same bytes (a periodic store_digest line) and an inode is
// reused right after a rotation frees it: neither makes another file the saved one.
TEST_F(FileFollowerTest, ResumeDoesNotConfuseFilesEndingAlike) {
  const std::string same_end(100, 'd');
  Append("first file\n" + same_end + "\n");
  const FollowerPosition saved = ReadAll(path_);
  std::filesystem::remove(path_);
  Append("other file\n" + same_end + "\nafter\n");
  FileFollower g(path_);
  g.ResumeFrom(saved);
  EXPECT_EQ(Drain(&g), (Lines{"other file", same_end, "after"}));
  EXPECT_EQ(g.stats().resumes, 0u);
  EXPECT_EQ(g.stats().resumes_lost, 1u);
}

// The saved file was rotated and compressed while the daemon was down: its tail is lost,
// which is said with the file and byte; the rotated file written after it is still read.
TEST_F(FileFollowerTest, LostTailIsReportedAndLaterFilesAreRead) {
  Append("p1\n");
  FollowerPosition saved = ReadAll(path_);
  saved.mtime_ns = int64_t{1500} * 1000000000;  // when it was saved
  Append("p2\n");
  std::filesystem::rename(path_, path_ + ".1.gz");
  Append("q1\n", path_ + ".0");
  Append("ancient\n", path_ + ".5");
  Append("r1\n");
  SetMtime(path_ + ".0", 2000);
  SetMtime(path_ + ".5", 1000);
  FileFollower g(path_);
  g.ResumeFrom(saved);
  EXPECT_EQ(Drain(&g), (Lines{"q1", "r1"}));
  EXPECT_EQ(g.stats().resumes_lost, 1u);
  EXPECT_EQ(g.stats().rotated_files_read, 1u);
  EXPECT_EQ(g.last_resume_lost(),
            "lines after byte '3' of the file that was at '" + path_ + "' (inode '" +
                std::to_string(saved.inode) +
                "') are lost: no file at the path or under a rotated name holds them "
                "(compressed, not read: '" +
                path_ + ".1.gz')");
  EXPECT_EQ(g.last_resume_mismatch(), g.last_resume_lost());
}

// A position taken while reading a rotated file resumes there after another restart.
TEST_F(FileFollowerTest, PositionInsideARotatedFileResumes) {
  Append("s1\n");
  const FollowerPosition saved = ReadAll(path_);
  Append("s2\ns3\ns4\n");
  std::filesystem::rename(path_, path_ + ".0");
  Append("t1\n");
  SetMtime(path_ + ".0", 1000);
  FileFollowerOptions options;
  options.max_lines_per_poll = 1;
  FollowerPosition middle;
  {
    FileFollower g(path_, options);
    g.ResumeFrom(saved);
    EXPECT_EQ(Poll(&g), Lines{"s2"});
    middle = g.position();
    EXPECT_EQ(middle.inode, Inode(path_ + ".0"));
  }
  FileFollower h(path_);
  h.ResumeFrom(middle);
  EXPECT_EQ(Drain(&h), (Lines{"s3", "s4", "t1"}));
}

TEST_F(FileFollowerTest, ResumeAgainstRewrittenBytesSaysTheTailIsLost) {
  Append("aaaa\nbbbb\n");
  FileFollower f(path_);
  EXPECT_EQ(Poll(&f).size(), 2u);
  const FollowerPosition saved = f.position();
  EXPECT_EQ(saved.head_bytes, 10u);
  // Same inode, rewritten in place with other bytes of the same length, plus more.
  std::filesystem::resize_file(path_, 0);
  Append("cccc\ndddd\neeee\n");
  FileFollower g(path_);
  g.ResumeFrom(saved);
  EXPECT_EQ(Poll(&g), (Lines{"cccc", "dddd", "eeee"}));
  EXPECT_EQ(g.last_resume_lost(), "lines after byte '10' of the file that was at '" + path_ +
                                      "' (inode '" + std::to_string(saved.inode) +
                                      "') are lost: no file at the path or under a rotated "
                                      "name holds them");
  EXPECT_EQ(g.stats().resumes_lost, 1u);

  // Shorter than the saved offset.
  std::filesystem::resize_file(path_, 3);
  FileFollower h(path_);
  h.ResumeFrom(g.position());
  EXPECT_EQ(Poll(&h), Lines{});
  EXPECT_EQ(h.stats().resumes_lost, 1u);
}

TEST_F(FileFollowerTest, StartAtEndSkipsExistingLines) {
  Append("old1\nold2\npart");
  FileFollowerOptions options;
  options.start_at_end = true;
  FileFollower f(path_, options);
  EXPECT_EQ(Poll(&f), Lines{});
  Append("ial\nnew\n");
  EXPECT_EQ(Poll(&f), (Lines{"partial", "new"}));
}

// Polls until `want` lines arrived or a generous deadline passed (the writes are done before
// the first poll, so only a stalled machine makes this take more than one poll).
Lines PollUntil(FileFollower* f, size_t want) {
  Lines all;
  testing::WaitFor(
      [&] {
        Lines lines;
        EXPECT_TRUE(f->Poll(&lines).ok());
        all.insert(all.end(), lines.begin(), lines.end());
        return all.size() >= want;
      },
      testing::kWaitDeadline, std::chrono::milliseconds(5));
  return all;
}

TEST_F(FileFollowerTest, FollowsAFifoAcrossWriters) {
  ASSERT_EQ(::mkfifo(path_.c_str(), 0600), 0);
  FileFollower f(path_);
  EXPECT_EQ(Poll(&f), Lines{});
  ASSERT_TRUE(f.is_fifo());
  EXPECT_GE(f.poll_fd(), 0);
  for (const char* text : {"a\nb", "\n", "c\n"}) {
    const int w = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK);
    ASSERT_GE(w, 0);
    ASSERT_EQ(::write(w, text, std::strlen(text)), static_cast<ssize_t>(std::strlen(text)));
    ::close(w);  // writers come and go
  }
  EXPECT_EQ(PollUntil(&f, 3), (Lines{"a", "b", "c"}));
  EXPECT_EQ(Poll(&f), Lines{});
}

}  // namespace
}  // namespace peerbloom::daemon
