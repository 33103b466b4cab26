// Reading a cache_dir: the recorded Squid 5.7 cache_dir (tests/data/squid/cache_dir and its
// store.log) gives back exactly the keys store.log reports, and damaged copies of it are
// counted the way docs/squid.md says.
#include "peerbloom/squid_cache_dir.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "peerbloom/squid_store_log.h"
#include "peerbloom/squid_store_log_state.h"

namespace peerbloom {
namespace {

namespace fs = std::filesystem;

const std::string kData = std::string(PEERBLOOM_SOURCE_DIR) + "/tests/data/squid/";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// "dir file" of the store.log SWAPOUT lines (fields 3 and 4) -> the key it logged.
std::map<std::string, std::string> SwapOutKeysByFile() {
  std::map<std::string, std::string> out;
  std::istringstream log(ReadFile(kData + "cache_dir_store.log"));
  for (std::string line; std::getline(log, line);) {
    std::istringstream fields(line);
    std::string time, action, dir, file, key;
    fields >> time >> action >> dir >> file >> key;
    if (action == "SWAPOUT") out[dir + " " + file] = key;
  }
  return out;
}

std::set<std::string> LiveKeysOfStoreLog() {
  StoreLogState state;
  std::istringstream log(ReadFile(kData + "cache_dir_store.log"));
  SquidKey key;
  for (std::string line; std::getline(log, line);) (void)state.ApplyLine(line, &key);
  std::set<std::string> out;
  state.live().ForEach([&](const SquidKey& k) { out.insert(SquidKeyHex(k)); });
  return out;
}

std::set<std::string> Hex(const std::vector<CacheDirKey>& keys) {
  std::set<std::string> out;
  for (const CacheDirKey& k : keys) out.insert(SquidKeyHex(k.key));
  return out;
}

TEST(SquidCacheDirGolden, EachFileCarriesTheKeyOfItsSwapOutLine) {
  const auto logged = SwapOutKeysByFile();
  ASSERT_EQ(logged.size(), 4u);  // o1, o3, o4, o2; o2 was purged and its file removed
  CacheFileStats stats;
  std::vector<std::string> seen;
  ASSERT_TRUE(ScanCacheFiles(
                  kData + "cache_dir",
                  [&](const CacheFileObject& o) {
                    char name[16];
                    std::snprintf(name, sizeof(name), "00 %08X", o.file_number);
                    ASSERT_TRUE(logged.count(name)) << name;
                    EXPECT_EQ(SquidKeyHex(o.meta->key), logged.at(name)) << o.path;
                    EXPECT_EQ(o.file_size, 380u);
                    seen.push_back(name);
                  },
                  &stats)
                  .ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"00 00000000", "00 00000001", "00 00000002"}));
  EXPECT_EQ(stats.directories, 1u);
  EXPECT_EQ(stats.files_read, 3u);
  EXPECT_EQ(stats.objects, 3u);
  EXPECT_EQ(stats.refused + stats.incomplete + stats.private_keys + stats.vanished, 0u);
}

TEST(SquidCacheDirGolden, EverySourceEqualsTheStoreLogLiveSet) {
  const std::set<std::string> live = LiveKeysOfStoreLog();
  ASSERT_EQ(live.size(), 3u);
  for (CacheDirSource source :
       {CacheDirSource::kBoth, CacheDirSource::kFiles, CacheDirSource::kSwapState}) {
    CacheDirOptions options;
    options.source = source;
    options.want_urls = source != CacheDirSource::kSwapState;
    std::vector<CacheDirKey> keys;
    CacheDirReport report;
    ASSERT_TRUE(ReadSquidCacheDir(kData + "cache_dir", options, &keys, &report).ok());
    EXPECT_EQ(Hex(keys), live) << CacheDirSourceName(source);
    if (options.want_urls) {
      KeyEncoder encoder(KeyScheme::kSquidMd5);
      for (const CacheDirKey& k : keys) EXPECT_EQ(k.key, encoder.SquidStoreKey(k.url));
    }
  }
  CacheDirReport report;
  std::vector<CacheDirKey> keys;
  ASSERT_TRUE(ReadSquidCacheDir(kData + "cache_dir", {}, &keys, &report).ok());
  EXPECT_EQ(report.swap_state.records, 5u);
  EXPECT_EQ(report.swap_state.adds, 4u);
  EXPECT_EQ(report.swap_state.dels, 1u);
  EXPECT_EQ(report.confirmed, 3u);
  EXPECT_EQ(report.indexed_missing_file + report.indexed_other_key + report.files_not_indexed, 0u);
}

