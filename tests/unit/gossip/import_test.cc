// Imported Squid Cache Digests on the simulated network (sim_cluster.h), fake clock throughout.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "peerbloom/key_scheme.h"
#include "peerbloom/squid_digest.h"
#include "tests/support/sim_cluster.h"

namespace peerbloom {
namespace {

using sim::NodeSpec;
using sim::SimCluster;

constexpr int64_t kTimeout = 10000;  // DefaultOptions: failure timeout
constexpr char kSource[] = "127.0.0.2:3128";
constexpr char kImportId[] = "squid:127.0.0.2:3128";
constexpr char kUrl[] = "http://127.0.0.2:3128/squid-internal-periodic/store_digest";

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(PEERBLOOM_SOURCE_DIR) + "/tests/data/squid/" + name,
                   std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Store keys (16 bytes each) of URLs under the fixture's origin.
std::vector<std::string> KeysOf(const std::vector<std::string>& paths) {
  KeyEncoder enc(KeyScheme::kSquidMd5);
  std::vector<std::string> keys;
  for (const std::string& p : paths) {
    const SquidKey k = enc.SquidStoreKey("http://127.0.0.1:8080/" + p);
    keys.emplace_back(k.begin(), k.end());
  }
  return keys;
}

// Store keys of tests/data/squid/sample_store_A.log: the 302 objects still cached, and the
// three it released (o1..o3.html).
std::vector<std::string> StoreKeys(bool live) {
  std::vector<std::string> paths;
  if (live) {
    for (int i = 1; i <= 5; ++i) paths.push_back("obj" + std::to_string(i) + ".txt");
    for (int i = 4; i <= 300; ++i) paths.push_back("o" + std::to_string(i) + ".html");
  } else {
    for (int i = 1; i <= 3; ++i) paths.push_back("o" + std::to_string(i) + ".html");
  }
  return KeysOf(paths);
}

// Store keys of URLs the fixture's Squid never cached.
std::vector<std::string> AbsentKeys(int n) {
  std::vector<std::string> paths;
  for (int i = 0; i < n; ++i) paths.push_back("absent" + std::to_string(i) + ".html");
  return KeysOf(paths);
}

SquidKey AsSquidKey(const std::string& bytes) {
  SquidKey k{};
  std::copy(bytes.begin(), bytes.end(), k.begin());
  return k;
}

GossipOptions SquidOptions() {
  GossipOptions o = SimCluster::DefaultOptions();
  o.key_scheme = KeyScheme::kSquidMd5;
  return o;
}

DigestImport FixtureImport(int64_t valid_for_ms, uint64_t fetched_unix_ms) {
  DigestImport in;
  in.source = kSource;
  in.source_url = kUrl;
  in.digest_bytes = ReadFixture("store_digest_A.bin");
  in.valid_for_ms = valid_for_ms;
  in.fetched_unix_ms = fetched_unix_ms;
  return in;
}

class ImportCluster : public ::testing::Test {
 protected:
  ImportCluster() : c_(sim::NetOptions(), SquidOptions()) {}

  void AddRing(int n) {
    for (int i = 0; i < n; ++i) {
      NodeSpec s;
      s.id = "node" + std::to_string(i);
      if (n > 1) s.seeds = {"node" + std::to_string((i + n - 1) % n)};
      c_.AddNode(s);
    }
    c_.RunFor(3 * kTimeout);  // membership settles
  }
  // How many of `keys` node `at`'s who-has lists the import for (marked imported).
  size_t Listed(int at, const std::vector<std::string>& keys) {
    size_t n = 0;
    for (const std::string& k : keys) {
      std::vector<PeerMatch> out;
      c_.engine(at).WhoHas(k, c_.hasher().Hash(k), c_.now(), &out);
      for (const PeerMatch& m : out) {
        if (m.node_id == kImportId && m.imported && m.endpoint == kUrl) ++n;
      }
    }
    return n;
  }
  bool AllList(const std::vector<std::string>& keys) {
    for (size_t i = 0; i < c_.size(); ++i) {
      if (Listed(static_cast<int>(i), keys) != keys.size()) return false;
    }
    return true;
  }
  // Whether node `at` lists the import for exactly the keys the digest itself reports
  // (MayContain), false positives included: the import carries the digest bit for bit.
  bool AnswersAsTheDigest(int at, const CacheDigest& digest, const std::vector<std::string>& keys) {
    for (const std::string& k : keys) {
      if ((Listed(at, {k}) == 1) != digest.MayContain(AsSquidKey(k))) return false;
    }
    return true;
  }
  bool NoneList(const std::vector<std::string>& keys) {
    for (size_t i = 0; i < c_.size(); ++i) {
      if (Listed(static_cast<int>(i), keys) != 0) return false;
    }
    return true;
  }
  const PeerInfo* ImportInfo(int at) {
    infos_ = c_.engine(at).Peers(c_.now());
    for (const PeerInfo& p : infos_) {
      if (p.node_id == kImportId) return &p;
    }
    return nullptr;
  }

