// Three real nginx caches (Debian's nginx, configs/nginx/peerbloom-nginx.conf.in through
// scripts/nginx-testbed.sh) beside three peerbloomd, and an nginx origin, on 127.7.T.x (T: one
// block of addresses per test, as ctest runs tests side by side). Each
// daemon runs as the package runs it beside nginx (docs/nginx.md): not root, not in group
// www-data's cache, reading nginx's 0700 cache directory through CAP_DAC_READ_SEARCH (and
// deleting for purges through CAP_DAC_OVERRIDE), its route socket given to www-data.
//
// Checked: the live set equals the cache files (count and XOR of names against the directory)
// through adds, `inactive` evictions, `max_size` evictions and an nginx restart; a URL cached
// at one node is served to another node's client from that node's sibling (the origin not
// asked again) and is then cached there; a false hit (the holder's copy went stale) falls back
// to the origin and is then cached locally; a node whose daemon is down still serves from the
// origin; a cluster-wide purge deletes the URL's files where they are. Needs root, nginx and
// setpriv; skipped otherwise.
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cluster_harness.h"
#include "tests/support/process.h"
#include "tests/support/wait.h"

namespace peerbloom::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

const std::string kTestbed = std::string(PEERBLOOM_SOURCE_DIR) + "/scripts/nginx-testbed.sh";
const std::vector<std::string> kNames = {"a", "b", "c"};

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

class NginxCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to run nginx and the daemon as other users";
    if (::access("/usr/sbin/nginx", X_OK) != 0) GTEST_SKIP() << "nginx is not installed";
    if (::getpwnam("www-data") == nullptr || ::getpwnam("nobody") == nullptr) {
      GTEST_SKIP() << "no www-data or nobody user";
    }
    if (!RunShell("command -v setpriv").exit_code == 0) GTEST_SKIP() << "no setpriv";
    // nginx's workers (www-data) pass through the work directory; the daemons (nobody) own
    // their node directories below the harness's.
    char tmpl[] = "/tmp/pb-nginx-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    work_ = tmpl;
    ::chmod(work_.c_str(), 0711);
    run_ = work_ + "/run";  // the package's /run/peerbloom: others may pass, not list
    fs::create_directories(run_);
    ::chmod(run_.c_str(), 0711);
    ::chown(run_.c_str(), Uid("nobody"), Gid("nogroup"));
    ::chmod(cluster_.dir().c_str(), 0711);
    // The test's own addresses: ctest runs the tests of this suite side by side.
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    const std::vector<std::string> tests = {"TheLiveSet", "AMissIs", "AFalseHit", "ANodeWhose",
                                            "AClusterPurge"};
    int block = static_cast<int>(tests.size()) + 1;
    for (size_t i = 0; i < tests.size(); ++i) {
      if (test.rfind(tests[i], 0) == 0) block = static_cast<int>(i) + 1;
    }
    net_ = "127.7." + std::to_string(block) + ".";
    origin_host_ = net_ + "100";
    origin_ = origin_host_ + ":8090";
    ASSERT_TRUE(Bed("start-origin " + work_ + " " + origin_host_ + " 8090").exit_code == 0)
        << last_;
    for (const std::string& n : kNames) nodes_[n] = cluster_.AddNode(n);
  }

  void TearDown() override {
    if (work_.empty()) return;
    for (const std::string& n : kNames) (void)Bed("stop " + work_ + " " + n);
    (void)Bed("stop " + work_ + " origin");
    for (auto& [name, node] : nodes_) node->Stop();
    if (!HasFailure()) fs::remove_all(work_);
  }

  std::string Addr(const std::string& name) const {
    return net_ + std::to_string(name[0] - 'a' + 1);
  }

  static uid_t Uid(const char* user) { return ::getpwnam(user)->pw_uid; }
  static gid_t Gid(const char* group) { return ::getgrnam(group)->gr_gid; }

  ProcessResult Bed(const std::string& args) {
    ProcessResult r = RunShell("bash " + kTestbed + " " + args);
    last_ = r.out + r.err;
    return r;
  }

  std::string CacheDir(const std::string& n) const { return work_ + "/" + n + "/cache"; }
  std::string RouteSocket(const std::string& n) const { return run_ + "/route-" + n + ".sock"; }

  NodeOptions Options(const std::string& n) const {
    NodeOptions o;
    o.key_scheme = "nginx-md5";
    o.capacity = 10000;
    std::ostringstream x;
    x << "nginx_cache_key = \"$scheme$host$request_uri\"\n"
      << "nginx_route_socket = \"" << RouteSocket(n) << "\"\n"
      << "nginx_route_socket_group = \"www-data\"\n"
      << "purge_nginx = true\n"
      << "relay_links = [";
    bool first = true;
    for (const std::string& other : kNames) {
      if (other == n) continue;
      x << (first ? "" : ", ") << "\"" << other << "\"";
      first = false;
    }
    x << "]\nnginx_siblings = { ";
    first = true;
    for (const std::string& other : kNames) {
      x << (first ? "" : ", ") << other << " = \"" << Addr(other) << ":8081\"";
      first = false;
    }
    x << " }\n[[feeds]]\npath = \"" << CacheDir(n) << "\"\nformat = \"nginx-cache\"\n"
      << "levels = \"1:2\"\n";
    o.extra = x.str();
    // As the package's drop-in for nginx runs it (docs/nginx.md): another user, group
    // www-data for the route socket, read (and, for purges, delete) through capabilities.
    o.exec_prefix = {"/usr/bin/setpriv",
                     "--pdeathsig=SIGKILL",  // setpriv's change of user clears the harness's
                     "--reuid=nobody",
                     "--regid=nogroup",
                     "--groups=www-data",
                     "--inh-caps=+dac_read_search,+dac_override",
                     "--ambient-caps=+dac_read_search,+dac_override"};
    return o;
  }

  // Starts node `n`'s nginx (the cache directory made by nginx) and its daemon.
  void StartNode(const std::string& n, const std::string& max_size = "64m",
                 const std::string& inactive = "1h") {
    ASSERT_TRUE(Bed("start " + work_ + " " + n + " " + Addr(n) + " " + origin_ + " " +
                    RouteSocket(n) + " " + max_size + " " + inactive)
                    .exit_code == 0)
        << last_;
    StartDaemon(n);
  }
  void StartDaemon(const std::string& n) {
    // The daemon's own: its data directory and its key (the cluster's allow-list stays
    // root's, readable).
    const std::string dir = cluster_.dir() + "/" + n;
    const ProcessResult own = RunShell(
        "mkdir -p " + dir + " && chown -R nobody:nogroup " + dir + " " + cluster_.dir() + "/" + n +
        ".key && chmod 0700 " + dir + " && chmod a+r " + cluster_.dir() + "/authorized_keys");
    ASSERT_EQ(own.exit_code, 0) << own.out << own.err;
    std::vector<Node*> seeds;
    for (const std::string& other : kNames) {
      if (other != n && nodes_[other]->running()) seeds.push_back(nodes_[other]);
    }
    ASSERT_TRUE(nodes_[n]->Start(Options(n), seeds)) << nodes_[n]->log_tail();
  }

  // "STATUS CACHE SOURCE" of a GET of `path` through node n's front.
  std::string Fetch(const std::string& n, const std::string& path) {
    const ProcessResult r = Bed("fetch " + work_ + " " + n + " " + path);
    EXPECT_TRUE(r.exit_code == 0) << last_;
    return Trim(r.out);
  }
  int OriginFetches(const std::string& path) {
    return std::stoi(Trim(Bed("origin-fetches " + work_ + " " + path).out));
  }
  // "STATUS CACHE" only: a hit's X-Peerbloom-Source is the one stored with the response.
  std::string FetchStatus(const std::string& n, const std::string& path) {
    const std::string line = Fetch(n, path);
    return line.substr(0, line.rfind(' '));
  }
  std::string Url(const std::string& path) const { return "http://" + origin_ + path; }

  // The files in n's cache directory as `scripts/nginx-cache-xor` counts them.
  std::string DiskSet(const std::string& n) {
    return Trim(
        RunShell(std::string(PEERBLOOM_SOURCE_DIR) + "/scripts/nginx-cache-xor " + CacheDir(n))
            .out);
  }
  std::string DaemonSet(const std::string& n) {
    const json stats = nodes_[n]->Stats();
    if (!stats.contains("nginx_feeds") || stats["nginx_feeds"].empty()) return "?";
    const json& f = stats["nginx_feeds"][0];
    return std::to_string(f["files"].get<uint64_t>()) + " " + f["names_xor"].get<std::string>();
  }
  // The daemon's live set equals the files present, within the deadline (events are applied
  // as the daemon's loop turns).
  bool LiveSetMatches(const std::string& n) {
    return WaitFor([&] { return DaemonSet(n) == DiskSet(n); }, seconds(15), milliseconds(100));
  }
  size_t Files(const std::string& n) { return std::stoul(DiskSet(n)); }

  // Whether `asker`'s who-has for the URL lists `holder`.
  bool Lists(const std::string& asker, const std::string& url, const std::string& holder) {
    const std::vector<std::vector<std::string>> answers = nodes_[asker]->WhoHas({url});
    if (answers.size() != 1) return false;
    for (const std::string& id : answers[0]) {
      if (id == holder) return true;
    }
    return false;
  }

  Cluster cluster_;
  std::map<std::string, Node*> nodes_;
  std::string work_, run_, last_;
  std::string net_, origin_host_, origin_;  // this test's addresses
};

