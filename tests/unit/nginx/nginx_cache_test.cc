// nginx cache files: names, levels, paths and the header, against files real nginx 1.22.1
// wrote (tests/data/nginx/README.md says how) and against headers built here to break rules.
#include "peerbloom/nginx_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace peerbloom {
namespace {

namespace fs = std::filesystem;

// One file nginx wrote: what was asked, and where nginx put the answer (levels=1:2).
struct Fixture {
  const char* file;  // in tests/data/nginx/
  const char* key;   // its KEY line
  const char* path;  // where nginx put it under the cache root
};

constexpr char kPlainKey[] = "http://127.0.0.1:38172/plain.txt";
constexpr char kVaryKey[] = "http://127.0.0.1:38172/vary.txt";
const Fixture kFixtures[] = {
    {"plain.cache", kPlainKey, "4/7a/e17bb66e9108123f0a69ed2223aca7a4"},
    {"query.cache",
     "http://127.0.0.1:38172/search?q=nginx+cache&lang=en&page=2&sort=relevance&filter=all"
     "&size=small&session=0123456789abcdef0123456789abcdef",
     "4/bc/ccfb55a890eec7c1e03f7a746702fbc4"},
    {"escaped-path.cache", "http://127.0.0.1:38172/dir%20with%20space/caf%C3%A9.txt",
     "f/5d/2e30de9bdeabcf2ec2bd241ca58575df"},
    {"vary-main.cache", kVaryKey, "9/b2/a379b9dfda459e814fb70b1f8cbfdb29"},
    // The variant for "Accept-Encoding: gzip": another name, the same KEY line.
    {"vary-variant.cache", kVaryKey, "f/9a/1dab47953fe77abe1afab66fe43dd9af"},
    // proxy_cache_key $scheme$proxy_host$request_uri, written out.
    {"documented-default-key.cache", "http127.0.0.1:38172/explicit/plain.txt?a=1",
     "a/4d/de85c6a18a9228fae014b09a68b264da"},
};

std::string FixturePath(const Fixture& f) {
  return std::string(PEERBLOOM_SOURCE_DIR) + "/tests/data/nginx/" + f.file;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// A head as nginx 1.22 lays it out: the 336-byte header (version, header_start), the KEY
// line, a response head.
std::string Head(std::string_view key, uint64_t version = kNginxCacheVersion,
                 size_t header_start = 0) {
  if (header_start == 0) header_start = kNginxHeaderBytes + 6 + key.size() + 1;
  std::string out(kNginxHeaderBytes, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>(version >> (8 * i));
  out[54] = static_cast<char>(header_start & 0xff);
  out[55] = static_cast<char>(header_start >> 8);
  out += "\nKEY: ";
  out += key;
  out += "\nHTTP/1.1 200 OK\r\n\r\nbody";
  return out;
}

NginxFileState Parse(std::string_view head, std::string* key, std::string* why) {
  return ParseNginxCacheHeader(head, key, why);
}

TEST(NginxFileName, ExactlyThirtyTwoLowerCaseHexDigits) {
  NginxKey key;
  ASSERT_TRUE(ParseNginxCacheFileName("e17bb66e9108123f0a69ed2223aca7a4", &key));
  EXPECT_EQ(key, NginxKeyOf(kPlainKey));
  EXPECT_EQ(NginxKeyHex(key), "e17bb66e9108123f0a69ed2223aca7a4");

  NginxKey sentinel;
  sentinel.fill(0x5a);
  const std::string hex = "0123456789abcdef0123456789abcdef";
  const std::string not_names[] = {
      "0123456789ABCDEF0123456789ABCDEF",  // nginx writes lower case
      hex.substr(0, 31),                   // 31
      hex + "0",                           // 33
      "",
      "0000000001",             // a temporary file under proxy_temp_path
      hex + ".0000000007",      // a temporary file beside it (use_temp_path=off)
      hex.substr(0, 31) + "g",  // not hex
      hex.substr(0, 31) + "~",  // an editor's backup
      "." + hex.substr(1),
  };
  for (const std::string& name : not_names) {
    NginxKey out = sentinel;
    EXPECT_FALSE(ParseNginxCacheFileName(name, &out)) << name;
    EXPECT_EQ(out, sentinel) << name;
  }
}

TEST(NginxFileName, HexRoundTripsEveryByte) {
  for (int first = 0; first < 256; first += 16) {
    NginxKey key;
    for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<uint8_t>(first + i);
    NginxKey back{};
    ASSERT_TRUE(ParseNginxCacheFileName(NginxKeyHex(key), &back)) << NginxKeyHex(key);
    EXPECT_EQ(back, key);
  }
}

TEST(NginxLevels, OneToThreeLevelsOfOneOrTwo) {
  const std::pair<const char*, std::vector<int>> good[] = {
      {"", {}},        {"1", {1}},           {"2", {2}},           {"1:2", {1, 2}},
      {"2:2", {2, 2}}, {"1:1:1", {1, 1, 1}}, {"2:2:2", {2, 2, 2}}, {"2:1:2", {2, 1, 2}},
  };
  for (const auto& [text, want] : good) {
    std::vector<int> levels = {9};
    ASSERT_TRUE(ParseNginxLevels(text, &levels).ok()) << text;
    EXPECT_EQ(levels, want) << text;
  }
  for (const char* bad : {"0", "3", "1:", ":1", "1::2", "1:2:1:2", "12", "1:3", "a", " 1", "1 ",
                          "1,2", "-1", "1:2:"}) {
    std::vector<int> levels = {9};
    const Status s = ParseNginxLevels(bad, &levels);
    EXPECT_TRUE(s.IsInvalidArgument()) << bad;
    EXPECT_EQ(s.message(), "levels '" + std::string(bad) +
                               "' must be 1 to 3 levels of 1 or 2 digits joined by ':'");
    EXPECT_EQ(levels, std::vector<int>{9}) << bad;
  }
}

TEST(NginxLevels, PathsTakeTheLevelsFromTheEndOfTheName) {
  NginxKey key;
  ASSERT_TRUE(ParseNginxCacheFileName("0123456789abcdef0123456789abcdef", &key));
  const std::string hex = NginxKeyHex(key);
  EXPECT_EQ(NginxCacheFilePath("/c", {}, key), "/c/" + hex);
  EXPECT_EQ(NginxCacheFilePath("/c", {1}, key), "/c/f/" + hex);
  EXPECT_EQ(NginxCacheFilePath("/c", {2}, key), "/c/ef/" + hex);
  EXPECT_EQ(NginxCacheFilePath("/c", {1, 2}, key), "/c/f/de/" + hex);
  EXPECT_EQ(NginxCacheFilePath("/c/", {1, 2}, key), "/c/f/de/" + hex);
  EXPECT_EQ(NginxCacheFilePath("/c", {2, 2, 2}, key), "/c/ef/cd/ab/" + hex);
  EXPECT_EQ(NginxCacheFilePath("/c", {1, 1, 2}, key), "/c/f/e/cd/" + hex);
}

// Where nginx put the files of tests/data/nginx (proxy_cache_path ... levels=1:2).
TEST(NginxLevels, PathsAreWhereNginxPutTheFixtures) {
  for (const Fixture& f : kFixtures) {
    const std::string name = fs::path(f.path).filename();
    NginxKey key;
    ASSERT_TRUE(ParseNginxCacheFileName(name, &key)) << name;
    EXPECT_EQ(NginxCacheFilePath("/var/cache/nginx", {1, 2}, key),
              std::string("/var/cache/nginx/") + f.path);
  }
}

TEST(NginxHeader, RealFilesGiveTheirKey) {
  for (const Fixture& f : kFixtures) {
    const std::string bytes = ReadAll(FixturePath(f));
    ASSERT_GT(bytes.size(), kNginxHeaderBytes) << f.file;
    std::string key, why = "stale";
    ASSERT_EQ(Parse(bytes, &key, &why), NginxFileState::kValid) << f.file << ": " << why;
    EXPECT_EQ(key, f.key) << f.file;
    EXPECT_EQ(why, "");
    // The response head starts right after the KEY line.
    EXPECT_EQ(bytes.compare(kNginxHeaderBytes + 6 + key.size() + 1, 9, "HTTP/1.1 "), 0);
  }
}

TEST(NginxHeader, TheNameIsTheMd5OfTheKeyExceptForAVaryVariant) {
  for (const Fixture& f : kFixtures) {
    const std::string name = fs::path(f.path).filename();
    if (std::string_view(f.file) == "vary-variant.cache") {
      EXPECT_NE(NginxKeyHex(NginxKeyOf(f.key)), name);
    } else {
      EXPECT_EQ(NginxKeyHex(NginxKeyOf(f.key)), name) << f.file;
    }
  }
}

// Every prefix: kPartial while the KEY line is incomplete, then the key; never another key,
// never kForeign.
TEST(NginxHeader, EveryPrefixIsPartialUntilTheKeyLineIsWhole) {
  for (const Fixture& f : kFixtures) {
    const std::string bytes = ReadAll(FixturePath(f));
    const size_t header_start = kNginxHeaderBytes + 6 + std::strlen(f.key) + 1;
    for (size_t n = 0; n <= bytes.size(); ++n) {
      std::string key = "unset", why;
      const NginxFileState state = Parse(std::string_view(bytes).substr(0, n), &key, &why);
      if (n < header_start) {
        ASSERT_EQ(state, NginxFileState::kPartial) << f.file << " at " << n;
        EXPECT_EQ(key, "unset");
        EXPECT_FALSE(why.empty());
      } else {
        ASSERT_EQ(state, NginxFileState::kValid) << f.file << " at " << n << ": " << why;
        EXPECT_EQ(key, f.key);
      }
    }
  }
  std::string key, why;
  EXPECT_EQ(Parse(std::string(100, '\0').replace(0, 1, "\x05"), &key, &why),
            NginxFileState::kPartial);
  EXPECT_EQ(why, "'100' bytes, fewer than the '343' the header and KEY line take");
}

TEST(NginxHeader, AnotherVersionIsForeign) {
  const std::string good = ReadAll(FixturePath(kFixtures[0]));
  for (uint64_t version :
       {uint64_t{0}, uint64_t{4}, uint64_t{6}, uint64_t{5} << 32, uint64_t{0x0500000000000000}}) {
    std::string bytes = good;
    for (int i = 0; i < 8; ++i)
      bytes[static_cast<size_t>(i)] = static_cast<char>(version >> (8 * i));
    std::string key = "unset", why;
    EXPECT_EQ(Parse(bytes, &key, &why), NginxFileState::kForeign) << version;
    EXPECT_EQ(why, "header version '" + std::to_string(version) + "', not '5'");
    EXPECT_EQ(key, "unset");
    // Known as soon as the version is there.
    EXPECT_EQ(Parse(std::string_view(bytes).substr(0, 8), &key, &why), NginxFileState::kForeign);
  }
}

TEST(NginxHeader, NoKeyLineAtItsOffsetIsForeign) {
  const std::string good = ReadAll(FixturePath(kFixtures[0]));
  for (size_t at = kNginxHeaderBytes; at < kNginxHeaderBytes + 6; ++at) {
    std::string bytes = good;
    bytes[at] = 'x';
    std::string key, why;
    EXPECT_EQ(Parse(bytes, &key, &why), NginxFileState::kForeign) << at;
    EXPECT_EQ(why, "no 'KEY: ' line at offset '336'");
  }
  // A KEY line elsewhere (a 32-bit nginx's shorter header) is not looked for.
  std::string shifted = good;
  shifted.erase(300, 8);
  std::string key, why;
  EXPECT_EQ(Parse(shifted, &key, &why), NginxFileState::kForeign);
}

TEST(NginxHeader, TheKeyEndsWhereHeaderStartSays) {
  std::string key, why;
  // A key holding '\n' ($uri decodes %0A): header_start still bounds it.
  const std::string odd = "http://o/a\nb";
  ASSERT_EQ(Parse(Head(odd), &key, &why), NginxFileState::kValid) << why;
  EXPECT_EQ(key, odd);
  ASSERT_EQ(Parse(Head(""), &key, &why), NginxFileState::kValid) << why;
  EXPECT_EQ(key, "");
  // header_start not just past a '\n'.
  EXPECT_EQ(Parse(Head("http://o/a", 5, 336 + 6 + 5), &key, &why), NginxFileState::kForeign);
  EXPECT_EQ(why, "the KEY line does not end at header start '347'");
  EXPECT_EQ(Parse(Head("http://o/a", 5, 342), &key, &why), NginxFileState::kForeign);
  EXPECT_EQ(why, "header start '342' leaves no room for the KEY line");
  EXPECT_EQ(Parse(Head("http://o/a", 5, 0xffff), &key, &why), NginxFileState::kForeign);
  EXPECT_EQ(why, "key of '65192' bytes exceeds the limit of '16384'");
}

TEST(NginxHeader, KeysUpToTheBound) {
  std::string key, why;
  const std::string longest(kNginxMaxKeyBytes, 'k');
  ASSERT_EQ(Parse(Head(longest), &key, &why), NginxFileState::kValid) << why;
  EXPECT_EQ(key, longest);
  EXPECT_EQ(Parse(Head(longest + "k"), &key, &why), NginxFileState::kForeign);
  EXPECT_EQ(why, "key of '16385' bytes exceeds the limit of '16384'");
  // Refused on the header alone, before the key's bytes are there.
  EXPECT_EQ(Parse(Head(longest + "k").substr(0, 400), &key, &why), NginxFileState::kForeign);
}

class NginxReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/peerbloom-nginx-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  std::string dir_;
};

TEST_F(NginxReadTest, RealFilesAndLongKeys) {
  std::string key, why;
  bool gone = true;
  for (const Fixture& f : kFixtures) {
    ASSERT_EQ(ReadNginxCacheFileKey(FixturePath(f), &key, &why, &gone), NginxFileState::kValid)
        << f.file << ": " << why;
    EXPECT_EQ(key, f.key);
    EXPECT_FALSE(gone);
  }
  // Longer than the first read's page, and the longest accepted.
  for (size_t n : {size_t{4096}, size_t{9000}, kNginxMaxKeyBytes}) {
    const std::string want = "http://o/" + std::string(n - 9, 'a');
    const std::string path = Write("long", Head(want) + std::string(20000, 'b'));
    ASSERT_EQ(ReadNginxCacheFileKey(path, &key, &why, &gone), NginxFileState::kValid) << why;
    EXPECT_EQ(key, want);
  }
}

TEST_F(NginxReadTest, ShortMissingAndStrangeFiles) {
  std::string key, why;
  bool gone = false;
  const std::string missing = dir_ + "/0123456789abcdef0123456789abcdef";
  EXPECT_EQ(ReadNginxCacheFileKey(missing, &key, &why, &gone), NginxFileState::kPartial);
  EXPECT_TRUE(gone);
  EXPECT_EQ(why, "cannot open '" + missing + "': No such file or directory");

  const std::string cut = Write("cut", Head("http://o/a").substr(0, 200));
  EXPECT_EQ(ReadNginxCacheFileKey(cut, &key, &why, &gone), NginxFileState::kPartial);
  EXPECT_FALSE(gone);
  EXPECT_EQ(why, "'200' bytes, fewer than the '343' the header and KEY line take");

  const std::string link = dir_ + "/link";
  ASSERT_EQ(::symlink(FixturePath(kFixtures[0]).c_str(), link.c_str()), 0);
  EXPECT_EQ(ReadNginxCacheFileKey(link, &key, &why, &gone), NginxFileState::kForeign);
  EXPECT_FALSE(gone);

  fs::create_directory(dir_ + "/sub");
  EXPECT_EQ(ReadNginxCacheFileKey(dir_ + "/sub", &key, &why, &gone), NginxFileState::kForeign);
  EXPECT_EQ(why, "'" + dir_ + "/sub' is not a regular file");

  // A FIFO nobody writes: refused at once, not waited on.
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(ReadNginxCacheFileKey(fifo, &key, &why, &gone), NginxFileState::kForeign);
}

}  // namespace
}  // namespace peerbloom
