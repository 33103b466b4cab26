// `peerbloom squid-helper` against real daemons, fed as Squid feeds it: it names the peer
// whose summary claims a URL (by its cache_peer name from squid_peer_names), answers ERR for
// the rest, and answers ERR at once, never hanging, when the daemon is gone.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>

#include "tests/support/cluster_harness.h"
#include "tests/support/process.h"

namespace peerbloom::testing {
namespace {

// Runs the helper with `args` on `input`; its standard output.
std::string Helper(const std::string& args, const std::string& input) {
  return RunShell("printf '%b' '" + input + "' | " + PEERBLOOM_CLI_BIN + " " + args +
                  " squid-helper --wait-ms 200")
      .out;
}

// A command's standard output and error.
std::string Output(const std::string& command) { return RunShell(command, Merged()).out; }

TEST(SquidHelper, NamesTheHolderAndAnswersErrWhenTheDaemonIsGone) {
  Cluster cluster;
  Node* a = cluster.AddNode("A");
  Node* b = cluster.AddNode("B");
  ASSERT_TRUE(a->Start({}, {})) << a->log_tail();
  ASSERT_TRUE(b->Start({}, {a})) << b->log_tail();
  ASSERT_TRUE(a->Add({"http://held.example/1"}));
  ASSERT_TRUE(WaitFor(
      [&] { return b->WhoHas({"http://held.example/1"})[0] == std::vector<std::string>{"A"}; },
      kWaitDeadline))
      << b->log_tail();
  const std::string control = "ipc://" + cluster.dir() + "/B/control.sock";
  // Squid's lines: channel id, %-escaped URL, the ACL's arguments ("-"); or no channel id.
  const std::string input =
      "1 http://held.example/%31 -\\n2 http://nobody.example/2 -\\nhttp://held.example/1\\n";
  EXPECT_EQ(Helper("--control " + control, input), "1 OK peer=A\n2 ERR\nOK peer=A\n");

  const std::string config = cluster.dir() + "/helper.toml";
  std::ofstream(config) << "control = \"" << control << "\"\n"
                        << "squid_peer_names = { A = \"cache-a\" }\n";
  EXPECT_EQ(Helper("--config " + config, input), "1 OK peer=cache-a\n2 ERR\nOK peer=cache-a\n");

  // Outcomes reported by hand reach the routing counters beside A's summary.
  const std::string cli = std::string(PEERBLOOM_CLI_BIN) + " --control " + control + " ";
  EXPECT_EQ(Output(cli + "report hit http://held.example/1 A"),
            "A: routed 1, hits 1, false hits 0\n");
  EXPECT_EQ(Output(cli + "report miss http://held.example/2 A"),
            "A: routed 2, hits 1, false hits 1\n");
  EXPECT_EQ(Output(cli + "report maybe http://held.example/2 A"),
            "peerbloom: error: the outcome must be 'hit' or 'miss', got 'maybe'\n");
  const json peers = b->Peers();
  ASSERT_EQ(peers.size(), 1u);
  EXPECT_EQ(peers[0]["routing"]["false_hit_rate"], 0.5);
  EXPECT_EQ(b->Stats()["routing"]["false_hits"], 1);

  ASSERT_TRUE(b->Stop());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Helper("--config " + config, input), "1 ERR\n2 ERR\nERR\n");
  // The bound is --wait-ms (200 ms); 20 s only says "it did not hang" on a loaded machine.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

}  // namespace
}  // namespace peerbloom::testing
