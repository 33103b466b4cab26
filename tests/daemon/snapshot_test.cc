#include "daemon/store/snapshot.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <xxhash.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

namespace peerbloom::daemon {
namespace {

class SnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/pbsnap.XXXXXX";
    dir_ = ::mkdtemp(pattern);
    path_ = dir_ + "/state.snapshot";
    state_.node_id = "a";
    state_.epoch = 7;
    state_.version = 42;
    state_.k = 2;
    state_.log2_counters = 10;
    state_.key_scheme = KeyScheme::kRaw;
    state_.index_key_fingerprint = 0x1234567890abcdefULL;
    state_.items = 3;
    state_.saturation_events = 1;
    state_.refused_removes = 2;
    state_.feeds.push_back({"/var/feed", 1, 2, 300, 64, 99, 300, 77, 1795420869055000000,
                            std::string("live\0keys", 9)});
    state_.feeds.push_back({"/var/other", 3, 4, 5, 5, 6, 5, 8, 0, ""});
    state_.cells.assign(512, '\0');
    state_.cells[5] = 0x21;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Bytes() {
    std::ifstream in(path_, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  void Put(const std::string& bytes) { std::ofstream(path_, std::ios::binary) << bytes; }
  // Writes state_ with the given version fields and a fresh checksum, as a later build
  // would, and reads it back.
  Status ReadWithVersions(uint32_t version, uint32_t min_reader, SnapshotState* read) {
    EXPECT_TRUE(WriteSnapshot(path_, state_).ok());
    std::string bytes = Bytes();
    for (int i = 0; i < 4; ++i) {
      bytes[8 + i] = static_cast<char>(version >> (8 * i));
      bytes[12 + i] = static_cast<char>(min_reader >> (8 * i));
    }
    const uint64_t sum = XXH3_64bits(bytes.data(), bytes.size() - 8);
    for (int i = 0; i < 8; ++i) bytes[bytes.size() - 8 + i] = static_cast<char>(sum >> (8 * i));
    Put(bytes);
    return ReadSnapshot(path_, read);
  }

  std::string dir_, path_;
  SnapshotState state_;
};

TEST_F(SnapshotTest, RoundTrips) {
  ASSERT_TRUE(WriteSnapshot(path_, state_).ok());
  EXPECT_FALSE(std::filesystem::exists(path_ + ".tmp"));
  SnapshotState read;
  Status s = ReadSnapshot(path_, &read);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(read.node_id, "a");
  EXPECT_EQ(read.epoch, 7u);
  EXPECT_EQ(read.version, 42u);
  EXPECT_EQ(read.k, 2u);
  EXPECT_EQ(read.log2_counters, 10u);
  EXPECT_EQ(read.key_scheme, KeyScheme::kRaw);
  EXPECT_EQ(read.index_key_fingerprint, state_.index_key_fingerprint);
  EXPECT_EQ(read.items, 3u);
  EXPECT_EQ(read.saturation_events, 1u);
  EXPECT_EQ(read.refused_removes, 2u);
  EXPECT_EQ(read.feeds, state_.feeds);
  EXPECT_EQ(read.cells, state_.cells);
}

TEST_F(SnapshotTest, MissingFileIsNotFound) {
  SnapshotState read;
  EXPECT_TRUE(ReadSnapshot(path_, &read).IsNotFound());
}

TEST_F(SnapshotTest, EveryFlippedByteIsRefused) {
  ASSERT_TRUE(WriteSnapshot(path_, state_).ok());
  const std::string good = Bytes();
  for (size_t i = 0; i < good.size(); i += 7) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x40);
    Put(bad);
    SnapshotState read;
    Status s = ReadSnapshot(path_, &read);
    EXPECT_FALSE(s.ok()) << "flip at " << i;
  }
}

TEST_F(SnapshotTest, EveryTruncationIsRefused) {
  ASSERT_TRUE(WriteSnapshot(path_, state_).ok());
  const std::string good = Bytes();
  for (size_t n = 0; n < good.size(); n += 13) {
    Put(good.substr(0, n));
    SnapshotState read;
    Status s = ReadSnapshot(path_, &read);
    EXPECT_TRUE(s.IsCorruption()) << n << ": " << s.ToString();
  }
}

TEST_F(SnapshotTest, CorruptionMessageNamesTheFileAndReason) {
  ASSERT_TRUE(WriteSnapshot(path_, state_).ok());
  std::string bad = Bytes();
  bad[100] = static_cast<char>(bad[100] ^ 1);
  Put(bad);
  SnapshotState read;
  EXPECT_EQ(ReadSnapshot(path_, &read).message(),
            "snapshot '" + path_ + "' is corrupt: checksum mismatch");
}

TEST_F(SnapshotTest, RewriteReplacesAtomically) {
  ASSERT_TRUE(WriteSnapshot(path_, state_).ok());
  state_.version = 43;
  ASSERT_TRUE(WriteSnapshot(path_, state_).ok());
  SnapshotState read;
  ASSERT_TRUE(ReadSnapshot(path_, &read).ok());
  EXPECT_EQ(read.version, 43u);
}

TEST_F(SnapshotTest, WritesFormat2ReadableByFormat2) {
  ASSERT_TRUE(WriteSnapshot(path_, state_).ok());
  const std::string bytes = Bytes();
  EXPECT_EQ(bytes.substr(0, 16), std::string("PBSNAP01\x02\0\0\0\x02\0\0\0", 16));
}

// tests/data/snapshot/format1.snapshot was written by the format 1 writer, before the
// minimum-reader field existed.
TEST_F(SnapshotTest, Format1SnapshotStillReads) {
  SnapshotState read;
  const Status s = ReadSnapshot(
      std::string(PEERBLOOM_SOURCE_DIR) + "/tests/data/snapshot/format1.snapshot", &read);
  ASSERT_TRUE(s.ok()) << s.ToString();
  // The golden file holds state_ with these counts and only the first feed.
  SnapshotState want = state_;
  want.adds = 5;
  want.removes = 2;
  want.written_unix_ms = 1795420869055;
  want.feeds.resize(1);
  auto fields = [](const SnapshotState& x) {
    return std::tie(x.node_id, x.epoch, x.version, x.k, x.log2_counters, x.key_scheme,
                    x.index_key_fingerprint, x.items, x.saturation_events, x.refused_removes,
                    x.adds, x.removes, x.written_unix_ms, x.feeds, x.cells);
  };
  EXPECT_TRUE(fields(read) == fields(want));
}

TEST_F(SnapshotTest, NewerFormatThatThisBuildCanReadIsRead) {
  SnapshotState read;
  const Status s = ReadWithVersions(3, 2, &read);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(read.cells, state_.cells);
  EXPECT_EQ(read.feeds, state_.feeds);
}

TEST_F(SnapshotTest, NewerMinimumReaderIsRefusedNamingBothVersions) {
  SnapshotState read;
  const Status s = ReadWithVersions(5, 4, &read);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  EXPECT_EQ(s.message(), "snapshot '" + path_ +
                             "' has format version '5' and needs a reader of format '4' or "
                             "newer, this build reads '3'");
}

// A counting filter of c x 2^j counters (c > 1) is saved as format 3, minimum reader 3: a
// format 2 reader would ignore the multiplier and misread the counters, so it refuses.
TEST_F(SnapshotTest, ExactSizeFilterWritesFormat3WithItsMultiplier) {
  state_.size_multiplier = 5;
  state_.cells.assign(5 * 512, '\x11');
  ASSERT_TRUE(WriteSnapshot(path_, state_).ok());
  EXPECT_EQ(Bytes().substr(0, 16), std::string("PBSNAP01\x03\0\0\0\x03\0\0\0", 16));
  SnapshotState read;
  const Status s = ReadSnapshot(path_, &read);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(read.size_multiplier, 5u);
  EXPECT_EQ(read.log2_counters, state_.log2_counters);
  EXPECT_EQ(read.cells, state_.cells);
}

TEST_F(SnapshotTest, MinimumReaderAboveItsVersionIsCorrupt) {
  SnapshotState read;
  const Status s = ReadWithVersions(2, 3, &read);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
}

}  // namespace
}  // namespace peerbloom::daemon