// A writable copy of the recorded cache_dir.
class SquidCacheDirCopy : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "cache_dir_test." + std::to_string(::getpid()) + "." +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::copy(kData + "cache_dir", dir_, fs::copy_options::recursive);
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string File(const std::string& name) const { return dir_ + "/00/00/" + name; }
  CacheDirReport Read(CacheDirSource source, std::set<std::string>* keys) const {
    CacheDirOptions options;
    options.source = source;
    std::vector<CacheDirKey> out;
    CacheDirReport report;
    const Status s = ReadSquidCacheDir(dir_, options, &out, &report);
    EXPECT_TRUE(s.ok()) << s.ToString();
    *keys = Hex(out);
    return report;
  }

  std::string dir_;
};

TEST_F(SquidCacheDirCopy, DamagedAndStrayFilesAreCountedNotReturned) {
  const std::string first = ReadFile(File("00000000"));
  WriteFile(File("00000010"), first.substr(0, 200));  // being written: 200 of 380 bytes
  std::string corrupt = first;
  corrupt[0] = 0x05;  // STORE_META_BAD
  WriteFile(File("00000011"), corrupt);
  WriteFile(File("00000012"), first + "x");  // longer than metadata + reply
  WriteFile(File("0000001"), first);         // not a cache file name
  WriteFile(File("swap.state"), "");         // nor this
  fs::create_directory(File("0000001F"));    // a directory with a file's name
  CacheFileStats stats;
  size_t visited = 0;
  ASSERT_TRUE(ScanCacheFiles(
                  dir_, [&](const CacheFileObject&) { ++visited; }, &stats)
                  .ok());
  EXPECT_EQ(visited, 3u);
  EXPECT_EQ(stats.objects, 3u);
  EXPECT_EQ(stats.files_read, 6u);
  EXPECT_EQ(stats.incomplete, 1u);
  EXPECT_EQ(stats.refused, 2u);
  EXPECT_EQ(stats.other_entries, 3u);
  ASSERT_EQ(stats.problems.size(), 2u);
  EXPECT_EQ(stats.problems[0].path, File("00000011"));
  EXPECT_EQ(stats.problems[0].status.message(), "swap metadata starts with byte '5', expected '3'");
  EXPECT_EQ(stats.problems[1].status.message(),
            "file of '381' bytes is longer than the '380' its metadata announces");
}

TEST_F(SquidCacheDirCopy, CrossCheckCountsEachDisagreement) {
  // o1's file is gone (index entry without a file), o3's file now holds o1's object (index
  // entry with another key), and a copy of o4 sits in a file swap.state never named.
  const std::string o1 = ReadFile(File("00000000"));
  const std::string o4 = ReadFile(File("00000002"));
  fs::remove(File("00000000"));
  WriteFile(File("00000001"), o1);
  WriteFile(File("00000020"), o4);
  std::set<std::string> keys;
  const CacheDirReport both = Read(CacheDirSource::kBoth, &keys);
  EXPECT_EQ(keys, (std::set<std::string>{"1DD3E1A888FDEC8B1196A463B3A8F35F"}));
  EXPECT_EQ(both.confirmed, 1u);
  EXPECT_EQ(both.indexed_missing_file, 1u);
  EXPECT_EQ(both.indexed_other_key, 1u);
  EXPECT_EQ(both.files_not_indexed, 2u);  // o1 in file 1, the copy of o4 in file 0x20
  EXPECT_EQ(both.files.duplicate_keys, 1u);

  const CacheDirReport files = Read(CacheDirSource::kFiles, &keys);
  EXPECT_EQ(keys, (std::set<std::string>{"2E73D09DFC743754A98DF5E8FACEF7E9",
                                         "1DD3E1A888FDEC8B1196A463B3A8F35F"}));
  EXPECT_EQ(files.files.objects, 3u);
  Read(CacheDirSource::kSwapState, &keys);
  EXPECT_EQ(keys.size(), 3u);
}

