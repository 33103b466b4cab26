// A followed file rotated while its daemon is stopped: the restarted daemon resumes in the
// rotated file its snapshot points at, reads the newer rotated ones, then the file at the
// path, and its log says how many files that was.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/cluster_harness.h"

namespace peerbloom::testing {
namespace {

void Append(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::app | std::ios::binary) << text;
}

// Rotated files are ordered by modification time; set it rather than wait for the clock.
void SetMtime(const std::string& path, time_t seconds) {
  const struct timespec times[2] = {{seconds, 0}, {seconds, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Squid's `logfile_rotate 3` rotated twice while the daemon was down: the saved file is now
// feed.log.1, then come feed.log.0 and a new feed.log.
TEST(FeedRotation, ResumeAfterTwoRotationsLogsTheNewerFilesItReads) {
  Cluster cluster;
  Node* node = cluster.AddNode("solo");
  const std::string feed = cluster.dir() + "/feed.log";
  NodeOptions options;
  options.extra = "[[feeds]]\npath = \"" + feed + "\"\n";
  Append(feed, "http://x/1\n");
  ASSERT_TRUE(node->Start(options, {})) << node->log_tail();
  ASSERT_TRUE(WaitFor([&] { return node->Stats()["feeds"][0]["lines"] == 1; }, kWaitDeadline))
      << node->Stats()["feeds"][0].dump();
  ASSERT_TRUE(node->Stop());  // the final snapshot keeps the position: byte 11 of feed.log

  Append(feed, "http://x/2\n");
  std::filesystem::rename(feed, feed + ".1");
  Append(feed + ".0", "http://x/3\n");
  Append(feed, "http://x/4\n");
  SetMtime(feed + ".1", 1000);
  SetMtime(feed + ".0", 2000);
  ASSERT_TRUE(node->Start(options, {})) << node->log_tail();
  ASSERT_TRUE(WaitFor([&] { return node->Stats()["feeds"][0]["lines"] == 3; }, kWaitDeadline))
      << node->Stats()["feeds"][0].dump();
  const json stats = node->Stats()["feeds"][0];
  EXPECT_EQ(stats["resumes_rotated"], 1);
  EXPECT_EQ(stats["rotated_files_read"], 2);  // the tail of feed.log.1, then feed.log.0
  EXPECT_EQ(node->WhoHas({"http://x/2", "http://x/3", "http://x/4"}),
            (std::vector<std::vector<std::string>>{{"solo"}, {"solo"}, {"solo"}}));
  const std::string line = "feed '" + feed + "': file at '" + feed +
                           "' is not the saved one: resuming in '" + feed +
                           ".1' at byte '11', then 1 newer rotated file(s) and the file at the "
                           "path from its start";
  EXPECT_NE(ReadAll(cluster.dir() + "/solo/stderr.log").find(line), std::string::npos)
      << node->log_tail();
}

}  // namespace
}  // namespace peerbloom::testing
