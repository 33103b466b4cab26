// The cluster secret in its own file (`cluster_secret_file`), as the package installs it:
// the config holds no secret and may be readable by Squid's helper, the secret file is the
// daemon's group's alone. A node keyed from the file is one cluster with nodes keyed inline;
// a secret file others may read is refused with the reason, and so is a config that sets
// both; the offline tools read the file for their keying.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "tests/support/cluster_harness.h"
#include "tests/support/process.h"

namespace peerbloom::testing {
namespace {

// A command's standard output and error together.
std::string Output(const std::string& command) { return RunShell(command, Merged()).out; }

TEST(ClusterSecretFile, ANodeKeyedFromTheFileJoinsTheCluster) {
  Cluster cluster;
  Node* a = cluster.AddNode("A");
  Node* b = cluster.AddNode("B");
  const std::string secret = cluster.dir() + "/cluster.secret";
  std::ofstream(secret) << "integration-secret\n";
  ::chmod(secret.c_str(), 0640);
  NodeOptions ob;
  ob.cluster_secret_file = secret;
  ASSERT_TRUE(a->Start({}, {})) << a->log_tail();
  ASSERT_TRUE(b->Start(ob, {a})) << b->log_tail();
  ASSERT_TRUE(b->Add({"http://secret.example/1"}));
  // The same secret: the same cluster tag (frames are taken) and the same index key (the
  // positions A computes for the URL are the ones B set).
  EXPECT_TRUE(WaitFor(
      [&] { return a->WhoHas({"http://secret.example/1"})[0] == std::vector<std::string>{"B"}; },
      kWaitDeadline))
      << a->log_tail();
  // The offline tools key with it too: B's summary, saved, is queried with the secret read
  // from the file the config names. (A wrong secret would hash elsewhere: the held URL would
  // read "no" with probability 1 - FPR.)
  const std::string cli =
      std::string(PEERBLOOM_CLI_BIN) + " --config " + cluster.dir() + "/B/peerbloomd.toml ";
  const std::string saved = cluster.dir() + "/b.summary";
  const ProcessResult summary = RunShell(cli + "summary -o " + saved);
  ASSERT_EQ(summary.exit_code, 0) << summary;
  EXPECT_EQ(Output(cli + "query -s " + saved + " http://secret.example/1"),
            "http://secret.example/1: maybe\n");
}

TEST(ClusterSecretFile, ASecretOthersMayReadOrTwoSecretsAreRefused) {
  Cluster cluster;
  Node* a = cluster.AddNode("A");
  const std::string secret = cluster.dir() + "/cluster.secret";
  std::ofstream(secret) << "integration-secret\n";
  ::chmod(secret.c_str(), 0644);
  NodeOptions o;
  o.cluster_secret_file = secret;
  EXPECT_FALSE(a->Start(o, {}));
  EXPECT_NE(a->log_tail().find("cluster_secret_file '" + secret +
                               "' is accessible by others or writable by its group; chmod 600 it "
                               "(or 640 to share it with its group)"),
            std::string::npos)
      << a->log_tail();
  ::chmod(secret.c_str(), 0640);
  o.extra = "cluster_secret = \"inline\"\n";
  EXPECT_FALSE(a->Start(o, {}));
  EXPECT_NE(a->log_tail().find("set 'cluster_secret' or 'cluster_secret_file', not both"),
            std::string::npos)
      << a->log_tail();
}

}  // namespace
}  // namespace peerbloom::testing
