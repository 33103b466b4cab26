// A real Squid (scripts/squid-testbed.sh) fills its cache from a local origin; its store.log,
// replayed through StoreLogState, must hold exactly the fetched keys minus the purged one,
// and its Cache Digest, fetched over HTTP and decoded, must report every one of them.
// Skipped where Squid is not installed or the test cannot start it (not root).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "peerbloom/squid_digest.h"
#include "peerbloom/squid_store_log_state.h"

namespace peerbloom {
namespace {

using Clock = std::chrono::steady_clock;

class SquidTestbed : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists("/usr/sbin/squid") || ::geteuid() != 0) {
      GTEST_SKIP() << "needs /usr/sbin/squid and root (scripts/squid-testbed.sh)";
    }
    std::string tmpl = ::testing::TempDir() + "squidbed.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    // Squid runs as 'proxy' and must reach its working directory under this one.
    std::filesystem::permissions(root_, std::filesystem::perms(0755));
    ASSERT_TRUE(ClaimAddress()) << "no free test-bed address in 127.0.0.200-249";
    started_ = true;  // stop even after a failed start: it is idempotent
    ASSERT_EQ(Run("start " + addr_), 0) << "squid did not start";
    origin_ = Capture("origin " + addr_);
    ASSERT_FALSE(origin_.empty());
  }
  // Each Squid needs its own address. Tests run in parallel processes, so an address is
  // claimed with a lock file held (flock) until the process exits.
  bool ClaimAddress() {
    for (int i = 0; i < 50; ++i) {
      const std::string addr = "127.0.0." + std::to_string(200 + (::getpid() + i) % 50);
      const int fd = ::open(("/tmp/peerbloom-testbed-" + addr + ".lock").c_str(),
                            O_CREAT | O_RDWR | O_CLOEXEC, 0600);
      if (fd < 0) continue;
      if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
        lock_fd_ = fd;
        addr_ = addr;
        return true;
      }
      ::close(fd);
    }
    return false;
  }

  void TearDown() override {
    if (started_) {
      EXPECT_EQ(Run("stop " + addr_), 0);
    }
    if (HasFailure()) {
      std::printf("keeping %s for inspection\n", root_.c_str());
    } else if (!root_.empty()) {
      std::filesystem::remove_all(root_);
    }
    if (lock_fd_ >= 0) ::close(lock_fd_);
  }

  std::string Command(const std::string& args) const {
    return "PEERBLOOM_SQUID_ROOT='" + root_ +
           "' DIGEST_PERIOD=3 CACHE_MB=" + std::to_string(cache_mb_) + " FILL_QUERY='" +
           fill_query_ + "' '" PEERBLOOM_SOURCE_DIR "/scripts/squid-testbed.sh' " + args;
  }
  int Run(const std::string& args) const { return std::system(Command(args).c_str()); }
  std::string Capture(const std::string& args) const {
    std::string out;
    FILE* p = ::popen(Command(args).c_str(), "r");
    if (p == nullptr) return out;
    char buf[256];
    while (std::fgets(buf, sizeof(buf), p) != nullptr) out += buf;
    ::pclose(p);
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }
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
    if (std::system(cmd.c_str()) != 0) return false;
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

  int lock_fd_ = -1;
  int cache_mb_ = 64;
  std::string fill_query_;
  std::string root_, addr_, origin_;
  bool started_ = false;
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
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  std::set<SquidKey> live;
  while ((live = LiveKeysInStoreLog()) != expected && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(live, expected);

  // The digest is rebuilt every DIGEST_PERIOD seconds: poll until it covers the objects.
  const auto digest_deadline = Clock::now() + std::chrono::seconds(90);
  CacheDigest digest;
  size_t covered = 0;
  while (Clock::now() < digest_deadline) {
    covered = 0;
    if (FetchDigest(&digest)) {
      for (const SquidKey& k : expected) covered += digest.MayContain(k);
    }
    if (covered == expected.size()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
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
    cache_mb_ = 10;
    fill_query_ = "?bytes=500000";
    SquidTestbed::SetUp();
  }
};

// 60 objects of 500 kB through a 10 MB cache_dir: Squid evicts (RELEASE of public keys) and
// refuses some writes (SO_FAIL). The live set must end equal to the files on disk.
TEST_F(SquidTestbedSmallCache, EvictionsAreReleasesOfLiveKeys) {
  ASSERT_EQ(Run("fill " + addr_ + " 60"), 0);
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  StoreLogCounters c;
  size_t live = 0, files = 0;
  do {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    files = FilesOnDisk();
    live = LiveKeysInStoreLog(&c).size();
    // Squid's store maintenance evicts down to cache_swap_low about once a second.
  } while ((live != files || c.adds + c.swapout_failures < 60 || c.removes == 0) &&
           Clock::now() < deadline);
  EXPECT_EQ(live, files);
  EXPECT_GT(c.removes, 0u) << "no eviction happened: the test proves nothing";
  EXPECT_LT(files, 60u);
  std::printf("swapouts %llu, evictions %llu, swapout failures %llu, on disk %zu\n",
              static_cast<unsigned long long>(c.adds), static_cast<unsigned long long>(c.removes),
              static_cast<unsigned long long>(c.swapout_failures), files);
}

}  // namespace
}  // namespace peerbloom
