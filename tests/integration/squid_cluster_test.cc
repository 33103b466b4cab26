// peerbloomd beside a real Squid (scripts/squid-testbed.sh), end to end:
//   Squid ──store.log──► daemon A ──gossip──► daemon B      (who-has at B lists A)
//   Squid ──store_digest (HTTP)──► daemon C ──gossip──► B   (who-has lists "squid:ADDR:3128")
// Every URL Squid cached must be listed (no false negatives); purged URLs leave; false
// positives on never-fetched URLs are counted and printed. Skipped where Squid is not
// installed or the test cannot start it (not root), like squid_testbed_test.cc.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/integration/cluster_harness.h"
#include "tests/integration/squid_testbed.h"

namespace peerbloom::testing {
namespace {

using std::chrono::seconds;

constexpr int kCached = 100;  // URLs fetched through Squid
constexpr int kPurged = 10;   // of them, purged afterwards
constexpr int kNever = 2000;  // URLs never fetched, for false positives

// A listing of one key: node id and whether it is an imported Squid digest.
struct Listed {
  std::string node_id;
  bool imported = false;
};

std::vector<std::vector<Listed>> WhoHasFull(Node* node, const std::vector<std::string>& urls) {
  std::string body;
  for (const std::string& u : urls) body += u + "\n";
  json reply;
  std::string answer;
  std::vector<std::vector<Listed>> out;
  if (!node->Call({{"op", "who-has"}, {"input", "url"}}, body, &reply, &answer)) return out;
  size_t start = 0;
  while (start < answer.size()) {
    size_t end = answer.find('\n', start);
    if (end == std::string::npos) end = answer.size();
    std::vector<Listed> ids;
    const std::string line = answer.substr(start, end - start);
    size_t pos = 0;
    while (pos < line.size()) {
      size_t used = 0;
      const size_t i = std::stoul(line.substr(pos), &used);
      const json& n = reply["nodes"][i];
      ids.push_back({n["node_id"].get<std::string>(), n["imported"].get<bool>()});
      pos += used;
      while (pos < line.size() && line[pos] == ' ') ++pos;
    }
    out.push_back(std::move(ids));
    start = end + 1;
  }
  return out;
}

bool Lists(const std::vector<Listed>& ids, const std::string& node, bool imported) {
  for (const Listed& l : ids) {
    if (l.node_id == node && l.imported == imported) return true;
  }
  return false;
}

// How many of `urls` `node` lists at `observer` (with the given imported flag); -1 when the
// request failed.
int CountListed(Node* observer, const std::vector<std::string>& urls, const std::string& node,
                bool imported) {
  const auto answers = WhoHasFull(observer, urls);
  if (answers.size() != urls.size()) return -1;
  int n = 0;
  for (const auto& ids : answers) n += Lists(ids, node, imported);
  return n;
}

class SquidCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = SquidTestbed::SkipReason(); !why.empty()) GTEST_SKIP() << why;
    SquidTestbedOptions options;
    options.name = "squidcluster";
    const std::string failed = bed_.Start(options);
    ASSERT_TRUE(failed.empty()) << failed;
    root_ = bed_.root();
    addr_ = bed_.addr();
    origin_ = bed_.origin();
  }
  void TearDown() override { bed_.Stop(/*keep_files=*/HasFailure()); }

  int Run(const std::string& args) const { return bed_.Run(args); }
  std::string Capture(const std::string& args) const { return bed_.Capture(args); }
  std::vector<std::string> Urls(const std::string& prefix, int from, int to) const {
    std::vector<std::string> urls;
    for (int i = from; i <= to; ++i)
      urls.push_back(origin_ + "/" + prefix + std::to_string(i) + ".html");
    return urls;
  }

  SquidTestbed bed_;
  std::string root_, addr_, origin_;
};

