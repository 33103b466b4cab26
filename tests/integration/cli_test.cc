// The peerbloom binary as users run it: output, exit codes and messages.
#include <gtest/gtest.h>

#include <fstream>

#include "peerbloom/key_scheme.h"
#include "peerbloom/params.h"
#include "tests/support/cluster_harness.h"
#include "tests/support/process.h"

namespace peerbloom::testing {
namespace {

// The CLI as a user at a terminal sees it: standard output and error together.
ProcessResult Cli(const std::string& args, const std::string& input = "") {
  return RunCli(args, Merged(input));
}

TEST(Cli, CalcForwardAndReverse) {
  ProcessResult r = Cli("calc --items 1000000 --fpr 0.01");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("m = 9585059 bits (1198133 bytes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("k = 7\n"), std::string::npos) << r.out;
  // Both size steps a node may use, each the smallest meeting 0.98 x the target.
  EXPECT_NE(r.out.find("power-of-two size (filter_sizes = \"power-of-two\"): 2^24 = 16777216 bits"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("exact size (filter_sizes = \"exact\", the default): 37 x 2^18 = 9699328 bits"),
            std::string::npos)
      << r.out;
  r = Cli("--json calc --items 1000000 --fpr 0.01");
  ASSERT_EQ(r.exit_code, 0);
  const json sizes = json::parse(r.out);
  EXPECT_EQ(sizes["exact_bits"], 9699328.0);
  EXPECT_LE(sizes["exact_fpr"].get<double>(), 0.0098);
  EXPECT_GT(FalsePositiveRate(9699328.0 - 262144.0, 1e6, 7), 0.0098);  // 35 x 2^18 misses it
  r = Cli("--json calc --bits 9585059 --fpr 0.01");
  EXPECT_EQ(r.exit_code, 0);
  const json j = json::parse(r.out);
  EXPECT_EQ(j["k"], 7);
  EXPECT_NEAR(j["capacity"].get<double>(), 1e6, 1e6 * 0.001);
  r = Cli("calc --items 10");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "peerbloom: error: give exactly two of --items, --fpr and --bits\n");
}

TEST(Cli, UnknownCommandSuggestsTheClosest) {
  ProcessResult r = Cli("whohas http://x/");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "peerbloom: error: unknown command 'whohas', did you mean 'who-has'?\n");
  r = Cli("--json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "peerbloom: error: no command given (see 'peerbloom --help')\n");
  r = Cli("frobnicate");
  EXPECT_EQ(r.out, "peerbloom: error: unknown command 'frobnicate' (see 'peerbloom --help')\n");
}

TEST(Cli, EveryCommandHasHelp) {
  for (const char* cmd : {"who-has", "add", "remove", "stats", "peers", "top", "summary", "calc",
                          "build", "query", "dedup", "inspect", "keygen", "bench", "squid-helper",
                          "report", "squid-outcomes", "log-level"}) {
    ProcessResult r = Cli(std::string(cmd) + " --help");
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_NE(r.out.find("Usage:"), std::string::npos) << cmd;
  }
}

TEST(Cli, MissingDaemonIsAnErrorNotAHang) {
  ProcessResult r = Cli("--control ipc:///nonexistent/control.sock who-has http://x/");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out,
            "peerbloom: error: control socket '/nonexistent/control.sock' does not exist (is "
            "peerbloomd running? see --control, --config)\n");
}

// The allow-list line of a key file is what keygen printed when it wrote the file.
TEST(Cli, KeygenPrintsTheAuthorizedLineOfAnExistingKey) {
  Cluster scratch;  // only for its temporary directory
  const std::string key = scratch.dir() + "/node.key";
  ProcessResult r = Cli("keygen -o " + key);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const size_t at = r.out.find("authorized_keys line: ");
  ASSERT_NE(at, std::string::npos) << r.out;
  std::string line = r.out.substr(at + 22, r.out.find('\n', at) - at - 22);
  line.replace(line.find("NODE-ID"), 7, "cache-01");
  r = Cli("keygen --authorized-line " + key + " cache-01");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, line + "\n");
  r = Cli("--json keygen --authorized-line " + key + " cache-01");
  EXPECT_EQ(json::parse(r.out)["authorized_keys_line"], line);
  r = Cli("keygen --authorized-line " + key + " squid:x");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out,
            "peerbloom: error: node id 'squid:x' is not 1-64 characters of [A-Za-z0-9._:-] "
            "outside 'squid:'\n");
}

