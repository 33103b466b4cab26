// peerbloomd beside a Squid set up as a new operator would: a small cache_mem, objects larger
// than maximum_object_size_in_memory, a 20 MB cache_dir that evicts, `logfile_rotate 3`,
// URLs typed in many spellings. Squid's logs rotate while the daemon runs and while it is
// stopped (by SIGTERM, then by kill -9 after an older snapshot); a fresh daemon and one whose
// saved position was compressed away rebuild the live set from the cache_dir.
//
// Ground truth comes from Squid itself, not from store.log: every URL ever fetched is asked
// again with `Cache-Control: only-if-cached` (200: Squid holds it; 504: it does not), and the
// cache_dir is read for the keys of the objects on disk. Then
//  - A's live set has exactly as many keys as the cache_dir holds objects, and A and B list
//    A for every one of them (zero false negatives);
//  - every held URL, in the spelling it was fetched with, is listed for A by A and by B,
//    except objects Squid keeps in memory only, which store.log never reports (at most
//    held - on disk of them).
// Squid evicts whenever its once-a-second maintenance finds the cache_dir above the low mark,
// so each check is a look during which A logged no store change; a look that saw one is
// repeated.
// Skipped where Squid cannot run (not installed, not root), like the other Squid tests.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "peerbloom/hash.h"
#include "peerbloom/squid_cache_dir.h"
#include "peerbloom/squid_store_log.h"
#include "peerbloom/summary.h"
#include "tests/support/cluster_harness.h"
#include "tests/support/squid_testbed.h"

namespace peerbloom::testing {
namespace {

using std::chrono::seconds;

// Sends one HTTP/1.0 request through the proxy with the URL exactly as given and reads the
// whole answer (so that Squid finishes storing it). Returns the status code, or 0.
int ProxyGet(const std::string& proxy_addr, const std::string& url, bool only_if_cached) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(3128);
  ::inet_pton(AF_INET, proxy_addr.c_str(), &sa.sin_addr);
  timeval tv{30, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  int status = 0;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0) {
    std::string request = "GET " + url + " HTTP/1.0\r\n";
    if (only_if_cached) request += "Cache-Control: only-if-cached\r\n";
    request += "\r\n";
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
        static_cast<ssize_t>(request.size())) {
      std::string head;
      char buf[65536];
      ssize_t n;
      while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0) {
        if (head.size() < 64) head.append(buf, static_cast<size_t>(std::min<ssize_t>(n, 64)));
      }
      if (head.rfind("HTTP/", 0) == 0 && head.size() > 12) status = std::atoi(head.c_str() + 9);
    }
  }
  ::close(fd);
  return status;
}

// The URL spellings a user may type for one object, as fetched through Squid. Squid keys
// each by its canonical form (docs/squid.md, "Squid's canonical URL").
std::vector<std::string> Spellings(const std::string& port, int i) {
  const std::string n = std::to_string(i);
  return {
      "http://127.0.0.1:" + port + "/f/plain" + n + ".html",
      "HTTP://LOCALHOST:" + port + "/f/Upper" + n + ".html",
      "http://localhost.:" + port + "/f/dot" + n + ".html",
      "http://127.0.0.1:" + port + "/f/q" + n + ".html?a=1&b=%41&c",
      "http://127.0.0.1:" + port + "/f/pct%2f" + n + ".html",
      "http://127.0.0.1:" + port + "/f/PCT%2F" + n + ".html",
      "http://127.0.0.1:" + port + "/f/caf\xc3\xa9" + n + ".html",
      "http://127.0.0.1:" + port + "/f/frag" + n + ".html#part",
      "http://127.0.0.1:" + port + "?" + n,
      "http://user@127.0.0.1:" + port + "/f/login" + n + ".html",
  };
}