TEST_F(NginxCluster, TheLiveSetIsTheCacheFilesThroughAddsEvictionsAndRestarts) {
  StartNode("a");
  // b evicts by size (64 KiB blobs in a 1 MiB cache), c by inactivity (3 s).
  StartNode("b", "1m", "1h");
  StartNode("c", "64m", "3s");
  for (const std::string& n : kNames) ASSERT_TRUE(LiveSetMatches(n)) << n << ": " << DiskSet(n);

  for (int i = 1; i <= 40; ++i)
    EXPECT_EQ(Fetch("a", "/page/" + std::to_string(i)), "200 MISS origin");
  ASSERT_TRUE(LiveSetMatches("a")) << DiskSet("a") << " vs " << DaemonSet("a");
  EXPECT_EQ(Files("a"), 40u);

  // max_size: nginx's cache manager deletes the least recently used files past 1 MiB.
  for (int i = 1; i <= 40; ++i) Fetch("b", "/blob/" + std::to_string(i));
  ASSERT_TRUE(WaitFor([&] { return Files("b") < 40; }, seconds(30), milliseconds(200)))
      << DiskSet("b");
  ASSERT_TRUE(LiveSetMatches("b")) << DiskSet("b") << " vs " << DaemonSet("b");
  EXPECT_GT(nodes_["b"]->Stats()["nginx_feeds"][0]["removes"].get<uint64_t>(), 0u);

  // inactive: every file of c goes once unused for 3 s.
  for (int i = 1; i <= 10; ++i) Fetch("c", "/page/" + std::to_string(i));
  ASSERT_TRUE(LiveSetMatches("c"));
  EXPECT_EQ(Files("c"), 10u);
  ASSERT_TRUE(WaitFor([&] { return Files("c") == 0; }, seconds(30), milliseconds(200)));
  ASSERT_TRUE(LiveSetMatches("c")) << DaemonSet("c");

  // An nginx restart: the cache loader reads the directory, nothing changes on disk.
  const std::string before = DaemonSet("a");
  ASSERT_TRUE(Bed("restart " + work_ + " a").exit_code == 0) << last_;
  EXPECT_EQ(FetchStatus("a", "/page/1"), "200 HIT");
  ASSERT_TRUE(LiveSetMatches("a"));
  EXPECT_EQ(DaemonSet("a"), before);

  // A daemon restart with files added and evicted while it was down: the saved set is
  // corrected by the start scan.
  ASSERT_TRUE(nodes_["b"]->Stop());
  for (int i = 41; i <= 60; ++i) Fetch("b", "/blob/" + std::to_string(i));
  StartDaemon("b");
  ASSERT_TRUE(LiveSetMatches("b")) << DiskSet("b") << " vs " << DaemonSet("b");
  // A scan on demand (`peerbloom rebuild`) finds what the events said.
  const uint64_t scans = nodes_["a"]->Stats()["nginx_feeds"][0]["scans"].get<uint64_t>();
  const ProcessResult rebuild =
      RunCli("--control ipc://" + cluster_.dir() + "/a/control.sock rebuild", Merged());
  EXPECT_EQ(rebuild.exit_code, 0) << rebuild.out;
  EXPECT_NE(rebuild.out.find("scanning the nginx cache directory"), std::string::npos)
      << rebuild.out;
  ASSERT_TRUE(WaitFor(
      [&] { return nodes_["a"]->Stats()["nginx_feeds"][0]["scans"].get<uint64_t>() > scans; },
      seconds(15)));
  for (const std::string& n : kNames) {
    const json f = nodes_[n]->Stats()["nginx_feeds"][0];
    EXPECT_EQ(f["drift_added"].get<uint64_t>() + f["drift_removed"].get<uint64_t>(), 0u) << n;
    EXPECT_EQ(f["foreign"].get<uint64_t>(), 0u) << n;
  }
}

