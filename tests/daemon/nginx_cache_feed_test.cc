// NginxCacheFeed over a real directory and the kernel's inotify: the live set (the feed's
// files and the filter's counters) equals the cache files present after a start scan, adds by
// rename as nginx makes them, adds in level directories made after the start, deletions,
// Vary variants, temporary and foreign names, files shorter than their header, a restart on a
// saved set with files added and evicted while down, and an event queue overflow. The files
// are written as nginx 1.22 writes them (header version 5, the KEY line at its offset); the
// real nginx is in tests/integration/nginx_cluster_test.cc.
#include "daemon/feeds/nginx_cache_feed.h"

#include <gtest/gtest.h>
#include <stdio.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "daemon/store/local_store.h"
#include "peerbloom/md5.h"
#include "peerbloom/nginx_cache.h"
#include "tests/support/wait.h"

namespace peerbloom::daemon {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// sizeof(ngx_http_file_cache_header_t) on 64-bit nginx 1.22 (version 5).
constexpr size_t kHeaderBytes = 336;

// What nginx writes for `key`: the binary header, "\nKEY: key\n", the response head, a body.
std::string CacheFileBytes(const std::string& key, const std::string& body = "hello") {
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
                           "\r\nCache-Control: max-age=60\r\n\r\n";
  std::string out(kHeaderBytes, '\0');
  const uint64_t version = 5;
  std::memcpy(out.data(), &version, sizeof(version));
  const uint16_t header_start = static_cast<uint16_t>(kHeaderBytes + 6 + key.size() + 1);
  const uint16_t body_start = static_cast<uint16_t>(header_start + head.size());
  std::memcpy(out.data() + 54, &header_start, 2);  // after crc32 and valid_msec
  std::memcpy(out.data() + 56, &body_start, 2);
  out += "\nKEY: " + key + "\n" + head + body;
  return out;
}

NginxKey Name(const std::string& key) { return NginxKeyOf(key); }

class NginxCacheFeedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/pb-nginx-feed-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    LocalStoreOptions o;
    o.node_id = "n";
    o.capacity = 100000;
    o.key_scheme = KeyScheme::kNginxMd5;
    ASSERT_TRUE(LocalStore::Create(o, &store_).ok());
    config_.path = root_;
    config_.format = "nginx-cache";
    config_.levels = "1:2";
    config_.rescan_interval_ms = 0;
  }
  void TearDown() override { fs::remove_all(root_); }

  std::unique_ptr<NginxCacheFeed> NewFeed() { return std::make_unique<NginxCacheFeed>(config_); }

  // nginx's way (use_temp_path=off): a temporary file "<name>.<ten digits>" beside its final
  // name, renamed to it.
  std::string Put(const std::string& key, const std::string& name_key = "") {
    const NginxKey name = Name(name_key.empty() ? key : name_key);
    const std::string path = NginxCacheFilePath(root_, {1, 2}, name);
    fs::create_directories(fs::path(path).parent_path());
    char digits[16];
    std::snprintf(digits, sizeof(digits), ".%010d", ++temp_counter_);
    const std::string temp = path + digits;
    std::ofstream(temp, std::ios::binary) << CacheFileBytes(key);
    fs::rename(temp, path);
    return path;
  }
  void Evict(const std::string& key) { fs::remove(NginxCacheFilePath(root_, {1, 2}, Name(key))); }

  // Polls until `done` holds, 10 s at most.
  bool PollUntil(NginxCacheFeed* feed, const std::function<bool()>& done) {
    return testing::WaitFor(
        [&] {
          while (feed->Poll(store_.get(), ++now_)) {
          }
          return done();
        },
        milliseconds(10000), milliseconds(5));
  }
  bool Settled(NginxCacheFeed* feed) {
    return PollUntil(feed, [feed] { return !feed->stats().scanning && feed->stats().scans > 0; });
  }

  // The live set equals `keys` exactly: each file counted under its key, nothing else, and the
  // filter's counters added and removed as often as the set changed.
  void ExpectExactly(NginxCacheFeed* feed, const std::set<std::string>& keys) {
    EXPECT_EQ(feed->stats().files, keys.size());
    for (const std::string& k : keys) {
      NginxKey key;
      EXPECT_TRUE(feed->Holds(Name(k), &key)) << k;
      EXPECT_EQ(key, Name(k)) << k;
      EXPECT_TRUE(
          store_->Contains(std::string_view(reinterpret_cast<const char*>(key.data()), key.size())))
          << k;
    }
    EXPECT_EQ(feed->stats().adds - feed->stats().removes, keys.size());
  }

  std::string root_;
  FeedConfig config_;
  std::unique_ptr<LocalStore> store_;
  int64_t now_ = 1000;
  int temp_counter_ = 0;
};

