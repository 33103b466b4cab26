// The log level of a running daemon: set by the log-level control operation at once, and
// re-read from log_level on SIGHUP (which replaces what the operation set). The log line
// format is checked on what the daemon wrote.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>

#include "tests/support/cluster_harness.h"
#include "tests/support/process.h"

namespace peerbloom::testing {
namespace {

std::string Level(Node* node, const json& request, json* reply) {
  std::string body, error;
  if (!node->Call(request, "", reply, &body, &error)) return "error: " + error;
  return reply->value("level", std::string());
}

TEST(LogLevel, ControlOperationSetsItAndSighupRereadsTheConfig) {
  Cluster cluster;
  Node* a = cluster.AddNode("a");
  NodeOptions options;
  ASSERT_TRUE(a->Start(options, {})) << a->log_tail();
  json reply;
  // The harness's config says log_level = "debug".
  EXPECT_EQ(Level(a, {{"op", "log-level"}}, &reply), "debug");
  EXPECT_EQ(Level(a, {{"op", "log-level"}, {"level", "warn"}}, &reply), "warn");
  EXPECT_EQ(reply["previous"], "debug");
  EXPECT_EQ(Level(a, {{"op", "log-level"}}, &reply), "warn");

  ASSERT_TRUE(a->Reload(options, {}));
  EXPECT_TRUE(WaitFor(
      [&] {
        return Level(a, {{"op", "log-level"}}, &reply) == "debug";
      },
      kWaitDeadline))
      << a->log_tail();

  // Every line the daemon wrote is one set of key=value fields.
  std::ifstream in(cluster.dir() + "/a/stderr.log");
  const std::regex kLine(
      R"re(ts=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z level=(trace|debug|info|warning|error|critical) msg="([^"\\]|\\.)*")re");
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    EXPECT_TRUE(std::regex_match(line, kLine)) << line;
  }
  EXPECT_GT(lines, 0);
}

// `peerbloom log-level [LEVEL]`: stdout and exit status of the CLI against node a.
std::pair<int, std::string> Cli(const std::string& control, const std::string& args) {
  const ProcessResult r = RunCli("--control " + control + " " + args);
  return {r.exit_code, r.out};
}

TEST(LogLevel, TheCliPrintsAndSetsIt) {
  Cluster cluster;
  Node* a = cluster.AddNode("a");
  ASSERT_TRUE(a->Start(NodeOptions{}, {})) << a->log_tail();
  const std::string control = "ipc://" + cluster.dir() + "/a/control.sock";
  using Run = std::pair<int, std::string>;
  EXPECT_EQ(Cli(control, "log-level"), Run(0, "debug\n"));
  EXPECT_EQ(Cli(control, "log-level warn"), Run(0, "warn (was debug)\n"));
  EXPECT_EQ(Cli(control, "--json log-level"), Run(0, "{\"level\":\"warn\"}\n"));
  // A level the daemon does not know is refused, and the level stays.
  EXPECT_EQ(Cli(control, "log-level loud").first, 2);
  json reply;
  EXPECT_EQ(Level(a, {{"op", "log-level"}}, &reply), "warn");
}

}  // namespace
}  // namespace peerbloom::testing
