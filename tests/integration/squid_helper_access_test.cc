// Squid runs its external ACL helper as its own user (`proxy`), not as the daemon's: the
// helper reaches the daemon through the who-has socket, which `who_has_socket_group` gives to
// Squid's group, in a directory that group may search, as the package lays it out
// (/run/peerbloom mode 0711, /etc/peerbloom readable). Checked with the helper really running
// as `proxy`: it names the holder; without the group it is refused and says so, naming the
// user and the setting; a daemon whose socket the group cannot reach refuses to start and
// says why; a stopped daemon reads as "no such socket"; and what the helper answered, errors
// by cause included, reaches the daemon's stats and /metrics. Needs root and a `proxy` user
// (Debian has one), else skipped.
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/cluster_harness.h"
#include "tests/support/process.h"

namespace peerbloom::testing {
namespace {

// Runs `peerbloom --config CONFIG squid-helper` as user proxy on `input`; stdout, and stderr
// into *err.
std::string HelperAsProxy(const std::string& config, const std::string& input, std::string* err) {
  const ProcessResult r =
      RunShell("printf '%b' '" + input + "' | setpriv --reuid=proxy --regid=proxy --init-groups " +
               PEERBLOOM_CLI_BIN + " --config " + config + " squid-helper --wait-ms 500");
  *err = r.err;
  return r.out;
}

class SquidHelperAccess : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to run the helper as another user";
    if (::getpwnam("proxy") == nullptr) GTEST_SKIP() << "no 'proxy' user";
    // The package's layout: a runtime directory others may pass through but not list, and a
    // config directory they may read.
    root_ = cluster_.dir() + "/sys";
    run_ = root_ + "/run-peerbloom";
    etc_ = root_ + "/etc-peerbloom";
    std::filesystem::create_directories(run_);
    std::filesystem::create_directories(etc_);
    ::chmod(cluster_.dir().c_str(), 0711);  // the harness's temporary dir stands for '/'
    ::chmod(root_.c_str(), 0755);
    ::chmod(run_.c_str(), 0711);
    ::chmod(etc_.c_str(), 0755);
    a_ = cluster_.AddNode("A");
    b_ = cluster_.AddNode("B");
  }

  // B's who-has socket in the runtime dir, given to `group` ("" for none).
  NodeOptions Options(const std::string& group) const {
    NodeOptions o;
    o.extra = "who_has_socket = \"" + run_ + "/who-has.sock\"\n";
    if (!group.empty()) o.extra += "who_has_socket_group = \"" + group + "\"\n";
    return o;
  }

  // What the helper reads: B's node id, its socket and Squid's names for its peers.
  std::string HelperConfig() const {
    const std::string path = etc_ + "/peerbloomd.toml";
    std::ofstream(path) << "node_id = \"B\"\ndata_dir = \"" << cluster_.dir() << "/B\"\n"
                        << "who_has_socket = \"" << run_ << "/who-has.sock\"\n"
                        << "squid_peer_names = { A = \"cache-a\" }\n";
    ::chmod(path.c_str(), 0644);
    return path;
  }

  bool StartHolding() {
    if (!a_->Start({}, {})) return false;
    if (!b_->Start(Options("proxy"), {a_})) return false;
    if (!a_->Add({"http://held.example/1"})) return false;
    return WaitFor(
        [&] { return b_->WhoHas({"http://held.example/1"})[0] == std::vector<std::string>{"A"}; },
        kWaitDeadline);
  }

  Cluster cluster_;
  std::string root_, run_, etc_;
  Node* a_ = nullptr;
  Node* b_ = nullptr;
};

