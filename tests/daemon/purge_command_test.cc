// The purge command hook and the purge worker in-process: arguments without a shell, exit
// status, signals, the kill after the timeout, a program that does not exist, and jobs that
// come back in order from the worker thread. Waits poll with a deadline.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "daemon/relay/purge_command.h"
#include "daemon/relay/purge_runner.h"
#include "tests/support/wait.h"

namespace peerbloom::daemon {
namespace {

using nlohmann::json;

class PurgeCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/pb-purge-XXXXXX";
    dir_ = ::mkdtemp(pattern);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Script(const std::string& name, const std::string& body) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body;
    EXPECT_EQ(::chmod(path.c_str(), 0755), 0);
    return path;
  }
  std::string Read(const std::string& name) {
    std::ifstream in(dir_ + "/" + name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::string dir_;
  const std::atomic<bool> no_stop_{false};
};

TEST_F(PurgeCommandTest, PassesTheUrlAsOneArgumentWithoutAShell) {
  const std::string hook = Script("h.sh", "printf '%s\\n' \"$#\" \"$@\" > \"$1.out\"\n");
  const std::string url = "http://a/b c;$(touch x)'\"*";
  json result;
  RunPurgeCommand({hook, dir_ + "/args", "--flag"}, url, 60000, no_stop_, &result);
  EXPECT_EQ(result, json({{"exit_status", 0}, {"purged", true}, {"timed_out", false}}));
  EXPECT_EQ(Read("args.out"), "4\n" + dir_ + "/args\n--flag\n--\n" + url + "\n");
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/x"));
}

// A URL that looks like options reaches the program after "--" and in PEERBLOOM_PURGE_URL:
// rm, given the same argv, removes nothing but a file of that name.
TEST_F(PurgeCommandTest, AnOptionLikeUrlIsNeverReadAsAnOption) {
  const std::string victim = dir_ + "/victim";
  std::ofstream(victim) << "kept";
  const std::string hook = Script(
      "env.sh", "printf '%s|%s' \"$PEERBLOOM_PURGE_URL\" \"$#\" > \"" + dir_ + "/env.out\"\n");
  json result;
  RunPurgeCommand({hook}, "-rf " + victim, 60000, no_stop_, &result);
  EXPECT_EQ(result["purged"], true);
  EXPECT_EQ(Read("env.out"), "-rf " + victim + "|2");
  result = json::object();
  RunPurgeCommand({"/bin/rm"}, "--recursive", 60000, no_stop_, &result);
  EXPECT_EQ(result["purged"], false);  // no file named "--recursive": rm says so and fails
  EXPECT_TRUE(std::filesystem::exists(victim));
  result = json::object();
  RunPurgeCommand({"/bin/rm"}, "-f" + std::string(1, '\0') + victim, 60000, no_stop_, &result);
  EXPECT_EQ(result, json({{"purged", false},
                          {"timed_out", false},
                          {"error", "the URL holds a NUL byte: not passed to '/bin/rm'"}}));
  EXPECT_TRUE(std::filesystem::exists(victim));
}

TEST_F(PurgeCommandTest, ReportsExitStatusAndSignal) {
  json result;
  RunPurgeCommand({Script("e.sh", "exit 7\n")}, "u", 60000, no_stop_, &result);
  EXPECT_EQ(result, json({{"exit_status", 7}, {"purged", false}, {"timed_out", false}}));
  result = json::object();
  RunPurgeCommand({Script("k.sh", "kill -TERM $$\n")}, "u", 60000, no_stop_, &result);
  EXPECT_EQ(result, json({{"signal", 15}, {"purged", false}, {"timed_out", false}}));
}

TEST_F(PurgeCommandTest, KillsTheProgramAfterTheTimeout) {
  json result;
  const auto start = std::chrono::steady_clock::now();
  RunPurgeCommand({Script("s.sh", "sleep 600\n")}, "u", 200, no_stop_, &result);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(300));
  EXPECT_EQ(result, json({{"signal", 9},
                          {"purged", false},
                          {"timed_out", true},
                          {"error", "killed after '200' ms"}}));
}

TEST_F(PurgeCommandTest, ReportsAProgramThatCannotRun) {
  json result;
  RunPurgeCommand({dir_ + "/missing"}, "u", 1000, no_stop_, &result);
  EXPECT_EQ(result,
            json({{"purged", false},
                  {"timed_out", false},
                  {"error", "cannot run '" + dir_ + "/missing': No such file or directory"}}));
}

TEST_F(PurgeCommandTest, RunnerReturnsJobsInOrderOffTheCallingThread) {
  const std::thread::id caller = std::this_thread::get_id();
  PurgeRunner runner([caller](const std::atomic<bool>&, json* result) {
    (*result)["other_thread"] = std::this_thread::get_id() != caller;
  });
  for (uint64_t t = 1; t <= 5; ++t) ASSERT_TRUE(runner.Submit({t, "", json::object()}));
  std::vector<PurgeJob> done;
  testing::WaitFor(
      [&] {
        for (PurgeJob& j : runner.TakeDone()) done.push_back(std::move(j));
        return done.size() >= 5;
      },
      std::chrono::seconds(30), std::chrono::milliseconds(5));
  ASSERT_EQ(done.size(), 5u);
  for (uint64_t t = 1; t <= 5; ++t) {
    EXPECT_EQ(done[t - 1].ticket, t);
    EXPECT_EQ(done[t - 1].result["other_thread"], true);
  }
  EXPECT_EQ(runner.pending(), 0u);
}

TEST_F(PurgeCommandTest, AFloodFromOneOriginDelaysOthersByOneJob) {
  // The first job holds the worker until released, so the queues fill while it runs.
  std::mutex mu;
  std::condition_variable cv;
  bool started = false;
  bool released = false;
  PurgeRunner runner([&](const std::atomic<bool>&, json*) {
    std::unique_lock<std::mutex> lock(mu);
    started = true;
    cv.notify_all();
    cv.wait(lock, [&] { return released; });
  });
  ASSERT_TRUE(runner.Submit({1, "flood", json::object()}));
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return started; }));
  }
  uint64_t ticket = 2;
  for (size_t i = 0; i < PurgeRunner::kMaxQueuedPerOrigin; ++i) {
    ASSERT_TRUE(runner.Submit({ticket++, "flood", json::object()}));
  }
  EXPECT_FALSE(runner.Submit({ticket++, "flood", json::object()}));  // its queue is full
  const uint64_t other = ticket++;
  const uint64_t own = ticket++;
  ASSERT_TRUE(runner.Submit({other, "other", json::object()}));  // another origin still fits
  ASSERT_TRUE(runner.Submit({own, "", json::object()}));         // and the operator's own
  {
    std::lock_guard<std::mutex> lock(mu);
    released = true;
  }
  cv.notify_all();
  std::vector<uint64_t> order;
  testing::WaitFor(
      [&] {
        for (PurgeJob& j : runner.TakeDone()) order.push_back(j.ticket);
        return order.size() >= PurgeRunner::kMaxQueuedPerOrigin + 3;
      },
      std::chrono::seconds(60), std::chrono::milliseconds(5));
  ASSERT_EQ(order.size(), PurgeRunner::kMaxQueuedPerOrigin + 3);
  // The running flood job, then the operator's, then one flood job and the other origin's.
  EXPECT_EQ(order[0], 1u);
  EXPECT_EQ(order[1], own);
  EXPECT_EQ(order[2], 2u);
  EXPECT_EQ(order[3], other);
  EXPECT_EQ(runner.pending(), 0u);
}

TEST_F(PurgeCommandTest, StoppingTheRunnerKillsARunningCommand) {
  const std::string hook = Script("s.sh", "echo up > \"$1\"; sleep 600\n");
  const std::string marker = dir_ + "/up";
  {
    PurgeRunner runner([&](const std::atomic<bool>& stop, json* result) {
      RunPurgeCommand({hook, marker}, "u", 600000, stop, result);
    });
    ASSERT_TRUE(runner.Submit({1, "", json::object()}));
    testing::WaitFor([&] { return std::filesystem::exists(marker); }, std::chrono::seconds(30),
                     std::chrono::milliseconds(5));
    ASSERT_TRUE(std::filesystem::exists(marker));
  }  // the destructor stops the worker: the command is killed, not waited for (600 s)
  SUCCEED();
}

}  // namespace
}  // namespace peerbloom::daemon