TEST_F(NginxCluster, AMissIsServedFromThePeerThatHoldsIt) {
  for (const std::string& n : kNames) StartNode(n);
  const std::string path = "/page/shared";
  EXPECT_EQ(Fetch("a", path), "200 MISS origin");
  ASSERT_EQ(OriginFetches(path), 1);
  ASSERT_TRUE(LiveSetMatches("a"));
  // a's summary reaches b: b's who-has lists a.
  ASSERT_TRUE(WaitFor([&] { return Lists("b", Url(path), "a"); }, seconds(15)));

  // b misses, asks its daemon, fetches from a's sibling: the origin is not asked again.
  EXPECT_EQ(Fetch("b", path), "200 MISS " + Addr("a") + ":8081");
  EXPECT_EQ(OriginFetches(path), 1);
  // And b now holds it itself.
  EXPECT_EQ(FetchStatus("b", path), "200 HIT");
  ASSERT_TRUE(LiveSetMatches("b"));
  ASSERT_TRUE(WaitFor([&] { return Lists("c", Url(path), "b"); }, seconds(15)));
  const json routes = nodes_["b"]->Stats()["nginx_routes"];
  EXPECT_EQ(routes["to_peer"].get<uint64_t>(), 1u);
  EXPECT_EQ(routes["bad_requests"].get<uint64_t>(), 0u);

  // A URL nobody holds goes to the origin.
  EXPECT_EQ(Fetch("c", "/page/alone"), "200 MISS origin");
  EXPECT_GE(nodes_["c"]->Stats()["nginx_routes"]["no_holder"].get<uint64_t>(), 1u);
}

TEST_F(NginxCluster, AFalseHitFallsBackToTheOriginAndIsCachedLocally) {
  for (const std::string& n : kNames) StartNode(n);
  // /short/ objects are fresh for 3 s: a's copy stays on disk, and in a's summary, once
  // stale, but a's sibling serves only fresh copies: a false hit.
  const std::string path = "/short/1.html";
  EXPECT_EQ(Fetch("a", path), "200 MISS origin");
  ASSERT_TRUE(WaitFor([&] { return Lists("b", Url(path), "a"); }, seconds(15)));
  // Poll a's sibling until its copy is stale (it answers 504 then).
  ASSERT_TRUE(WaitFor(
      [&] {
        const ProcessResult r =
            RunShell("curl -s -o /dev/null -w '%{http_code}' -H 'Host: " + origin_ +
                     "' -H 'X-Peerbloom-Key: http" + origin_host_ + path + "' http://" + Addr("a") +
                     ":8081" + path);
        return Trim(r.out) == "504";
      },
      seconds(15), milliseconds(200)));
  ASSERT_TRUE(Lists("b", Url(path), "a"));  // still listed: the file is still there
  const int before = OriginFetches(path);
  EXPECT_EQ(Fetch("b", path), "200 MISS origin-after-false-hit");
  EXPECT_EQ(OriginFetches(path), before + 1);
  EXPECT_EQ(FetchStatus("b", path), "200 HIT");
}

TEST_F(NginxCluster, ANodeWhoseDaemonIsDownServesFromTheOrigin) {
  for (const std::string& n : kNames) StartNode(n);
  ASSERT_TRUE(nodes_["b"]->Stop());
  EXPECT_EQ(Fetch("b", "/page/nodaemon"), "200 MISS origin");
  EXPECT_EQ(FetchStatus("b", "/page/nodaemon"), "200 HIT");
}

TEST_F(NginxCluster, AClusterPurgeDeletesTheFilesWhereverTheyAre) {
  for (const std::string& n : kNames) StartNode(n);
  const std::string path = "/page/purged";
  Fetch("a", path);
  Fetch("b", "/page/kept");
  ASSERT_TRUE(WaitFor([&] { return Lists("b", Url(path), "a"); }, seconds(15)));
  Fetch("b", path);  // from a's sibling; now at a and b
  ASSERT_TRUE(LiveSetMatches("a"));
  ASSERT_TRUE(LiveSetMatches("b"));
  const size_t a_files = Files("a"), b_files = Files("b");
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const std::string& n : kNames) {
          if (nodes_[n]->Stats()["relay"]["links_up"] != 2) return false;
        }
        return true;
      },
      kWaitDeadline));
  const ProcessResult r = RunCli("--json --timeout 60000 --control ipc://" + cluster_.dir() +
                                     "/c/control.sock purge --cluster --wait 30000 " + Url(path),
                                 Merged());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("\"action\":\"nginx\""), std::string::npos) << r.out;
  ASSERT_TRUE(WaitFor([&] { return Files("a") == a_files - 1 && Files("b") == b_files - 1; },
                      seconds(15), milliseconds(100)))
      << DiskSet("a") << " / " << DiskSet("b");
  ASSERT_TRUE(LiveSetMatches("a"));
  ASSERT_TRUE(LiveSetMatches("b"));
  EXPECT_EQ(Fetch("a", path), "200 MISS origin");
  EXPECT_EQ(FetchStatus("b", "/page/kept"), "200 HIT");
}

}  // namespace
}  // namespace peerbloom::testing