TEST_F(NginxCacheFeedTest, TheStartScanCountsTheFilesPresent) {
  std::set<std::string> keys;
  for (int i = 0; i < 300; ++i) {
    keys.insert("http://origin/start/" + std::to_string(i));
    Put("http://origin/start/" + std::to_string(i));
  }
  auto feed = NewFeed();
  ASSERT_TRUE(Settled(feed.get()));
  ExpectExactly(feed.get(), keys);
  EXPECT_EQ(feed->stats().drift_added + feed->stats().drift_removed, 0u);
  EXPECT_GE(feed->stats().watches, 2u);  // the root and the level directories
}

// nginx's default is no levels: every file in one directory. The scan still reads it in
// slices, the loop turning between them.
TEST_F(NginxCacheFeedTest, AScanOfOneLargeDirectoryIsReadInSlices) {
  config_.levels = "";
  std::set<std::string> keys;
  const size_t n = 2 * NginxCacheFeed::kScanEntriesPerPoll + 100;
  for (size_t i = 0; i < n; ++i) {
    const std::string k = "http://origin/flat/" + std::to_string(i);
    std::ofstream(NginxCacheFilePath(root_, {}, Name(k)), std::ios::binary)
        << CacheFileBytes(k, "");
    keys.insert(k);
  }
  auto feed = NewFeed();
  EXPECT_TRUE(feed->Poll(store_.get(), ++now_));  // more to read
  EXPECT_TRUE(feed->stats().scanning);
  EXPECT_EQ(feed->stats().files, NginxCacheFeed::kScanEntriesPerPoll);
  EXPECT_EQ(feed->NextDeadline(now_), now_);
  ASSERT_TRUE(Settled(feed.get()));
  ExpectExactly(feed.get(), keys);
}

TEST_F(NginxCacheFeedTest, EventsFollowAddsEvictionsAndNewLevelDirectories) {
  Put("http://origin/before");
  auto feed = NewFeed();
  ASSERT_TRUE(Settled(feed.get()));
  std::set<std::string> keys = {"http://origin/before"};
  // Enough keys that most land in level directories made after the start.
  for (int i = 0; i < 500; ++i) {
    const std::string k = "http://origin/after/" + std::to_string(i);
    Put(k);
    keys.insert(k);
  }
  ASSERT_TRUE(PollUntil(feed.get(), [&] { return feed->stats().files == keys.size(); }))
      << feed->stats().files;
  ExpectExactly(feed.get(), keys);
  for (int i = 0; i < 500; i += 2) {
    const std::string k = "http://origin/after/" + std::to_string(i);
    Evict(k);
    keys.erase(k);
  }
  ASSERT_TRUE(PollUntil(feed.get(), [&] { return feed->stats().files == keys.size(); }));
  ExpectExactly(feed.get(), keys);
  // A scan now finds what the events said.
  feed->RequestScan("test");
  ASSERT_TRUE(PollUntil(feed.get(), [&] { return feed->stats().scans == 2; }));
  EXPECT_EQ(feed->stats().drift_added, 0u);
  EXPECT_EQ(feed->stats().drift_removed, 0u);
  ExpectExactly(feed.get(), keys);
}

TEST_F(NginxCacheFeedTest, VariantsCountForTheirKeyAndOtherNamesAreIgnored) {
  auto feed = NewFeed();
  ASSERT_TRUE(Settled(feed.get()));
  const std::string key = "http://origin/vary";
  Put(key);
  // A Vary variant: another name, the same KEY line.
  const std::string variant = Put(key, "variant of " + key);
  // Not cache files: a temporary name, upper-case hex, a stray file in the root.
  const fs::path dir = fs::path(variant).parent_path();
  std::ofstream(dir / (NginxKeyHex(Name("http://origin/temp")) + ".0000000042"))
      << CacheFileBytes("http://origin/temp");
  std::ofstream(dir / "0000000043") << CacheFileBytes("http://origin/temp2");  // proxy_temp_path
  std::ofstream(dir / NginxKeyHex(Name("http://origin/upper")).substr(0, 31).append("X"))
      << CacheFileBytes("http://origin/upper");
  std::ofstream(fs::path(root_) / "README") << "not a cache file\n";
  ASSERT_TRUE(PollUntil(feed.get(), [&] { return feed->stats().files == 2; }));
  EXPECT_TRUE(feed->Holds(Name(key)));
  NginxKey of_variant;
  EXPECT_TRUE(feed->Holds(Name("variant of " + key), &of_variant));
  EXPECT_EQ(of_variant, Name(key));
  EXPECT_EQ(feed->NamesOf(Name(key)).size(), 2u);
  EXPECT_EQ(feed->PurgePaths(std::string_view(reinterpret_cast<const char*>(Name(key).data()), 16))
                .size(),
            2u);
  // Two files of one key: the counters hold it twice, and lose it once per file.
  EXPECT_EQ(feed->stats().adds, 2u);
  fs::remove(variant);
  ASSERT_TRUE(PollUntil(feed.get(), [&] { return feed->stats().files == 1; }));
  EXPECT_EQ(feed->NamesOf(Name(key)), std::vector<NginxKey>{Name(key)});
  EXPECT_TRUE(
      store_->Contains(std::string_view(reinterpret_cast<const char*>(Name(key).data()), 16)));
  EXPECT_GE(feed->stats().ignored, 1u);
}

