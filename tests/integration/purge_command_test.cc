// The purge command hook (`purge_command`) between real daemons: a cluster-wide purge runs a
// real script at the node whose filter holds the URL, with the URL as its last argument and
// no shell in between; and a slow hook runs off the event loop, so who-has answers while it
// runs. The scripts write their state files by rename, so a reader never sees half a file.
// Waits poll with kWaitDeadline; nothing is timed.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cluster_harness.h"
#include "tests/support/process.h"

namespace peerbloom::testing {
namespace {

// The file's contents, or "<none>" when it does not exist.
std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "<none>";
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteScript(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  ASSERT_EQ(::chmod(path.c_str(), 0755), 0);
}

// A TOML basic string of `s` (paths here hold no quotes or backslashes).
std::string Toml(const std::string& s) { return "\"" + s + "\""; }

// A URL a shell would mangle: spaces, quotes, $(...), a glob and a semicolon.
constexpr char kUrl[] = "http://example.com/a b;$(touch pwned)'q\"*?x=1&y=2";

// The purge reaches all three nodes of a triangle; at A, whose filter holds the URL, the hook
// gets the URL as one argument, byte for byte. B's filter is empty (no false positive is
// possible there): it skips. C has no hook and no URL either.
TEST(PurgeCommand, ClusterPurgeRunsTheHookWithTheUrlAsItsLastArgumentAfterDashDash) {
  Cluster cluster;
  Node* a = cluster.AddNode("A");
  Node* b = cluster.AddNode("B");
  Node* c = cluster.AddNode("C");
  const std::string hook = cluster.dir() + "/record.sh";
  WriteScript(hook,
              "#!/bin/sh\n"
              "out=\"$1\"; shift\n"
              "printf '%s\\n' \"$#\" \"$@\" > \"$out.tmp\" && mv \"$out.tmp\" \"$out\"\n");
  auto options = [&](const std::string& name, const std::string& links) {
    NodeOptions o;
    o.extra = "relay_links = [" + links + "]\n";
    if (name != "C") {
      o.extra += "purge_command = [" + Toml(hook) + ", " +
                 Toml(cluster.dir() + "/" + name + ".args") + "]\n";
    }
    return o;
  };
  ASSERT_TRUE(a->Start(options("A", "\"B\", \"C\""), {})) << a->log_tail();
  ASSERT_TRUE(b->Start(options("B", "\"A\", \"C\""), {a})) << b->log_tail();
  ASSERT_TRUE(c->Start(options("C", "\"A\", \"B\""), {a})) << c->log_tail();
  ASSERT_TRUE(a->Add({kUrl}));
  ASSERT_TRUE(WaitFor(
      [&] {
        for (Node* n : {a, b, c}) {
          if (n->Stats()["relay"]["links_up"] != 2) return false;
        }
        return SeesAlive(c, "A") && SeesAlive(c, "B");
      },
      kWaitDeadline));

  const ProcessResult r =
      RunCli("--json --timeout 60000 --control ipc://" + cluster.dir() +
                 "/C/control.sock purge --cluster --wait 60000 '" +
                 std::string(kUrl).replace(std::string(kUrl).find('\''), 1, "'\\''") + "'",
             Merged());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::map<std::string, json> results;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    const json j = json::parse(line);
    results[j["node"]] = j;
  }
  ASSERT_EQ(results.size(), 3u) << r.out;
  EXPECT_EQ(results["A"]["url"], kUrl) << r.out;
  EXPECT_EQ(results["A"]["action"], "command") << r.out;
  EXPECT_EQ(results["A"]["exit_status"], 0) << r.out;
  EXPECT_EQ(results["A"]["timed_out"], false) << r.out;
  EXPECT_EQ(results["A"]["purged"], true) << r.out;
  EXPECT_EQ(results["B"]["action"], "skipped") << r.out;
  EXPECT_EQ(results["C"]["action"], "skipped") << r.out;
  // The result is broadcast after the hook ended, so its file is complete by now.
  EXPECT_EQ(ReadFile(cluster.dir() + "/A.args"), "2\n--\n" + std::string(kUrl) + "\n");
  EXPECT_EQ(ReadFile(cluster.dir() + "/B.args"), "<none>");
  EXPECT_EQ(ReadFile(cluster.dir() + "/pwned"), "<none>");
  EXPECT_EQ(a->Stats()["relay"]["purge_actions_pending"], 0);
}

// A hook that takes 5 s: who-has is answered while it runs. The hook's state file says
// "started" before and "finished" after its sleep; a state still "started" when read after an
// answer means the answer came before the hook finished, whatever the machine's load (5 s
// rather than 3 leaves room for a loaded machine's stalls between answer and read). The purge
// is a local one (no --cluster): the control reply names a job, polled until done.
TEST(PurgeCommand, WhoHasAnswersWhileASlowHookRuns) {
  Cluster cluster;
  Node* a = cluster.AddNode("A");
  const std::string hook = cluster.dir() + "/slow.sh";
  const std::string state = cluster.dir() + "/state";
  WriteScript(hook,
              "#!/bin/sh\n"
              "echo started > \"$1.tmp\" && mv \"$1.tmp\" \"$1\"\n"
              "sleep 5\n"
              "echo finished > \"$1.tmp\" && mv \"$1.tmp\" \"$1\"\n");
  NodeOptions o;
  o.extra = "purge_command = [" + Toml(hook) + ", " + Toml(state) + "]\n";
  ASSERT_TRUE(a->Start(o, {})) << a->log_tail();
  const std::string url = "http://example.com/slow";
  ASSERT_TRUE(a->Add({url}));

  json reply;
  std::string body;
  ASSERT_TRUE(a->Call({{"op", "purge"}, {"url", url}}, "", &reply, &body));
  ASSERT_TRUE(reply.contains("job")) << reply.dump();
  const json job = reply["job"];
  ASSERT_TRUE(WaitFor([&] { return ReadFile(state) == "started\n"; }, kWaitDeadline))
      << ReadFile(state);

  const std::vector<std::vector<std::string>> owners = a->WhoHas({url});
  const std::string state_after_answer = ReadFile(state);
  ASSERT_EQ(owners.size(), 1u);
  EXPECT_EQ(owners[0], (std::vector<std::string>{"A"}));
  EXPECT_EQ(state_after_answer, "started\n") << "who-has waited for the hook";
  ASSERT_TRUE(a->Call({{"op", "purge"}, {"job", job}}, "", &reply, &body));
  const json pending = a->Stats()["relay"]["purge_actions_pending"];
  if (ReadFile(state) == "started\n") {  // the hook had not finished when both were answered
    EXPECT_EQ(reply["done"], false) << reply.dump();
    EXPECT_EQ(pending, 1);
  }

  ASSERT_TRUE(WaitFor(
      [&] {
        return a->Call({{"op", "purge"}, {"job", job}}, "", &reply, &body) &&
               reply.value("done", false);
      },
      kWaitDeadline))
      << reply.dump();
  EXPECT_EQ(ReadFile(state), "finished\n");
  EXPECT_EQ(reply["result"]["action"], "command") << reply.dump();
  EXPECT_EQ(reply["result"]["exit_status"], 0) << reply.dump();
  EXPECT_EQ(reply["result"]["purged"], true) << reply.dump();
  // A result is handed out once.
  std::string error;
  EXPECT_FALSE(a->Call({{"op", "purge"}, {"job", job}}, "", &reply, &body, &error));
  EXPECT_EQ(error, "no purge job '" + job.dump() + "'");
}

// The CLI without --cluster waits for the job and prints what the hook did; a hook past
// purge_command_timeout is killed and reported.
TEST(PurgeCommand, LocalPurgeReportsExitStatusAndTimeout) {
  Cluster cluster;
  Node* a = cluster.AddNode("A");
  const std::string hook = cluster.dir() + "/exit3.sh";
  WriteScript(hook, "#!/bin/sh\nexit 3\n");
  const std::string stuck = cluster.dir() + "/stuck.sh";
  WriteScript(stuck, "#!/bin/sh\nexec sleep 600\n");
  NodeOptions o;
  o.extra = "purge_command = [" + Toml(hook) + "]\n";
  ASSERT_TRUE(a->Start(o, {})) << a->log_tail();
  ASSERT_TRUE(a->Add({"http://example.com/x"}));
  const std::string at_a = "--timeout 60000 --control ipc://" + cluster.dir() + "/A/control.sock ";
  ProcessResult r = RunCli(at_a + "purge --wait 60000 http://example.com/x", Merged());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "A: not purged (purge command exited with status 3)\n");

  ASSERT_TRUE(a->Stop());
  o.extra = "purge_command = [" + Toml(stuck) + "]\npurge_command_timeout = \"200ms\"\n";
  ASSERT_TRUE(a->Start(o, {})) << a->log_tail();
  ASSERT_TRUE(a->Add({"http://example.com/x"}));
  r = RunCli(at_a + "purge --wait 60000 http://example.com/x", Merged());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "A: purge failed: killed after '200' ms\n");
  r = RunCli(at_a + "--json purge --wait 60000 http://example.com/x", Merged());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["timed_out"], true) << r.out;
  EXPECT_EQ(j["signal"], 9) << r.out;
  EXPECT_EQ(j["purged"], false) << r.out;
}

}  // namespace
}  // namespace peerbloom::testing
