// A real Squid (scripts/squid-testbed.sh) fills its cache from a local origin; its store.log,
// replayed through StoreLogState, must hold exactly the fetched keys minus the purged one,
// and its Cache Digest, fetched over HTTP and decoded, must report every one of them.
// Skipped where Squid is not installed or the test cannot start it (not root).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>

#include "peerbloom/squid_digest.h"
#include "peerbloom/squid_store_log_state.h"
#include "tests/support/process.h"
#include "tests/support/squid_testbed.h"
#include "tests/support/wait.h"

namespace peerbloom {
namespace {

class SquidTestbed : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = testing::SquidTestbed::SkipReason(); !why.empty())
      GTEST_SKIP() << why;
    const std::string failed = bed_.Start(options_);
    ASSERT_TRUE(failed.empty()) << failed;
    root_ = bed_.root();
    addr_ = bed_.addr();
    origin_ = bed_.origin();
  }
  void TearDown() override { bed_.Stop(/*keep_files=*/HasFailure()); }

  int Run(const std::string& args) const { return bed_.Run(args); }
  std::string Capture(const std::string& args) const { return bed_.Capture(args); }
  std::string ReadFile(const std::string& path) const {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::set<SquidKey> LiveKeysInStoreLog(StoreLogCounters* counters = nullptr) const {
    StoreLogState state;
    std::istringstream log(ReadFile(root_ + "/" + addr_ + "/logs/store.log"));
    SquidKey key;
    for (std::string line; std::getline(log, line);) {
      EXPECT_NE(state.ApplyLine(line, &key), StoreLogDecision::kMalformed) << line;
    }
    if (counters != nullptr) *counters = state.counters();
    std::set<SquidKey> keys;
    state.live().ForEach([&](const SquidKey& k) { keys.insert(k); });
    return keys;
  }
  // Fetches and decodes the digest; false when it cannot be fetched or does not decode.
  bool FetchDigest(CacheDigest* out) const {
    const std::string file = root_ + "/digest.bin";
    const std::string cmd = "curl -sf -o '" + file + "' " + Capture("digest-url " + addr_);
    if (testing::RunShell(cmd).exit_code != 0) return false;
    const Status s = CacheDigest::Parse(ReadFile(file), out);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return s.ok();
  }

  // Files in the ufs cache_dir: one per object on disk (swap.state aside).
  size_t FilesOnDisk() const {
    size_t n = 0;
    for (const auto& e :
         std::filesystem::recursive_directory_iterator(root_ + "/" + addr_ + "/cache")) {
      n += e.is_regular_file() && e.path().filename().string().rfind("swap.state", 0) != 0;
    }
    return n;
  }

  testing::SquidTestbedOptions options_;
  testing::SquidTestbed bed_;
  std::string root_, addr_, origin_;
};

TEST_F(SquidTestbed, StoreLogAndDigestDescribeTheCache) {
  constexpr int kObjects = 60;
  ASSERT_EQ(Run("fill " + addr_ + " " + std::to_string(kObjects)), 0);
  ASSERT_EQ(Run("purge " + addr_ + " " + origin_ + "/o3.html"), 0);
  KeyEncoder encoder(KeyScheme::kSquidMd5);
  std::set<SquidKey> expected;
  for (int i = 1; i <= kObjects; ++i) {
    if (i != 3)
      expected.insert(encoder.SquidStoreKey(origin_ + "/o" + std::to_string(i) + ".html"));
  }
  // Squid writes store.log lines as it goes; poll until they are all there.
  std::set<SquidKey> live;
  testing::WaitFor([&] { return (live = LiveKeysInStoreLog()) == expected; },
                   std::chrono::seconds(60), std::chrono::milliseconds(100));
  EXPECT_EQ(live, expected);

  // The digest is rebuilt every DIGEST_PERIOD seconds: poll until it covers the objects.
  CacheDigest digest;
  size_t covered = 0;
  testing::WaitFor(
      [&] {
        covered = 0;
        if (FetchDigest(&digest)) {
          for (const SquidKey& k : expected) covered += digest.MayContain(k);
        }
        return covered == expected.size();
      },
      std::chrono::seconds(90), std::chrono::milliseconds(500));
  EXPECT_EQ(covered, expected.size()) << "the digest never reported every stored object";
  EXPECT_EQ(digest.header().version_current, 5);
  EXPECT_GE(digest.header().count, expected.size());
  std::printf("digest: capacity %u, count %u, mask %u bytes, fill %.3f, est. fpr %.4f\n",
              digest.header().capacity, digest.header().count, digest.header().mask_size,
              digest.fill(), digest.EstimatedFalsePositiveRate());
}

class SquidTestbedSmallCache : public SquidTestbed {
 protected:
  void SetUp() override {
    options_.cache_mb = 10;
    options_.fill_query = "?bytes=500000";
    SquidTestbed::SetUp();
  }
};

// 60 objects of 500 kB through a 10 MB cache_dir: Squid evicts (RELEASE of public keys) and
// refuses some writes (SO_FAIL). The live set must end equal to the files on disk.
TEST_F(SquidTestbedSmallCache, EvictionsAreReleasesOfLiveKeys) {
  ASSERT_EQ(Run("fill " + addr_ + " 60"), 0);
  StoreLogCounters c;
  size_t live = 0, files = 0;
  // Squid's store maintenance evicts down to cache_swap_low about once a second.
  testing::WaitFor(
      [&] {
        files = FilesOnDisk();
        live = LiveKeysInStoreLog(&c).size();
        return live == files && c.adds + c.swapout_failures >= 60 && c.removes != 0;
      },
      std::chrono::seconds(60), std::chrono::milliseconds(200));
  EXPECT_EQ(live, files);
  EXPECT_GT(c.removes, 0u) << "no eviction happened: the test proves nothing";
  EXPECT_LT(files, 60u);
  std::printf("swapouts %llu, evictions %llu, swapout failures %llu, on disk %zu\n",
              static_cast<unsigned long long>(c.adds), static_cast<unsigned long long>(c.removes),
              static_cast<unsigned long long>(c.swapout_failures), files);
}

}  // namespace
}  // namespace peerbloom