class SquidField : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = SquidTestbed::SkipReason(); !why.empty()) GTEST_SKIP() << why;
    SquidTestbedOptions options;
    options.name = "squidfield";
    options.cache_mb = 20;
    options.logfile_rotate = 3;
    const std::string failed = bed_.Start(options);
    ASSERT_TRUE(failed.empty()) << failed;
    port_ = bed_.origin().substr(bed_.origin().rfind(':') + 1);
    logs_ = bed_.root() + "/" + bed_.addr() + "/logs";
  }
  void TearDown() override { bed_.Stop(/*keep_files=*/HasFailure()); }

  // Fetches `count` new small objects in every spelling and `big` objects too large for
  // Squid's memory cache (their evictions are logged without a memory object: `KEY ? ...`).
  void Fetch(int count, int big) {
    for (int i = 0; i < count; ++i) {
      for (const std::string& url : Spellings(port_, next_)) {
        const int status = ProxyGet(bed_.addr(), url, false);
        if (status == 200) fetched_.push_back(url);
      }
      ++next_;
    }
    for (int i = 0; i < big; ++i, ++next_) {
      const std::string url =
          "http://127.0.0.1:" + port_ + "/big/" + std::to_string(next_) + ".bin?bytes=700000";
      ASSERT_EQ(ProxyGet(bed_.addr(), url, false), 200) << url;
      fetched_.push_back(url);
    }
  }

  // The fetched URLs Squid still holds, by asking it.
  std::vector<std::string> Held() {
    std::vector<std::string> held;
    for (const std::string& url : fetched_) {
      const int status = ProxyGet(bed_.addr(), url, true);
      EXPECT_TRUE(status == 200 || status == 504) << url << ": " << status;
      if (status == 200) held.push_back(url);
    }
    return held;
  }

  // Waits until A has read every store.log line Squid wrote (Squid flushes its log buffer
  // within a second) and the line count stopped moving.
  void WaitUntilCaughtUp(Node* a) {
    uint64_t last_lines = ~uint64_t{0};
    bool settled = WaitFor(
        [&] {
          const json feed = a->Stats()["feeds"][0];
          const uint64_t lines = feed["lines"].get<uint64_t>();
          const bool quiet = feed["lag_bytes"] == 0 && lines == last_lines;
          last_lines = lines;
          return quiet;
        },
        seconds(60));
    ASSERT_TRUE(settled) << a->Stats()["feeds"].dump();
  }

  // The store changes A has read: objects written, evicted, refused by the disk. Probes of
  // URLs Squid does not hold log RELEASEs of private keys, which change nothing held.
  static std::vector<uint64_t> StoreChanges(Node* a) {
    const json feed = a->Stats()["feeds"][0];
    return {feed["adds"].get<uint64_t>(), feed["removes"].get<uint64_t>(),
            feed["store_log"]["swapout_failures"].get<uint64_t>(),
            feed["store_log"]["duplicate_swapouts"].get<uint64_t>()};
  }

  // Waits until A has logged no store change for three seconds. Squid's store maintenance
  // runs once a second and evicts a bounded number of unlocked objects per run while the
  // cache_dir is above cache_swap_low, so after a fill (or after probes that locked objects)
  // evictions go on for a while; three quiet runs mean the cache is below the low mark.
  void WaitUntilStoreIsQuiet(Node* a) {
    std::vector<uint64_t> last;
    auto since = std::chrono::steady_clock::now();
    const bool quiet = WaitFor(
        [&] {
          WaitUntilCaughtUp(a);
          const std::vector<uint64_t> now = StoreChanges(a);
          if (now != last) {
            last = now;
            since = std::chrono::steady_clock::now();
          }
          return std::chrono::steady_clock::now() - since >= seconds(3);
        },
        seconds(120));
    ASSERT_TRUE(quiet) << "Squid's store kept changing: " << a->Stats()["feeds"][0].dump();
  }
  // The keys of the objects on Squid's disk (its index confirmed by the files), Squid's own
  // objects (the Cache Digest) left out, in hex as who-has --key takes them.
  std::vector<std::string> KeysOnDisk() const {
    std::vector<CacheDirKey> keys;
    CacheDirReport report;
    CacheDirOptions options;
    options.want_urls = true;
    const Status s =
        ReadSquidCacheDir(bed_.root() + "/" + bed_.addr() + "/cache", options, &keys, &report);
    EXPECT_TRUE(s.ok()) << s.ToString();
    std::vector<std::string> hex;
    for (const CacheDirKey& k : keys) {
      if (!IsSquidInternalUrl(k.url)) hex.push_back(SquidKeyHex(k.key));
    }
    return hex;
  }

  // For keys B does not list: does the summary of A that B holds contain them, and A's own?
  static void DiagnoseAtB(Node* a, Node* b, const std::vector<std::string>& disk) {
    const auto at_b = b->WhoHasKeys(disk);
    json reply;
    std::string held_by_b, own_of_a;
    b->Call({{"op", "summary"}, {"node", "A"}, {"format", "bytes"}}, "", &reply, &held_by_b);
    a->Call({{"op", "summary"}, {"format", "bytes"}}, "", &reply, &own_of_a);
    Summary sb, sa;
    const bool ok_b = DecodeSummary(held_by_b, DecodeLimits(), &sb).ok();
    const bool ok_a = DecodeSummary(own_of_a, DecodeLimits(), &sa).ok();
    const IndexHasher hasher(DeriveIndexKey("integration-secret"));  // the harness's secret
    for (size_t i = 0; i < at_b.size() && i < disk.size(); ++i) {
      if (std::find(at_b[i].begin(), at_b[i].end(), "A") != at_b[i].end()) continue;
      SquidKey k;
      if (!ParseSquidKeyHex(disk[i], &k)) continue;
      const KeyHash h = hasher.Hash(SquidKeyBytes(k));
      std::printf("not listed at B: %s; in B's copy of A (v%llu): %d; in A's own (v%llu): %d\n",
                  disk[i].c_str(), static_cast<unsigned long long>(sb.version),
                  ok_b && sb.filter.MayContain(h), static_cast<unsigned long long>(sa.version),
                  ok_a && sa.filter.MayContain(h));
    }
  }

  // How many of `lists` do not name A.
  static size_t Missing(const std::vector<std::vector<std::string>>& lists) {
    size_t n = 0;
    for (const auto& ids : lists) n += std::find(ids.begin(), ids.end(), "A") == ids.end();
    return n;
  }

  // What one look at Squid, A and B saw, and whether Squid's store stood still meanwhile.
  struct Observation {
    bool store_moved = false;
    std::vector<std::string> held, disk;
    json feed;
    size_t disk_missing_at_a = 0, missing_at_a = 0, held_at_a = 0;
    bool reached = false;  // B lists what it should
    size_t disk_missing_at_b = 0, missing_at_b = 0;
  };

  // Looks at Squid's truth (probes and the cache_dir), A, then B until B has caught up with A.
  // The look counts only if A logged no store change from its start to its end: an eviction
  // in between changes the truth under the look (Squid evicts whenever its maintenance finds
  // an unlocked object above the low mark), and the caller looks again.
  Observation Observe(Node* a, Node* b) {
    Observation o;
    WaitUntilStoreIsQuiet(a);
    const std::vector<uint64_t> before = StoreChanges(a);
    o.held = Held();
    o.disk = KeysOnDisk();
    o.feed = a->Stats()["feeds"][0];
    o.disk_missing_at_a = Missing(a->WhoHasKeys(o.disk));
    const auto at_a = a->WhoHas(o.held);
    o.held_at_a = at_a.size();
    o.missing_at_a = Missing(at_a);
    o.reached = WaitFor(
        [&] {
          if (StoreChanges(a) != before) return o.store_moved = true;
          o.disk_missing_at_b = Missing(b->WhoHasKeys(o.disk));
          o.missing_at_b = Missing(b->WhoHas(o.held));
          return o.disk_missing_at_b == 0 && o.missing_at_b <= o.missing_at_a;
        },
        seconds(30));
    WaitUntilCaughtUp(a);
    o.store_moved |= StoreChanges(a) != before;
    return o;
  }

  // Checks the properties in the header on an observation during which Squid's store stood
  // still; returns the number of held URLs.
  size_t Check(Node* a, Node* b, const std::string& when, uint64_t lost = 0) {
    Observation o;
    int looks = 0;
    const bool still = WaitFor(
        [&] {
          ++looks;
          o = Observe(a, b);
          return !o.store_moved;
        },
        seconds(300));
    EXPECT_TRUE(still) << when << ": Squid's store changed during each of " << looks << " looks";
    // The live set is what Squid has on disk: as many keys, and every one listed.
    EXPECT_EQ(o.feed["store_log"]["live_keys"].get<uint64_t>(), o.disk.size())
        << when << ": " << o.feed.dump();
    EXPECT_EQ(o.feed["removes_refused"], 0) << when;
    EXPECT_EQ(o.feed["resumes_lost"], lost) << when << ": " << o.feed["resume_lost"];
    EXPECT_EQ(o.disk_missing_at_a, 0u) << when;
    // Every held URL, as typed, is listed unless Squid holds it in memory only (SO_FAIL or
    // never offered to the disk), which store.log cannot report: at most held - on disk.
    EXPECT_EQ(o.held_at_a, o.held.size());
    const size_t memory_only = o.held.size() - std::min(o.held.size(), o.disk.size());
    EXPECT_LE(o.missing_at_a, memory_only) << when;
    // B lists A for the same keys once A's current summary has reached it.
    if (!o.reached) DiagnoseAtB(a, b, o.disk);
    EXPECT_TRUE(o.reached) << when << ": on disk but not listed at B " << o.disk_missing_at_b
                           << ", held but not listed at B " << o.missing_at_b << "\nB's peers "
                           << b->Peers().dump() << "\nA's gossip " << a->Stats()["gossip"].dump()
                           << "\nA's summary " << a->Stats()["summary"].dump();
    std::printf(
        "%s (%d look(s)): %zu fetched, %zu held, %zu on disk, live keys %llu; on disk not "
        "listed: A %zu, B %zu; held not listed: A %zu, B %zu (memory-only at most %zu)\n",
        when.c_str(), looks, fetched_.size(), o.held.size(), o.disk.size(),
        static_cast<unsigned long long>(o.feed["store_log"]["live_keys"].get<uint64_t>()),
        o.disk_missing_at_a, o.disk_missing_at_b, o.missing_at_a, o.missing_at_b, memory_only);
    return o.held.size();
  }

  // store.log lines of the eviction form without a memory object, in every file so far.
  int BareReleases() const {
    int n = 0;
    for (const auto& entry : std::filesystem::directory_iterator(logs_)) {
      if (entry.path().filename().string().rfind("store.log", 0) != 0) continue;
      std::ifstream in(entry.path());
      for (std::string line; std::getline(in, line);) {
        n += line.find(" RELEASE ") != std::string::npos &&
             line.find(" ?/? ?/? ? ?") != std::string::npos;
      }
    }
    return n;
  }

  SquidTestbed bed_;
  std::string port_, logs_;
  std::vector<std::string> fetched_;
  int next_ = 1;
};

