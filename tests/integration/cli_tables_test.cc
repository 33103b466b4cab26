// `peerbloom stats`, `peers` and `top` against real daemons: the tables people read, and the
// --json answers scripts read, unchanged.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cluster_harness.h"
#include "tests/support/process.h"

namespace peerbloom::testing {
namespace {

// The CLI against `control`: out is its standard output only.
ProcessResult Cli(const std::string& control, const std::string& args) {
  return RunCli("--control " + control + " " + args);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

class CliTables : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = cluster_.AddNode("a");
    b_ = cluster_.AddNode("b");
    ASSERT_TRUE(a_->Start(options_, {})) << a_->log_tail();
    ASSERT_TRUE(b_->Start(options_, {a_})) << b_->log_tail();
    ASSERT_TRUE(WaitFor([&] { return SeesAlive(a_, "b") && SeesAlive(b_, "a"); }, kWaitDeadline));
    control_ = "ipc://" + cluster_.dir() + "/a/control.sock";
  }

  Cluster cluster_;
  NodeOptions options_;
  Node* a_ = nullptr;
  Node* b_ = nullptr;
  std::string control_;
};

TEST_F(CliTables, PeersIsATableAndJsonIsTheAnswer) {
  ProcessResult r = Cli(control_, "peers");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0].rfind("NODE  ENDPOINT", 0), 0u) << r.out;
  EXPECT_NE(lines[0].find("  STATE  VERSION  ITEMS  SUMMARY  K  SUMMARY AGE"), std::string::npos)
      << r.out;
  EXPECT_EQ(lines[1].rfind("b     " + b_->endpoint() + "  alive", 0), 0u) << r.out;
  // Every line is as wide as the header up to its last column (aligned, no trailing spaces).
  EXPECT_EQ(lines[1].find_last_not_of(' '), lines[1].size() - 1) << r.out;

  r = Cli(control_, "--json peers");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json peers = json::parse(r.out);
  ASSERT_EQ(peers.size(), 1u);
  EXPECT_EQ(peers[0]["node_id"], "b");
  EXPECT_TRUE(peers[0]["alive"].is_boolean());
  EXPECT_TRUE(peers[0]["summary_age_ms"].is_number_integer()) << "raw numbers, no units";
}

TEST_F(CliTables, StatsShowUnitsAndJsonStaysRaw) {
  ASSERT_TRUE(a_->Add({"http://x/1", "http://x/2", "http://x/3"}));
  ProcessResult r = Cli(control_, "stats");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // Top-level rows align to the longest key (metrics_endpoint, "-" when off).
  EXPECT_TRUE(std::regex_search(r.out, std::regex("(^|\n)node_id +a\n"))) << r.out;
  EXPECT_NE(r.out.find("\nfilter\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  items               3\n"), std::string::npos) << r.out;
  // 1e6 keys at 1 %, balanced, exact sizes: 59 x 2^15 four-bit counters.
  EXPECT_NE(r.out.find("\n  bytes               944 KiB\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  restored          no\n"), std::string::npos) << r.out;

  r = Cli(control_, "--json stats");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json stats = json::parse(r.out);
  EXPECT_EQ(stats["filter"]["items"], 3);
  EXPECT_EQ(stats["filter"]["bytes"], 966656);
  EXPECT_TRUE(stats["uptime_ms"].is_number_integer());
}

TEST_F(CliTables, TopShowsRatesOfWhatChanged) {
  // Frames follow each other on a pipe; three refreshes 200 ms apart.
  ProcessResult r = Cli(control_, "top --count 3 --interval 200");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  size_t frames = 0;
  for (size_t at = 0; (at = r.out.find("peerbloom top: a tcp://", at)) != std::string::npos; ++at) {
    ++frames;
  }
  EXPECT_EQ(frames, 3u) << r.out;
  EXPECT_EQ(r.out.find("\x1b["), std::string::npos) << "no terminal codes on a pipe";
  EXPECT_NE(r.out.find("PER SECOND\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nmembers alive  "), std::string::npos) << r.out;
  // top's own requests (stats and peers, twice per refresh) are control requests: a rate
  // above zero, whatever the machine's load.
  r = Cli(control_, "--json top --count 2 --interval 200");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  for (const std::string& line : lines) {
    const json frame = json::parse(line);
    EXPECT_EQ(frame["node_id"], "a");
    bool seen = false;
    for (const json& row : frame["rows"]) {
      if (row["name"] != "control/requests") continue;
      seen = true;
      EXPECT_GT(row["per_second"].get<double>(), 0) << line;
    }
    EXPECT_TRUE(seen) << line;
  }
}

}  // namespace
}  // namespace peerbloom::testing