  SimCluster c_;
  std::vector<PeerInfo> infos_;
  const std::vector<std::string> live_ = StoreKeys(true);
  const std::vector<std::string> released_ = StoreKeys(false);
};

TEST_F(ImportCluster, EveryNodeAnswersForTheImport) {
  AddRing(5);
  ASSERT_EQ(live_.size(), 302u);
  const Status s = c_.engine(0).ImportDigest(FixtureImport(60000, 1000), c_.now());
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(c_.RunUntilTrue([&] { return AllList(live_); }, c_.now() + 5000));
  // Beyond the live keys, every node answers exactly as the digest does: for the released
  // o1..o3.html and for URLs never cached, a node lists the import where the digest's bits
  // say "maybe" (a false positive of the digest, about 9.4 % of absent URLs) and nowhere else.
  // Comparing against the digest's own answer, not against "absent", asserts the exact state.
  CacheDigest digest;
  ASSERT_TRUE(CacheDigest::Parse(ReadFixture("store_digest_A.bin"), &digest).ok());
  std::vector<std::string> probes = AbsentKeys(1000);
  probes.insert(probes.end(), released_.begin(), released_.end());
  size_t digest_positives = 0;
  for (const std::string& k : probes) digest_positives += digest.MayContain(AsSquidKey(k));
  EXPECT_GT(digest_positives, 0u) << "the comparison must cover false positives too";
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(AnswersAsTheDigest(i, digest, probes)) << "node " << i;
  for (int i = 0; i < 5; ++i) {
    const PeerInfo* p = ImportInfo(i);
    ASSERT_NE(p, nullptr) << i;
    EXPECT_TRUE(p->imported);
    EXPECT_TRUE(p->alive);
    EXPECT_EQ(p->imported_by, "node0");
    EXPECT_EQ(p->endpoint, kUrl);
    EXPECT_EQ(p->version, 1000u);
    EXPECT_GT(p->digest_capacity, 0u);
    EXPECT_GT(p->digest_fill, 0.0);
  }
  EXPECT_EQ(c_.engine(3).stats().imports_refused, 0u);
}

TEST_F(ImportCluster, LateJoinerGetsTheImportThroughAntiEntropy) {
  AddRing(3);
  ASSERT_TRUE(c_.engine(1).ImportDigest(FixtureImport(600000, 5), c_.now()).ok());
  ASSERT_TRUE(c_.RunUntilTrue([&] { return AllList(live_); }, c_.now() + 5000));
  NodeSpec late;
  late.id = "late";
  late.seeds = {"node2"};
  const int l = c_.AddNode(late);
  EXPECT_TRUE(
      c_.RunUntilTrue([&] { return Listed(l, live_) == live_.size(); }, c_.now() + 4 * kTimeout));
}

TEST_F(ImportCluster, RefreshReplacesTheOldDigest) {
  AddRing(4);
  const std::string bytes = ReadFixture("store_digest_A.bin");
  ASSERT_TRUE(c_.engine(0).ImportDigest(FixtureImport(60000, 100), c_.now()).ok());
  ASSERT_TRUE(c_.RunUntilTrue([&] { return AllList(live_); }, c_.now() + 5000));
  // The same source now serves an empty digest (every object gone).
  DigestImport empty = FixtureImport(60000, 50);  // an earlier wall clock still replaces
  std::fill(empty.digest_bytes.begin() + kCacheDigestHeaderBytes, empty.digest_bytes.end(), 0);
  ASSERT_TRUE(c_.engine(0).ImportDigest(empty, c_.now()).ok());
  ASSERT_TRUE(c_.RunUntilTrue([&] { return NoneList(live_); }, c_.now() + 5000));
  for (int i = 0; i < 4; ++i) {
    const PeerInfo* p = ImportInfo(i);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->version, 101u) << i;
    EXPECT_EQ(p->digest_fill, 0.0) << i;
  }
}

TEST_F(ImportCluster, UnrefreshedImportExpiresEverywhere) {
  AddRing(4);
  ASSERT_TRUE(c_.engine(0).ImportDigest(FixtureImport(5000, 1), c_.now()).ok());
  ASSERT_TRUE(c_.RunUntilTrue([&] { return AllList(live_); }, c_.now() + 5000));
  const int64_t imported_at = c_.now();
  ASSERT_TRUE(c_.RunUntilTrue([&] { return NoneList(live_); }, c_.now() + 5000 + 2 * kTimeout));
  // Lifetime is valid_for + failure timeout from receipt, never less.
  EXPECT_GE(c_.now() - imported_at, 5000 + kTimeout - 100);
  c_.RunFor(2000);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(ImportInfo(i), nullptr) << i;
}

TEST_F(ImportCluster, ForgetWithdrawsEverywhere) {
  AddRing(4);
  ASSERT_TRUE(c_.engine(2).ImportDigest(FixtureImport(600000, 1), c_.now()).ok());
  ASSERT_TRUE(c_.RunUntilTrue([&] { return AllList(live_); }, c_.now() + 5000));
  c_.engine(2).ForgetImport(kSource, c_.now());
  EXPECT_EQ(Listed(2, live_), 0u);
  EXPECT_TRUE(c_.RunUntilTrue([&] { return NoneList(live_); }, c_.now() + 5000));
}

TEST_F(ImportCluster, DeadImporterTakesItsImportAway) {
  AddRing(4);
  ASSERT_TRUE(c_.engine(0).ImportDigest(FixtureImport(600000, 1), c_.now()).ok());
  ASSERT_TRUE(c_.RunUntilTrue([&] { return AllList(live_); }, c_.now() + 5000));
  c_.node(0).up = false;
  EXPECT_TRUE(
      c_.RunUntilTrue([&] { return Listed(1, live_) + Listed(2, live_) + Listed(3, live_) == 0; },
                      c_.now() + 3 * kTimeout));
}

TEST_F(ImportCluster, CorruptedDigestIsRefusedEverywhere) {
  AddRing(3);
  DigestImport bad = FixtureImport(60000, 1);
  bad.digest_bytes[21] = 3;  // hash function count must be 4
  CacheDigest d;
  const Status want = CacheDigest::Parse(bad.digest_bytes, &d);
  ASSERT_FALSE(want.ok());
  EXPECT_EQ(c_.engine(0).ImportDigest(bad, c_.now()).ToString(), want.ToString());
  // The same bytes forged onto the wire by a peer are refused and counted.
  WireHeader h;
  h.cluster_tag = ClusterTag("sim");
  h.sender_id = "node0";
  h.sender_epoch = 1;
  h.sender_heartbeat = 1000;
  ImportedDigestEntry e;
  e.origin = kImportId;
  e.importer = "node0";
  e.version = 7;
  e.lifetime_ms = 60000;
  e.source_url = kUrl;
  e.flags = kImportHasDigest;
  e.digest = bad.digest_bytes;
  std::string frame;
  ASSERT_TRUE(EncodeImportedDigestFrame(h, {e}, &frame).ok());
  const uint64_t malformed = c_.engine(1).stats().malformed_in;
  EXPECT_FALSE(c_.engine(1).OnMessage(frame, c_.now()).ok());
  EXPECT_EQ(c_.engine(1).stats().imports_refused, 1u);
  EXPECT_EQ(c_.engine(1).stats().malformed_in, malformed + 1);
  c_.RunFor(5000);
  EXPECT_TRUE(NoneList(live_));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(ImportInfo(i), nullptr) << i;
}

TEST(ImportEngine, RefusedOutsideSquidClusters) {
  GossipOptions o = SimCluster::DefaultOptions();  // raw keys
  o.node_id = "n";
  o.endpoint = "sim://n";
  GossipEngine engine(o);
  EXPECT_EQ(
      engine.ImportDigest(FixtureImport(1000, 1), 0).ToString(),
      Status::InvalidArgument("digest imports need key scheme 'squid-md5', not 'raw'").ToString());
  o.key_scheme = KeyScheme::kSquidMd5;
  GossipEngine squid(o);
  DigestImport bad_source = FixtureImport(1000, 1);
  bad_source.source = "has space:1";
  EXPECT_FALSE(squid.ImportDigest(bad_source, 0).ok());
  EXPECT_TRUE(squid.Peers(0).empty());
  EXPECT_TRUE(squid.ImportDigest(FixtureImport(1000, 1), 0).ok());
  ASSERT_EQ(squid.Peers(0).size(), 1u);
  EXPECT_TRUE(squid.Peers(0)[0].imported);
}

}  // namespace
}  // namespace peerbloom