TEST(Cli, BuildQueryInspectAndDedupOffline) {
  Cluster scratch;  // only for its temporary directory
  const std::string dir = scratch.dir();
  {
    std::ofstream urls(dir + "/urls.txt");
    for (int i = 0; i < 5000; ++i) urls << "http://e.example/" << i << "\n";
  }
  ProcessResult r = Cli("build -i " + dir + "/urls.txt -o " + dir + "/s.summary --secret k");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = Cli("query -s " + dir + "/s.summary --secret k http://e.example/7");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "http://e.example/7: maybe\n");
  // Every built key answers "maybe": no false negatives.
  r = Cli("query -s " + dir + "/s.summary --secret k - < " + dir + "/urls.txt | grep -c ': no'");
  EXPECT_EQ(r.out, "0\n");
  r = Cli("--json inspect " + dir + "/s.summary");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(json::parse(r.out)["estimated_items"], 5000);
  // dedup keys its filter at random per run, so a false positive (a unique line dropped) is
  // a chance event: 2^19 bits and k = 10 (--fpr 0.001 at 20000 lines) after i lines give
  // (1 - e^(-10 i / 2^19))^10, summed over i < 5000 about 2e-8 per run.
  r = Cli("dedup -n 20000 -i " + dir + "/urls.txt | wc -l");
  EXPECT_EQ(r.out, "5000\n");
  r = Cli("dedup -n 20000", "a\nb\na\nc\nb\n");
  EXPECT_EQ(r.out, "a\nb\nc\n");
}

TEST(Cli, WhoHasExitCodesAgainstADaemon) {
  Cluster cluster;
  Node* node = cluster.AddNode("solo");
  ASSERT_TRUE(node->Start(NodeOptions(), {}));
  // A generous timeout: the daemon may be slow to answer on a loaded machine.
  const std::string control =
      "--timeout 60000 --control ipc://" + cluster.dir() + "/solo/control.sock ";
  ProcessResult r = Cli(control + "add http://x/held");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "added 1\n");
  r = Cli(control + "who-has http://x/held");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("http://x/held: solo (local, tcp://127.0.0.1:", 0), 0u) << r.out;
  // The node holds one key and no peer, so "no node" for another is near exact: its counting
  // filter (capacity 100000 at 1 %: 2^21 counters, k = 2) lists an absent key with
  // probability at most (2 / 2^21)^2, about 1e-12, and the fixed cluster secret gives the
  // same answer on every run.
  r = Cli(control + "who-has http://x/absent");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "http://x/absent: no node\n");
  r = Cli(control + "who-has -", "http://x/absent\nhttp://x/held\n");
  EXPECT_EQ(r.exit_code, 0);
  r = Cli(control + "remove http://x/never-added");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "removed 0\npeerbloom: warning: 1 not in the filter, not removed\n");
}