TEST_F(SquidField, EvictionsRotationsAndRestartsLoseNothing) {
  Cluster cluster;
  Node* a = cluster.AddNode("A");
  Node* b = cluster.AddNode("B");
  NodeOptions oa;
  oa.key_scheme = "squid-md5";
  NodeOptions ob = oa;
  oa.extra = "snapshot_interval = 0\n[[feeds]]\npath = \"" + logs_ +
             "/store.log\"\nformat = \"squid-store-log\"\n";
  ASSERT_TRUE(a->Start(oa, {})) << a->log_tail();
  ASSERT_TRUE(b->Start(ob, {a})) << b->log_tail();

  // 1. Objects in ten spellings and large ones that overflow the 20 MB cache_dir.
  Fetch(15, 20);
  Check(a, b, "filled");

  // 2. A rotation while the daemon runs.
  ASSERT_EQ(bed_.Run("rotate " + bed_.addr()), 0);
  Fetch(10, 15);
  Check(a, b, "rotated while running");

  // 3. SIGTERM (final snapshot), then more objects and evictions, a rotation and more, all
  // while the daemon is down.
  ASSERT_TRUE(a->Stop());
  Fetch(10, 15);
  ASSERT_EQ(bed_.Run("rotate " + bed_.addr()), 0);
  Fetch(10, 15);
  ASSERT_TRUE(a->Start(oa, {})) << a->log_tail();
  Check(a, b, "rotated while stopped by SIGTERM");
  EXPECT_GE(a->Stats()["feeds"][0]["resumes_rotated"].get<uint64_t>(), 1u);

  // 4. A snapshot, more work, kill -9: the restart resumes at the older snapshot's position,
  // two rotations back.
  json reply;
  std::string body;
  ASSERT_TRUE(a->Call({{"op", "snapshot"}}, "", &reply, &body)) << reply.dump();
  Fetch(10, 15);
  ASSERT_EQ(bed_.Run("rotate " + bed_.addr()), 0);
  Fetch(5, 10);
  a->Kill9();
  Fetch(5, 10);
  ASSERT_EQ(bed_.Run("rotate " + bed_.addr()), 0);
  Fetch(5, 10);
  ASSERT_TRUE(a->Start(oa, {})) << a->log_tail();
  const size_t held = Check(a, b, "rotated while stopped by kill -9");
  EXPECT_GE(a->Stats()["feeds"][0]["resumes_rotated"].get<uint64_t>(), 1u);

  // The run exercised what it is about: evictions without a memory object, and a cache
  // that holds fewer objects than were fetched.
  const int bare = BareReleases();
  EXPECT_GT(bare, 0) << "no eviction was logged as 'KEY ? ... ?/? ?/? ? ?'";
  EXPECT_LT(held, fetched_.size());
  std::printf("evictions logged without a memory object: %d\n", bare);
}

