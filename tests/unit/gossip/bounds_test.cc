// Bounds on what members may make this node hold: summary geometry (peerbloom/summary_bounds.h)
// and imported digests per importer.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "peerbloom/gossip.h"
#include "peerbloom/summary_bounds.h"

namespace peerbloom {
namespace {

TEST(SummaryBounds, DerivedFromTheClustersConfiguration) {
  SummaryBounds b;
  ASSERT_TRUE(DeriveSummaryBounds(Profile::kBalanced, 1000000, 0.01, 0, &b).ok());
  EXPECT_EQ(b.max_bits, uint64_t{1} << 27);  // 4 x the 2^25 counters of docs/profiles.md
  EXPECT_EQ(b.max_k, 9u);                    // memory-lean k at 0.25 %: round(log2(400))
  ASSERT_TRUE(DeriveSummaryBounds(Profile::kWireLean, 1000000, 0.01, 0, &b).ok());
  EXPECT_EQ(b.max_bits, uint64_t{1} << 29);
  // An exact-size filter (c x 2^j) is never above the power-of-two one, so its summaries fit.
  Geometry exact;
  ASSERT_TRUE(ChooseGeometry(Profile::kWireLean, 1000000, 0.01, &exact, SizeSteps::kExact).ok());
  EXPECT_TRUE(CheckSummaryBounds(b, exact.k, exact.log2_counters, exact.multiplier, 0).ok());
}

TEST(SummaryBounds, RefusesBeyondEachBound) {
  SummaryBounds b;
  b.max_bits = uint64_t{1} << 24;
  b.max_k = 9;
  b.max_total_bits = uint64_t{1} << 26;
  EXPECT_TRUE(CheckSummaryBounds(b, 2, 24, 1, 0).ok());
  EXPECT_TRUE(CheckSummaryBounds(b, 2, 21, 7, 0).ok());  // 7 x 2^21 < 2^24
  Status s = CheckSummaryBounds(b, 2, 28, 1, 0);
  EXPECT_TRUE(s.IsResourceExhausted());
  EXPECT_EQ(s.message(), "summary of '268435456' bits exceeds the cluster's bound of '16777216'");
  s = CheckSummaryBounds(b, 2, 22, 5, 0);  // 5 x 2^22 > 2^24
  EXPECT_EQ(s.message(), "summary of '20971520' bits exceeds the cluster's bound of '16777216'");
  s = CheckSummaryBounds(b, 10, 20, 1, 0);
  EXPECT_EQ(s.message(), "summary of '10' hash functions exceeds the cluster's bound of '9'");
  s = CheckSummaryBounds(b, 2, 24, 1, (uint64_t{1} << 26) - (uint64_t{1} << 23));
  EXPECT_EQ(s.message(),
            "summary of '16777216' bits with '58720256' bits of other summaries held exceeds the "
            "bound of '67108864'");
  EXPECT_TRUE(CheckSummaryBounds(SummaryBounds{}, 32, 34, 63, 0).ok());  // none set
}

std::string Fixture() {
  std::ifstream in(std::string(PEERBLOOM_SOURCE_DIR) + "/tests/data/squid/store_digest_A.bin",
                   std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

DigestImport ImportOf(const std::string& source) {
  DigestImport in;
  in.source = source;
  in.source_url = "http://" + source + "/squid-internal-periodic/store_digest";
  in.digest_bytes = Fixture();
  in.valid_for_ms = 60000;
  in.fetched_unix_ms = 1;
  return in;
}

GossipOptions Options() {
  GossipOptions o;
  o.node_id = "n";
  o.endpoint = "tcp://127.0.0.1:1";
  o.key_scheme = KeyScheme::kSquidMd5;
  return o;
}

TEST(ImportQuota, CountPerImporter) {
  GossipOptions o = Options();
  o.max_imports_per_importer = 2;
  GossipEngine e(o);
  ASSERT_TRUE(e.ImportDigest(ImportOf("10.0.0.1:3128"), 0).ok());
  ASSERT_TRUE(e.ImportDigest(ImportOf("10.0.0.2:3128"), 0).ok());
  ASSERT_TRUE(e.ImportDigest(ImportOf("10.0.0.2:3128"), 0).ok());  // a refresh: still two
  const Status s = e.ImportDigest(ImportOf("10.0.0.3:3128"), 0);
  EXPECT_TRUE(s.IsResourceExhausted());
  EXPECT_EQ(s.message(), "imports of 'n' would hold '3' digests, above the limit of '2'");
  EXPECT_EQ(e.stats().imports_over_quota, 1u);
}

TEST(ImportQuota, BytesPerImporter) {
  const size_t size = Fixture().size();
  ASSERT_GT(size, 0u);
  GossipOptions o = Options();
  o.max_import_bytes_per_importer = 2 * size;
  GossipEngine e(o);
  ASSERT_TRUE(e.ImportDigest(ImportOf("10.0.0.1:3128"), 0).ok());
  ASSERT_TRUE(e.ImportDigest(ImportOf("10.0.0.2:3128"), 0).ok());
  const Status s = e.ImportDigest(ImportOf("10.0.0.3:3128"), 0);
  EXPECT_EQ(s.message(), "imports of 'n' would hold '" + std::to_string(3 * size) +
                             "' bytes, above the limit of '" + std::to_string(2 * size) + "'");
}

}  // namespace
}  // namespace peerbloom