// Under squid-md5, add, who-has and remove key a URL by Squid's canonical form of it: the
// spellings below are one object to Squid, so they are one key here.
TEST(Cli, SquidMd5UrlsAreCanonicalizedByTheDaemon) {
  Cluster cluster;
  Node* node = cluster.AddNode("solo");
  NodeOptions options;
  options.key_scheme = "squid-md5";
  ASSERT_TRUE(node->Start(options, {}));
  const std::string control = "--control ipc://" + cluster.dir() + "/solo/control.sock ";
  ProcessResult r = Cli(control + "add HTTP://Alpha.LAB:80/t/x");
  ASSERT_EQ(r.out, "added 1\n");
  r = Cli(control + "who-has http://alpha.lab/t/x");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("http://alpha.lab/t/x: solo (local, ", 0), 0u) << r.out;
  r = Cli(control + "remove http://user@alpha.lab.:0080/t/x");
  EXPECT_EQ(r.out, "removed 1\n");
  // The filter held that one key and is empty again: exact, not a Bloom guess.
  r = Cli(control + "who-has http://alpha.lab/t/x");
  EXPECT_EQ(r.exit_code, 1) << r.out;
}

// Under squid-md5 a who-has URL must be absolute: Squid keys nothing else, so one without a
// scheme used to be answered "no node" (exit 1), hiding the mistake. Now it is an error that
// names it. Keys (--key), the raw scheme and the Squid helper's batches are unaffected.
TEST(Cli, WhoHasRefusesWhatIsNotAUrlUnderSquidMd5) {
  Cluster cluster;
  Node* a = cluster.AddNode("a");
  Node* b = cluster.AddNode("b");
  Node* r = cluster.AddNode("r");
  NodeOptions squid;
  squid.key_scheme = "squid-md5";
  ASSERT_TRUE(a->Start(squid, {})) << a->log_tail();
  ASSERT_TRUE(b->Start(squid, {a})) << b->log_tail();
  ASSERT_TRUE(r->Start(NodeOptions(), {})) << r->log_tail();  // raw, alone
  const std::string held = "http://held.example/1";
  ASSERT_TRUE(a->Add({held}));
  ASSERT_TRUE(
      WaitFor([&] { return b->WhoHas({held})[0] == std::vector<std::string>{"a"}; }, kWaitDeadline))
      << b->log_tail();
  const std::string at_b = "--timeout 60000 --control ipc://" + cluster.dir() + "/b/control.sock ";
  const std::string not_a_url =
      "peerbloom: error: '127.0.0.40/x' is not a url (expected scheme://host/path)\n";

  ProcessResult out = Cli(at_b + "who-has 127.0.0.40/x");
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(out.out, not_a_url);
  // Beside URLs: their answers, then the error; exit 2 whatever they claim.
  const std::string answer = held + ": a (tcp://127.0.0.1:";
  out = Cli(at_b + "who-has " + held + " 127.0.0.40/x");
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(out.out.rfind(answer, 0), 0u) << out.out;
  EXPECT_EQ(out.out.substr(out.out.find('\n') + 1), not_a_url) << out.out;
  out = Cli(at_b + "who-has -", "127.0.0.40/x\n" + held + "\n");
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(out.out.rfind(answer, 0), 0u) << out.out;
  EXPECT_EQ(out.out.substr(out.out.find('\n') + 1), not_a_url) << out.out;
  out = Cli(at_b + "--json who-has 127.0.0.40/x");
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(out.out,
            "{\"claimed\":false,\"error\":\"not a url\",\"key\":\"127.0.0.40/x\",\"nodes\":[]}\n" +
                not_a_url);

  // A store key is a key, not a URL; a bad one is answered as before.
  const std::string key = SquidKeyHex(KeyEncoder(KeyScheme::kSquidMd5).SquidStoreKey(held));
  out = Cli(at_b + "who-has --key " + key);
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(out.out.rfind(key + ": a (tcp://127.0.0.1:", 0), 0u) << out.out;
  out = Cli(at_b + "who-has --key 127.0.0.40/x");
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_EQ(out.out, "127.0.0.40/x: invalid key\n");
  // Under raw any line is a key. r holds nothing and knows no peer: "no node" is exact.
  out = Cli("--timeout 60000 --control ipc://" + cluster.dir() + "/r/control.sock who-has " +
            "127.0.0.40/x");
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_EQ(out.out, "127.0.0.40/x: no node\n");

  // The Squid helper answers ERR for it, and the rest of the batch as usual.
  out = Cli(at_b + "squid-helper --wait-ms 60000",
            "1 " + held + " -\n2 127.0.0.40/x -\n3 " + held + " -\n");
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(out.out, "1 OK peer=a\n2 ERR\n3 OK peer=a\n");
}