TEST_F(SquidHelperAccess, TheHelperRunsAsProxyThroughTheGroupsSocket) {
  ASSERT_TRUE(StartHolding()) << b_->log_tail();
  struct stat st {};
  ASSERT_EQ(::stat((run_ + "/who-has.sock").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  EXPECT_EQ(st.st_gid, ::getgrnam("proxy")->gr_gid);
  const std::string config = HelperConfig();
  std::string err;
  const std::string input = "1 http://held.example/%31 -\\n2 http://nobody.example/2 -\\n3 -\\n";
  EXPECT_EQ(HelperAsProxy(config, input, &err), "1 OK peer=cache-a\n2 ERR\n3 ERR\n") << err;
  EXPECT_EQ(err, "");
  // Its answers reach the daemon: at its end of input it reports them.
  json helper;
  ASSERT_TRUE(WaitFor(
      [&] {
        helper = b_->Stats()["routing"]["helper"];
        return helper.value("reports", 0) >= 1;
      },
      kWaitDeadline));
  EXPECT_EQ(helper["answered_peer"], 1);
  EXPECT_EQ(helper["answered_none"], 1);
  EXPECT_EQ(helper["answered_invalid"], 1);
  EXPECT_EQ(helper["errors"], 0);
  EXPECT_EQ(helper["helpers"], 1);
}

TEST_F(SquidHelperAccess, WithoutTheGroupTheHelperIsRefusedAndSaysWhy) {
  ASSERT_TRUE(a_->Start({}, {})) << a_->log_tail();
  ASSERT_TRUE(b_->Start(Options(""), {a_})) << b_->log_tail();
  std::string err;
  EXPECT_EQ(HelperAsProxy(HelperConfig(), "1 http://held.example/1 -\\n", &err), "1 ERR\n");
  EXPECT_EQ(err,
            "peerbloom: warning: answering ERR (no peer) for 1000 ms: cannot connect to "
            "who-has socket '" +
                run_ +
                "/who-has.sock': permission denied for user 'proxy' (the daemon gives the "
                "socket to a group with who_has_socket_group; this user must be in that "
                "group, and every directory above the socket searchable by it)\n");
}

TEST_F(SquidHelperAccess, ADaemonWhoseSocketTheGroupCannotReachRefusesToStart) {
  ::chmod(run_.c_str(), 0700);
  ASSERT_TRUE(a_->Start({}, {})) << a_->log_tail();
  EXPECT_FALSE(b_->Start(Options("proxy"), {a_}));
  EXPECT_NE(b_->log_tail().find("group 'proxy' cannot reach the who-has socket '" + run_ +
                                "/who-has.sock': directory '" + run_ +
                                "' (owner 'root', group 'root', mode '0700') is not searchable by "
                                "it; put the socket in a directory it may search"),
            std::string::npos)
      << b_->log_tail();
  ::chmod(run_.c_str(), 0711);
  EXPECT_FALSE(b_->Start(Options("no-such-group-xyz"), {a_}));
  EXPECT_NE(b_->log_tail().find("who_has_socket_group 'no-such-group-xyz' is not a group on this "
                                "system"),
            std::string::npos)
      << b_->log_tail();
}

TEST_F(SquidHelperAccess, ADaemonGoneReadsAsNoSuchSocketAndIsCountedWhenItIsBack) {
  ASSERT_TRUE(StartHolding()) << b_->log_tail();
  ASSERT_TRUE(b_->Stop());
  const std::string config = HelperConfig();
  std::string err;
  EXPECT_EQ(HelperAsProxy(config, "1 http://held.example/1 -\\n2 http://held.example/1 -\\n", &err),
            "1 ERR\n2 ERR\n");
  EXPECT_NE(err.find("': no such socket (is peerbloomd running, with this who_has_socket?)"),
            std::string::npos)
      << err;
  // A helper that lives on reports the outage once the daemon answers again: Squid keeps its
  // helpers running, so a FIFO stands for Squid's pipe here.
  const std::string fifo = root_ + "/squid-to-helper";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
  ::chmod(fifo.c_str(), 0666);
  const std::string out_file = root_ + "/helper-out.txt";
  const std::string command = "setpriv --reuid=proxy --regid=proxy --init-groups " +
                              std::string(PEERBLOOM_CLI_BIN) + " --config " + config +
                              " squid-helper --wait-ms 500 --retry-ms 0 <" + fifo + " >" +
                              out_file + " 2>/dev/null &";
  const ProcessResult started = RunShell(command);
  ASSERT_EQ(started.exit_code, 0) << started;
  {
    std::ofstream squid(fifo);
    squid << "1 http://held.example/1 -\n" << std::flush;
    ASSERT_TRUE(WaitFor(
        [&] {
          std::ifstream in(out_file);
          std::string line;
          return std::getline(in, line) && line == "1 ERR";
        },
        kWaitDeadline));
    ASSERT_TRUE(b_->Start(Options("proxy"), {a_})) << b_->log_tail();
    ASSERT_TRUE(WaitFor(
        [&] { return b_->WhoHas({"http://held.example/1"})[0] == std::vector<std::string>{"A"}; },
        kWaitDeadline));
    squid << "2 http://held.example/1 -\n" << std::flush;
    json helper;
    ASSERT_TRUE(WaitFor(
        [&] {
          helper = b_->Stats()["routing"]["helper"];
          return helper.value("reports", 0) >= 1;
        },
        kWaitDeadline));
    EXPECT_EQ(helper["errors_no_socket"], 1) << helper.dump();
    EXPECT_EQ(helper["errors"], 1) << helper.dump();
  }  // the helper reads its end of input and exits
  std::ifstream in(out_file);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(all, "1 ERR\n2 OK peer=cache-a\n");
}

}  // namespace
}  // namespace peerbloom::testing