TEST_F(SquidCacheDirCopy, DirectoryErrors) {
  std::vector<CacheDirKey> keys;
  CacheDirReport report;
  Status s = ReadSquidCacheDir(dir_ + "/nope", {}, &keys, &report);
  EXPECT_EQ(s.ToString(),
            "not found: cannot open '" + dir_ + "/nope/swap.state': No such file or directory");
  CacheDirOptions files;
  files.source = CacheDirSource::kFiles;
  s = ReadSquidCacheDir(dir_ + "/nope", files, &keys, &report);
  EXPECT_EQ(s.ToString(), "not found: cannot list '" + dir_ + "/nope': No such file or directory");
  s = ReadSquidCacheDir(dir_ + "/00/00", files, &keys, &report);
  EXPECT_EQ(s.ToString(), "invalid argument: '" + dir_ +
                              "/00/00' has no subdirectories '00', '01', ...: not a ufs, aufs "
                              "or diskd cache_dir");
  WriteFile(dir_ + "/swap.state", "abc");
  s = ReadSquidCacheDir(dir_, {}, &keys, &report);
  EXPECT_EQ(s.ToString(), "corruption: '" + dir_ +
                              "/swap.state': swap.state of '3' bytes is shorter than its "
                              "'12'-byte header");
}

// swap.state replay semantics, on records made from the recorded ones.
class SwapStateReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string file = ReadFile(kData + "cache_dir/swap.state");
    header_ = file.substr(0, 72);
    for (size_t at = 72; at + 72 <= file.size(); at += 72) records_.push_back(file.substr(at, 72));
  }
  // Record i (0..4) with another op / file number, checksum kept right.
  std::string Record(size_t i, SwapLogOp op, int32_t file_number) const {
    std::string r = records_[i];
    r[0] = static_cast<char>(op);
    for (int b = 0; b < 4; ++b) r[4 + b] = static_cast<char>(uint32_t(file_number) >> (8 * b));
    uint64_t sum = uint64_t(uint32_t(file_number)) + 0 + 380;
    while (sum >> 24) sum = (sum & 0xFFFFFF) + (sum >> 24);
    const uint32_t c = static_cast<uint32_t>(~sum) & 0xFFFFFF;
    for (int b = 0; b < 3; ++b) r[1 + b] = static_cast<char>(c >> (8 * b));
    return r;
  }
  std::vector<std::string> Replay(const std::vector<std::string>& records,
                                  SwapStateStats* stats) const {
    SwapStateReplay replay;
    EXPECT_TRUE(replay.Begin(header_).ok());
    for (const std::string& r : records) replay.Apply(r);
    std::vector<std::string> out;
    for (const CacheDirEntry& e : replay.Finish()) {
      out.push_back(std::to_string(e.file_number) + ":" + SquidKeyHex(e.key).substr(0, 4));
    }
    *stats = replay.stats();
    return out;
  }

  std::string header_;
  std::vector<std::string> records_;  // ADD o1@0, ADD o3@1, ADD o4@2, ADD o2@3, DEL o2@3
};

TEST_F(SwapStateReplayTest, RecordedLog) {
  SwapStateStats s;
  EXPECT_EQ(Replay(records_, &s), (std::vector<std::string>{"0:2E73", "1:2E17", "2:1DD3"}));
  EXPECT_EQ(s.records, 5u);
  EXPECT_EQ(s.adds, 4u);
  EXPECT_EQ(s.dels, 1u);
  EXPECT_EQ(s.unmatched_dels + s.invalid + s.reused_files + s.superseded_adds, 0u);
}