TEST_F(SquidCluster, StoreLogFeedAndImportedDigestReachEveryNode) {
  ASSERT_EQ(Run("fill " + addr_ + " " + std::to_string(kCached)), 0);
  const std::vector<std::string> cached = Urls("o", 1, kCached);
  const std::vector<std::string> purged(cached.begin(), cached.begin() + kPurged);
  const std::vector<std::string> kept(cached.begin() + kPurged, cached.end());
  const std::vector<std::string> never = Urls("never", 1, kNever);
  const std::string squid_node = "squid:" + addr_ + ":3128";

  Cluster cluster;
  Node* a = cluster.AddNode("A");
  Node* b = cluster.AddNode("B");
  Node* c = cluster.AddNode("C");
  NodeOptions oa;
  oa.key_scheme = "squid-md5";
  NodeOptions ob = oa, oc = oa;
  oa.extra = "[[feeds]]\npath = \"" + root_ + "/" + addr_ +
             "/logs/store.log\"\nformat = \"squid-store-log\"\n";
  // Squid's digest says Expires = its rebuild period (3 s here): refresh on it.
  oc.extra = "squid_digest_min_refresh = \"1s\"\n[[squid_digest]]\nhost = \"" + addr_ +
             "\"\nport = 3128\n";
  ASSERT_TRUE(a->Start(oa, {})) << a->log_tail();
  ASSERT_TRUE(b->Start(ob, {a})) << b->log_tail();
  ASSERT_TRUE(c->Start(oc, {a})) << c->log_tail();

  // 1. Every cached URL is listed for A at B: zero false negatives.
  int listed = 0;
  WaitFor([&] { return (listed = CountListed(b, cached, "A", false)) == kCached; }, seconds(20));
  ASSERT_EQ(listed, kCached) << a->Stats().dump() << "\n" << a->log_tail();
  const int false_positives = CountListed(b, never, "A", false);
  ASSERT_GE(false_positives, 0);
  // B holds A's folded summary, built for target_fpr = 0.01: 20 of 2000 expected; 3% (60) is
  // over eight standard deviations above that.
  EXPECT_LT(false_positives, kNever * 3 / 100);
  std::printf("store.log feed: %d/%d cached URLs listed at B, %d/%d false positives\n", listed,
              kCached, false_positives, kNever);

  // 2. Purged URLs leave B's answers; the others stay.
  for (const std::string& url : purged) ASSERT_EQ(Run("purge " + addr_ + " " + url), 0);
  int still = 0;
  WaitFor([&] { return (still = CountListed(b, purged, "A", false)) == 0; }, seconds(20));
  EXPECT_EQ(still, 0) << "purged URLs still listed for A at B";
  EXPECT_EQ(CountListed(b, kept, "A", false), kCached - kPurged);
  const json feed = a->Stats()["feeds"][0];
  std::printf("A's feed: lines %llu, adds %llu, removes %llu, lag %llu bytes\n",
              static_cast<unsigned long long>(feed["lines"].get<uint64_t>()),
              static_cast<unsigned long long>(feed["adds"].get<uint64_t>()),
              static_cast<unsigned long long>(feed["removes"].get<uint64_t>()),
              static_cast<unsigned long long>(feed["lag_bytes"].get<uint64_t>()));
  EXPECT_EQ(feed["store_log"]["live_keys"].get<uint64_t>(), uint64_t{kCached - kPurged});

  // 3. C imports Squid's digest. Squid rebuilds it every 3 s, so the URLs kept in the cache
  // (cached before any later rebuild) must all be listed, marked imported, at C and at B.
  int at_c = 0, at_b = 0;
  WaitFor(
      [&] {
        at_c = CountListed(c, kept, squid_node, true);
        at_b = CountListed(b, kept, squid_node, true);
        return at_c == kCached - kPurged && at_b == kCached - kPurged;
      },
      seconds(30));
  const json digests = c->Stats()["squid_digests"];
  EXPECT_EQ(at_c, kCached - kPurged) << digests.dump() << "\n" << c->log_tail();
  EXPECT_EQ(at_b, kCached - kPurged) << b->Stats()["squid_digests"].dump();
  ASSERT_EQ(digests["sources"].size(), 1u);
  const json& src = digests["sources"][0];
  EXPECT_EQ(src["source"], addr_ + ":3128");
  EXPECT_GE(src["fetches"].get<uint64_t>(), 1u);
  const int digest_fp = CountListed(b, never, squid_node, true);
  std::printf(
      "imported digest: %d/%d kept URLs at C, %d at B; capacity %llu, count %llu, %llu bytes, "
      "fill %.4f, est. fpr %.5f, fetches %llu, failures %llu; false positives at B %d/%d\n",
      at_c, kCached - kPurged, at_b,
      static_cast<unsigned long long>(src["capacity"].get<uint64_t>()),
      static_cast<unsigned long long>(src["count"].get<uint64_t>()),
      static_cast<unsigned long long>(src["digest_bytes"].get<uint64_t>()),
      src["fill"].get<double>(), src["estimated_fpr"].get<double>(),
      static_cast<unsigned long long>(src["fetches"].get<uint64_t>()),
      static_cast<unsigned long long>(src["failures"].get<uint64_t>()), digest_fp, kNever);

  // 4. SIGHUP without the source: the import leaves C and, through gossip, B.
  oc.extra.clear();
  ASSERT_TRUE(c->Reload(oc, {a}));
  int left_c = -1, left_b = -1;
  WaitFor(
      [&] {
        left_c = CountListed(c, kept, squid_node, true);
        left_b = CountListed(b, kept, squid_node, true);
        return left_c == 0 && left_b == 0;
      },
      seconds(20));
  EXPECT_EQ(left_c, 0) << c->log_tail();
  EXPECT_EQ(left_b, 0);
}

}  // namespace
}  // namespace peerbloom::testing