// The daemon answers `rebuild` with the feed it rebuilds; the text output says so in words
// (it used to walk that answer as if it were an object and fail after the rebuild started).
TEST(Cli, RebuildSaysWhichFeedItRebuilds) {
  Cluster cluster;
  Node* node = cluster.AddNode("solo");
  NodeOptions options;
  options.key_scheme = "squid-md5";
  const std::string store_log = cluster.dir() + "/store.log";
  options.extra = "[[feeds]]\npath = \"" + store_log + "\"\nformat = \"squid-store-log\"\n";
  ASSERT_TRUE(node->Start(options, {})) << node->log_tail();
  // The recorded cache_dir holds three objects (tests/data/squid/README.md).
  const std::string cache_dir = std::string(PEERBLOOM_SOURCE_DIR) + "/tests/data/squid/cache_dir";
  const std::string config = "--timeout 60000 --config " + cluster.dir() + "/solo/peerbloomd.toml ";
  ProcessResult r = Cli(config + "rebuild " + cache_dir);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "rebuilding the live set of feed '" + store_log +
                       "' from the cache_dirs ('peerbloom stats' shows the feed's rebuild "
                       "counters)\n");
  ASSERT_TRUE(
      WaitFor([&] { return node->Stats()["feeds"][0]["rebuild"]["finished"] == 1; }, kWaitDeadline))
      << node->Stats()["feeds"][0].dump();
  EXPECT_EQ(node->Stats()["feeds"][0]["store_log"]["live_keys"], 3);

  r = Cli(config + "--json rebuild " + cache_dir);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(json::parse(r.out), json(store_log)) << r.out;
  r = Cli(config + "rebuild --feed /nowhere/store.log");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "peerbloom: error: no squid-store-log feed '/nowhere/store.log'\n");
}

TEST(Cli, OfflineToolsCanonicalizeWithTheConfigsSquidSettings) {
  Cluster scratch;  // only for its temporary directory
  const std::string dir = scratch.dir();
  std::ofstream(dir + "/node.toml") << "node_id = \"a\"\nlisten = \"tcp://127.0.0.1:0\"\n"
                                       "data_dir = \""
                                    << dir << "/data\"\ncluster_secret = \"k\"\n"
                                    << "squid_append_domain = \".example\"\n";
  std::ofstream(dir + "/urls.txt") << "HTTP://E:80/1\nhttp://e.example/2\n";
  const std::string config = "--config " + dir + "/node.toml ";
  ProcessResult r = Cli(config + "build -i " + dir + "/urls.txt -o " + dir + "/s.summary");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = Cli(config + "query -s " + dir + "/s.summary http://e.example/1 http://E/2");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "http://e.example/1: maybe\nhttp://E/2: maybe\n");
}

}  // namespace
}  // namespace peerbloom::testing

namespace peerbloom::testing {
namespace {

TEST(Peerbloomd, CheckConfigReportsValidOrTheFirstError) {
  Cluster scratch;
  const std::string path = scratch.dir() + "/check.toml";
  std::ofstream(path) << "node_id = \"a\"\nlisten = \"tcp://127.0.0.1:0\"\ndata_dir = \""
                      << scratch.dir() << "/d\"\ncurve = false\n";
  const std::vector<std::string> check = {PEERBLOOMD_BIN, "--check-config", "-c", path};
  ProcessResult r = RunProgram(check, Merged());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "config '" + path + "' is valid\n");

  std::ofstream(path, std::ios::app) << "bogus = 1\n";
  r = RunProgram(check, Merged());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "peerbloomd: fatal: " + path + ":5: unknown key 'bogus'\n");
}

}  // namespace
}  // namespace peerbloom::testing
