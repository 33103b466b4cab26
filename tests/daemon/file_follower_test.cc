#include "daemon/file_follower.h"

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
#include <thread>
#include <vector>

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

TEST_F(FileFollowerTest, ResumeAgainstAReplacedFileStartsOver) {
  Append("old1\nold2\n");
  FileFollower f(path_);
  EXPECT_EQ(Poll(&f), (Lines{"old1", "old2"}));
  const FollowerPosition saved = f.position();
  // A new file at the path: another inode, whatever its content.
  std::filesystem::rename(path_, path_ + ".0");
  Append("new1\nnew2\nnew3\n");
  FileFollower g(path_);
  g.ResumeFrom(saved);
  EXPECT_EQ(Poll(&g), (Lines{"new1", "new2", "new3"}));
  EXPECT_EQ(g.stats().resume_mismatches, 1u);
  EXPECT_EQ(g.last_resume_mismatch().rfind("file at '" + path_ + "' is not the saved one", 0), 0u)
      << g.last_resume_mismatch();
}

TEST_F(FileFollowerTest, ResumeAgainstRewrittenBytesStartsOver) {
  Append("aaaa\nbbbb\n");
  FileFollower f(path_);
  EXPECT_EQ(Poll(&f).size(), 2u);
  const FollowerPosition saved = f.position();
  // Same inode, rewritten in place with other bytes of the same length, plus more.
  std::filesystem::resize_file(path_, 0);
  Append("cccc\ndddd\neeee\n");
  FileFollower g(path_);
  g.ResumeFrom(saved);
  EXPECT_EQ(Poll(&g), (Lines{"cccc", "dddd", "eeee"}));
  EXPECT_EQ(g.last_resume_mismatch(),
            "bytes before the saved offset '10' of '" + path_ + "' changed");

  // Shorter than the saved offset.
  std::filesystem::resize_file(path_, 3);
  FileFollower h(path_);
  h.ResumeFrom(g.position());
  EXPECT_EQ(Poll(&h), Lines{});
  EXPECT_EQ(h.last_resume_mismatch(),
            "file at '" + path_ + "' has '3' bytes, fewer than the saved offset '15'");
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

// Polls until `want` lines arrived or five seconds passed.
Lines PollUntil(FileFollower* f, size_t want) {
  Lines all;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (all.size() < want && std::chrono::steady_clock::now() < deadline) {
    Lines lines;
    EXPECT_TRUE(f->Poll(&lines).ok());
    all.insert(all.end(), lines.begin(), lines.end());
    if (all.size() < want) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
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