TEST_F(SwapStateReplayTest, LaterRecordsWin) {
  using Op = SwapLogOp;
  SwapStateStats s;
  // o1 ADDed to file 0, then again to file 5 (no DEL between): the later ADD wins.
  EXPECT_EQ(Replay({Record(0, Op::kAdd, 0), Record(0, Op::kAdd, 5)}, &s),
            (std::vector<std::string>{"5:2E73"}));
  EXPECT_EQ(s.superseded_adds, 1u);
  // File 0 reused for o3 without a DEL of o1: the file holds o3 now.
  EXPECT_EQ(Replay({Record(0, Op::kAdd, 0), Record(1, Op::kAdd, 0)}, &s),
            (std::vector<std::string>{"0:2E17"}));
  EXPECT_EQ(s.reused_files, 1u);
  // A DEL naming another file removes the key all the same, but not a later ADD of it.
  EXPECT_EQ(Replay({Record(0, Op::kAdd, 0), Record(0, Op::kDel, 9)}, &s),
            (std::vector<std::string>{}));
  EXPECT_EQ(s.unmatched_dels, 0u);
  EXPECT_EQ(Replay({Record(0, Op::kDel, 9), Record(0, Op::kAdd, 0)}, &s),
            (std::vector<std::string>{"0:2E73"}));
  EXPECT_EQ(s.unmatched_dels, 1u);
  // Invalid records are skipped and counted; the first reason is kept.
  std::string bad = records_[0];
  bad[5] ^= 1;
  EXPECT_EQ(Replay({bad, records_[1]}, &s), (std::vector<std::string>{"1:2E17"}));
  EXPECT_EQ(s.invalid, 1u);
  ASSERT_TRUE(s.first_invalid.has_value());
  EXPECT_EQ(s.first_invalid->message(), "swap.state record checksum does not match");
  // A private ADD is ignored (flags at offset 50, outside the checksum).
  std::string priv = records_[0];
  priv[50] = static_cast<char>(kSquidFlagKeyPrivate);
  EXPECT_EQ(Replay({priv}, &s), (std::vector<std::string>{}));
  EXPECT_EQ(s.private_adds, 1u);
}

// File numbers far above the records read (2^24 - 1 here) are kept in a hash table, with the
// same meaning as the dense ones: reuse, DEL and the order of the answer.
TEST_F(SwapStateReplayTest, FarFileNumbers) {
  using Op = SwapLogOp;
  constexpr int32_t kFar = 0xFFFFFF;
  SwapStateStats s;
  EXPECT_EQ(
      Replay({Record(0, Op::kAdd, kFar), Record(1, Op::kAdd, 1), Record(2, Op::kAdd, kFar)}, &s),
      (std::vector<std::string>{"1:2E17", "16777215:1DD3"}));
  EXPECT_EQ(s.reused_files, 1u);
  EXPECT_EQ(Replay({Record(0, Op::kAdd, 70000), Record(1, Op::kAdd, 1), Record(0, Op::kDel, 70000),
                    Record(2, Op::kAdd, kFar)},
                   &s),
            (std::vector<std::string>{"1:2E17", "16777215:1DD3"}));
  EXPECT_EQ(s.unmatched_dels, 0u);
}

TEST_F(SquidCacheDirCopy, SwapStateWithAPartialLastRecord) {
  const std::string file = ReadFile(dir_ + "/swap.state");
  WriteFile(dir_ + "/swap.state", file.substr(0, file.size() - 30));  // the DEL half written
  std::vector<CacheDirEntry> live;
  SwapStateStats stats;
  ASSERT_TRUE(ReadSwapStateFile(dir_ + "/swap.state", &live, &stats).ok());
  EXPECT_EQ(live.size(), 4u);  // o2's DEL is not complete yet
  EXPECT_EQ(stats.records, 4u);
  EXPECT_EQ(stats.trailing_bytes, 42u);
}

}  // namespace
}  // namespace peerbloom
