// peerbloomd beside a real Squid (scripts/squid-testbed.sh), end to end:
//   Squid ──store.log──► daemon A ──gossip──► daemon B      (who-has at B lists A)
//   Squid ──store_digest (HTTP)──► daemon C ──gossip──► B   (who-has lists "squid:ADDR:3128")
// Every URL Squid cached must be listed (no false negatives); purged URLs leave A's filter and
// summary, checked on that exact state (a purged URL may stay a false positive of the summary,
// so "not listed" would fail by chance); false positives on never-fetched URLs are counted
// against the summary's target rate. Skipped where Squid is not installed or the test cannot
// start it (not root), like squid_testbed_test.cc.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "peerbloom/bloom_filter.h"
#include "peerbloom/client/who_has.h"
#include "peerbloom/hash.h"
#include "peerbloom/key_scheme.h"
#include "peerbloom/summary.h"
#include "tests/support/cluster_harness.h"
#include "tests/support/squid_testbed.h"

namespace peerbloom::testing {
namespace {

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
  client::WhoHasReply decoded;
  if (!client::DecodeWhoHasReply(reply, answer, &decoded).ok()) return out;
  for (const client::WhoHasAnswer& a : decoded.answers) {
    std::vector<Listed>& ids = out.emplace_back();
    for (size_t i : a.nodes) ids.push_back({decoded.nodes[i].node_id, decoded.nodes[i].imported});
  }
  return out;
}

bool Lists(const std::vector<Listed>& ids, const std::string& node, bool imported) {
  for (const Listed& l : ids) {
    if (l.node_id == node && l.imported == imported) return true;
  }
  return false;
}

// The summary of `node` held by `holder` (its own when they are the same); false when it holds
// none or it does not decode.
bool HeldSummary(Node* holder, const std::string& node, Summary* out) {
  json reply;
  std::string bytes;
  return holder->Call({{"op", "summary"}, {"node", node}, {"format", "bytes"}}, "", &reply,
                      &bytes) &&
         DecodeSummary(bytes, DecodeLimits{}, out).ok();
}

// The summary a node holding exactly `urls` publishes at this geometry: the daemon's key
// bytes (KeyEncoder, squid-md5) hashed with the cluster's index key, added to a plain filter.
// Projection and folding give bit for bit this filter (tests/unit/filter/bloom_filter_test.cc).
BloomFilter FilterOf(const std::vector<std::string>& urls, unsigned log2_bits, unsigned k) {
  KeyEncoder encoder(KeyScheme::kSquidMd5);
  const IndexHasher hasher(DeriveIndexKey("integration-secret"));  // cluster_harness.cc
  BloomFilter f(log2_bits, k);
  for (const std::string& u : urls) f.Add(hasher.Hash(encoder.FromUrl(u)));
  return f;
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
  WaitFor([&] { return (listed = CountListed(b, cached, "A", false)) == kCached; }, kWaitDeadline);
  ASSERT_EQ(listed, kCached) << a->Stats().dump() << "\n" << a->log_tail();
  const int false_positives = CountListed(b, never, "A", false);
  ASSERT_GE(false_positives, 0);
  // B holds A's folded summary, built for target_fpr = 0.01 (the URLs carry the origin's port,
  // which changes every run, so the count is random): at most 20 of 2000 expected. 60 or more
  // has a tail probability below 1e-12 (the Poisson(20) tail from 60 is 4e-13).
  EXPECT_LT(false_positives, kNever * 3 / 100);
  std::printf("store.log feed: %d/%d cached URLs listed at B, %d/%d false positives\n", listed,
              kCached, false_positives, kNever);

  // 2. Purged URLs leave A's filter and its summary, and B holds that summary: A's live set
  // and filter hold exactly the kept URLs, A's summary equals the filter built from the kept
  // URLs alone, bit for bit (so every bit a purged URL set and no kept URL shares is gone),
  // and B answers for every cached URL exactly as that summary does. A purged URL may still
  // be listed, as a false positive of the summary (about 1 % each); that is counted, not
  // failed on.
  for (const std::string& url : purged) ASSERT_EQ(Run("purge " + addr_ + " " + url), 0);
  json a_stats;
  Summary a_summary, b_summary;
  const bool settled = WaitFor(
      [&] {
        a_stats = a->Stats();
        return a_stats.contains("feeds") &&
               a_stats["feeds"][0]["store_log"]["live_keys"] == kCached - kPurged &&
               a_stats["filter"]["items"] == kCached - kPurged &&
               a_stats["summary"]["pending"] == 0 && HeldSummary(a, "A", &a_summary) &&
               HeldSummary(b, "A", &b_summary) && b_summary.epoch == a_summary.epoch &&
               b_summary.version == a_summary.version;
      },
      kWaitDeadline);
  ASSERT_TRUE(settled) << a_stats.dump() << "\n" << a->log_tail();
  EXPECT_EQ(a_summary.estimated_items, uint64_t{kCached - kPurged});
  const BloomFilter expected = FilterOf(kept, a_summary.filter.log2_bits(), a_summary.filter.k());
  EXPECT_TRUE(a_summary.filter == expected) << "A's summary is not the filter of the kept URLs";
  EXPECT_TRUE(b_summary.filter == a_summary.filter)
      << "B holds another filter for A's summary version";
  // The probes: every cached URL and the never-fetched ones, whose listings at B must be
  // exactly the summary's false positives (this also exercises the "maybe" side each run).
  std::vector<std::string> probes = cached;
  probes.insert(probes.end(), never.begin(), never.end());
  KeyEncoder encoder(KeyScheme::kSquidMd5);
  const IndexHasher hasher(DeriveIndexKey("integration-secret"));
  std::vector<bool> maybe;  // the summary's answer for each probe
  int purged_false_positives = 0, never_false_positives = 0;
  for (size_t i = 0; i < probes.size(); ++i) {
    maybe.push_back(expected.MayContain(hasher.Hash(encoder.FromUrl(probes[i]))));
    if (i < static_cast<size_t>(kPurged)) purged_false_positives += maybe.back();
    if (i >= cached.size()) never_false_positives += maybe.back();
  }
  // The kept URLs are all in `expected`: this also asserts that B lists every one of them.
  // Polled: B leaves A out of every answer while A looks dead to it (a stalled process).
  std::vector<std::vector<Listed>> answers;
  const auto answers_as_summary = [&] {
    answers = WhoHasFull(b, probes);
    if (answers.size() != probes.size()) return false;
    for (size_t i = 0; i < probes.size(); ++i) {
      if (Lists(answers[i], "A", false) != maybe[i]) return false;
    }
    return true;
  };
  if (!WaitFor(answers_as_summary, kWaitDeadline)) {
    ASSERT_EQ(answers.size(), probes.size());
    for (size_t i = 0; i < probes.size(); ++i) {
      EXPECT_EQ(Lists(answers[i], "A", false), maybe[i]) << probes[i];
    }
  }
  std::printf(
      "after the purges, listed at B as false positives of A's summary: %d/%d purged URLs, "
      "%d/%d never-fetched URLs\n",
      purged_false_positives, kPurged, never_false_positives, kNever);
  const json feed = a_stats["feeds"][0];
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
      2 * kWaitDeadline);
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
      kWaitDeadline);
  EXPECT_EQ(left_c, 0) << c->log_tail();
  EXPECT_EQ(left_b, 0);
}

}  // namespace
}  // namespace peerbloom::testing