// A daemon started fresh beside a Squid whose store.log was rotated away knows nothing from
// store.log; with cache_dirs it reads what Squid holds. Later, a saved position whose file
// was compressed away while the daemon was down is lost, said so, and repaired the same way.
TEST_F(SquidField, LiveSetIsRebuiltFromTheCacheDir) {
  Fetch(15, 20);
  ASSERT_EQ(bed_.Run("rotate " + bed_.addr()), 0);
  Fetch(5, 5);
  ASSERT_EQ(bed_.Run("rotate " + bed_.addr()), 0);

  Cluster cluster;
  Node* a = cluster.AddNode("A");
  Node* b = cluster.AddNode("B");
  NodeOptions oa;
  oa.key_scheme = "squid-md5";
  NodeOptions ob = oa;
  oa.extra = "[[feeds]]\npath = \"" + logs_ + "/store.log\"\nformat = \"squid-store-log\"\n" +
             "cache_dirs = [\"" + bed_.root() + "/" + bed_.addr() + "/cache\"]\n";
  ASSERT_TRUE(a->Start(oa, {})) << a->log_tail();
  ASSERT_TRUE(b->Start(ob, {a})) << b->log_tail();
  ASSERT_TRUE(
      WaitFor([&] { return a->Stats()["feeds"][0]["rebuild"]["finished"] == 1; }, seconds(60)))
      << a->Stats()["feeds"][0].dump();
  EXPECT_EQ(a->Stats()["feeds"][0]["rebuild"]["trigger"], "no saved position");
  Fetch(5, 5);
  Check(a, b, "new daemon beside a full cache");

  // The file the snapshot points at is compressed away while the daemon is down.
  ASSERT_TRUE(a->Stop());
  Fetch(5, 10);
  ASSERT_EQ(bed_.Run("rotate " + bed_.addr()), 0);
  std::filesystem::rename(logs_ + "/store.log.0", logs_ + "/store.log.0.gz");
  Fetch(5, 5);
  ASSERT_TRUE(a->Start(oa, {})) << a->log_tail();
  ASSERT_TRUE(
      WaitFor([&] { return a->Stats()["feeds"][0]["rebuild"]["finished"] == 1; }, seconds(60)))
      << a->Stats()["feeds"][0].dump();
  const json feed = a->Stats()["feeds"][0];
  EXPECT_EQ(feed["rebuild"]["trigger"], "saved position lost");
  EXPECT_NE(feed["resume_lost"].get<std::string>().find("store.log.0.gz"), std::string::npos)
      << feed["resume_lost"];
  Check(a, b, "saved position lost, rebuilt", /*lost=*/1);
}

}  // namespace
}  // namespace peerbloom::testing