TEST_F(NginxCacheFeedTest, AFileShorterThanItsHeaderIsReadAgainUntilWhole) {
  auto feed = NewFeed();
  ASSERT_TRUE(Settled(feed.get()));
  const std::string key = "http://origin/slow";
  const std::string path = NginxCacheFilePath(root_, {1, 2}, Name(key));
  fs::create_directories(fs::path(path).parent_path());
  ASSERT_TRUE(PollUntil(feed.get(), [&] { return feed->stats().watches >= 3; }));
  const std::string bytes = CacheFileBytes(key);
  std::ofstream(path, std::ios::binary) << bytes.substr(0, 100);  // written in place, cut short
  ASSERT_TRUE(PollUntil(feed.get(), [&] { return feed->stats().retries >= 1; }));
  EXPECT_EQ(feed->stats().files, 0u);
  std::ofstream(path, std::ios::binary | std::ios::app) << bytes.substr(100);
  ASSERT_TRUE(PollUntil(feed.get(), [&] { return feed->stats().files == 1; }));
  EXPECT_TRUE(feed->Holds(Name(key)));
}

TEST_F(NginxCacheFeedTest, ARestartKeepsTheSavedSetAndCatchesUpWithWhatChangedWhileDown) {
  std::set<std::string> keys;
  for (int i = 0; i < 100; ++i) {
    keys.insert("http://origin/r/" + std::to_string(i));
    Put("http://origin/r/" + std::to_string(i));
  }
  Put("http://origin/r/50", "variant of r/50");  // a Vary variant, kept while down
  FeedPosition saved;
  {
    auto feed = NewFeed();
    ASSERT_TRUE(Settled(feed.get()));
    saved = feed->position();
  }
  // While the daemon is down: 30 evicted, 20 added.
  for (int i = 0; i < 30; ++i) {
    Evict("http://origin/r/" + std::to_string(i));
    keys.erase("http://origin/r/" + std::to_string(i));
  }
  for (int i = 100; i < 120; ++i) {
    Put("http://origin/r/" + std::to_string(i));
    keys.insert("http://origin/r/" + std::to_string(i));
  }
  auto feed = NewFeed();
  ASSERT_TRUE(feed->Restore(saved, 1000).ok());
  EXPECT_EQ(feed->stats().files, 101u);
  // A purge of the key finds both files from the restored set.
  EXPECT_EQ(feed->NamesOf(Name("http://origin/r/50")).size(), 2u);
  ASSERT_TRUE(Settled(feed.get()));
  // The counters of the saved 101 came from the snapshot, not from this feed.
  EXPECT_EQ(feed->stats().files, keys.size() + 1);
  EXPECT_EQ(feed->stats().adds, 20u);
  EXPECT_EQ(feed->stats().removes, 30u);
  for (const std::string& k : keys) EXPECT_TRUE(feed->Holds(Name(k))) << k;
  // Caught up, not drift: the first scan compares with a saved set.
  EXPECT_EQ(feed->stats().drift_added + feed->stats().drift_removed, 0u);

  FeedPosition bad = saved;
  bad.state.resize(bad.state.size() - 3);
  EXPECT_FALSE(NewFeed()->Restore(bad, 1000).ok());
  EXPECT_FALSE(NewFeed()->Restore(saved, 10).ok());  // more files than the bound
}

TEST_F(NginxCacheFeedTest, AnOverflowedEventQueueIsRepairedByAScan) {
  config_.levels = "";  // every file in the root: one directory, one watch
  auto feed = NewFeed();
  ASSERT_TRUE(Settled(feed.get()));
  // More events than the kernel queues (fs.inotify.max_queued_events, 16384 by default), made
  // while the feed does not read.
  std::ifstream limit_file("/proc/sys/fs/inotify/max_queued_events");
  size_t limit = 16384;
  limit_file >> limit;
  if (limit > 100000) GTEST_SKIP() << "max_queued_events is " << limit;
  const size_t n = limit / 2 + 100;  // each file: IN_CLOSE_WRITE of the temp, IN_MOVED_*
  std::set<std::string> keys;
  for (size_t i = 0; i < n; ++i) {
    const std::string k = "http://origin/o/" + std::to_string(i);
    const std::string path = NginxCacheFilePath(root_, {}, Name(k));
    std::ofstream(path + ".0000000001", std::ios::binary) << CacheFileBytes(k, "");
    fs::rename(path + ".0000000001", path);
    keys.insert(k);
  }
  ASSERT_TRUE(PollUntil(feed.get(), [&] {
    return feed->stats().overflows >= 1 && !feed->stats().scanning && feed->stats().scans >= 2;
  })) << feed->stats().overflows;
  ExpectExactly(feed.get(), keys);
}

}  // namespace
}  // namespace peerbloom::daemon
