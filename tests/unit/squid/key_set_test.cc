#include "peerbloom/squid_key_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <set>
#include <string>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace peerbloom {
namespace {

SquidKey RandomKey(std::mt19937_64* rng) {
  SquidKey k;
  for (auto& b : k) b = static_cast<uint8_t>((*rng)());
  return k;
}

SquidKey SmallKey(uint8_t v) {
  SquidKey k{};
  k[15] = v;
  return k;
}

TEST(SquidKeySet, InsertEraseContainsReportChanges) {
  SquidKeySet set;
  const SquidKey a = SmallKey(1), b = SmallKey(2);
  EXPECT_TRUE(set.Insert(a));
  EXPECT_FALSE(set.Insert(a));
  EXPECT_TRUE(set.Contains(a));
  EXPECT_FALSE(set.Contains(b));
  EXPECT_FALSE(set.Erase(b));
  EXPECT_TRUE(set.Erase(a));
  EXPECT_FALSE(set.Erase(a));
  EXPECT_TRUE(set.empty());
}

// The all-zero key doubles as the empty-slot marker internally; it must still behave.
TEST(SquidKeySet, AllZeroKeyIsAnOrdinaryMember) {
  SquidKeySet set;
  const SquidKey zero{};
  EXPECT_FALSE(set.Contains(zero));
  EXPECT_TRUE(set.Insert(zero));
  EXPECT_FALSE(set.Insert(zero));
  EXPECT_EQ(set.size(), 1u);
  size_t seen = 0;
  set.ForEach([&](const SquidKey& k) { seen += (k == zero); });
  EXPECT_EQ(seen, 1u);
  EXPECT_TRUE(set.Erase(zero));
  EXPECT_FALSE(set.Contains(zero));
}

// Random churn against std::set: growth, shrink and backward-shift deletion across wrapped
// clusters must never lose or invent a key.
TEST(SquidKeySet, MatchesAReferenceSetUnderChurn) {
  std::mt19937_64 rng(7);
  SquidKeySet set(SipKey{1, 2, 3});
  std::set<SquidKey> ref;
  std::vector<SquidKey> pool;
  for (int i = 0; i < 3000; ++i) pool.push_back(RandomKey(&rng));
  for (int round = 0; round < 200000; ++round) {
    const SquidKey& k = pool[rng() % pool.size()];
    // Phases: mostly inserts, then mostly erases (forces shrink), then mixed.
    const int phase = round / 50000;
    const bool insert = phase == 0 ? rng() % 4 != 0 : phase == 1 ? rng() % 4 == 0 : rng() % 2;
    if (insert) {
      ASSERT_EQ(set.Insert(k), ref.insert(k).second);
    } else {
      ASSERT_EQ(set.Erase(k), ref.erase(k) == 1);
    }
    ASSERT_EQ(set.size(), ref.size());
  }
  for (const SquidKey& k : pool) ASSERT_EQ(set.Contains(k), ref.count(k) == 1);
  std::set<SquidKey> listed;
  set.ForEach([&](const SquidKey& k) { listed.insert(k); });
  EXPECT_EQ(listed, ref);
}

// Memory per key stays within the documented 3/8..3/4 load band: 21.3..42.7 bytes per key,
// checked after every insert from 1,000 keys on. Prints the range for docs/squid.md.
TEST(SquidKeySet, MemoryPerKeyStaysInTheLoadBand) {
  std::mt19937_64 rng(11);
  SquidKeySet set;
  double lo = 1e9, hi = 0, sum = 0;
  size_t samples = 0;
  for (size_t n = 1; n <= 300000; ++n) {
    ASSERT_TRUE(set.Insert(RandomKey(&rng)));
    if (n < 1000) continue;
    const double per_key = static_cast<double>(set.memory_bytes()) / n;
    lo = std::min(lo, per_key);
    hi = std::max(hi, per_key);
    sum += per_key;
    ++samples;
  }
  std::printf("bytes per key from 1e3 to 3e5 keys: min %.1f, mean %.1f, max %.1f\n", lo,
              sum / samples, hi);
  EXPECT_GE(lo, 16.0 / 0.75);
  EXPECT_LE(hi, 16.0 / 0.375);
}

std::string Snapshot(const SquidKeySet& set) {
  std::string out;
  set.EncodeTo(&out);
  return out;
}

TEST(SquidKeySet, SnapshotRoundTrips) {
  std::mt19937_64 rng(3);
  SquidKeySet set;
  for (int i = 0; i < 1000; ++i) set.Insert(RandomKey(&rng));
  set.Insert(SquidKey{});
  const std::string bytes = Snapshot(set);
  EXPECT_EQ(bytes.size(), 16 + 16 * 1001 + 8u);
  SquidKeySet back(SipKey{9});  // another seed: the encoding does not depend on it
  ASSERT_TRUE(back.DecodeFrom(bytes, 1001).ok());
  EXPECT_EQ(back.size(), 1001u);
  set.ForEach([&](const SquidKey& k) { EXPECT_TRUE(back.Contains(k)); });
}

TEST(SquidKeySet, EmptySnapshotRoundTrips) {
  SquidKeySet set, back;
  back.Insert(SmallKey(5));
  ASSERT_TRUE(back.DecodeFrom(Snapshot(set), 0).ok());
  EXPECT_TRUE(back.empty());
}

// Every truncated prefix and every single corrupted byte is refused, and a refused decode
// leaves the set as it was.
TEST(SquidKeySet, TruncatedOrCorruptedSnapshotsAreRefused) {
  SquidKeySet set;
  for (uint8_t i = 1; i <= 20; ++i) set.Insert(SmallKey(i));
  const std::string bytes = Snapshot(set);
  SquidKeySet target;
  target.Insert(SmallKey(99));
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(target.DecodeFrom(bytes.substr(0, n), 100).ok()) << n;
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x40);
    EXPECT_FALSE(target.DecodeFrom(bad, 100).ok()) << i;
  }
  EXPECT_EQ(target.size(), 1u);
  EXPECT_TRUE(target.Contains(SmallKey(99)));
}

TEST(SquidKeySet, SnapshotErrorsSayWhy) {
  SquidKeySet set;
  for (uint8_t i = 1; i <= 3; ++i) set.Insert(SmallKey(i));
  const std::string bytes = Snapshot(set);
  SquidKeySet target;
  Status s = target.DecodeFrom(bytes, 2);
  EXPECT_TRUE(s.IsResourceExhausted());
  EXPECT_EQ(s.message(), "key set snapshot holds '3' keys, more than the limit of '2'");
  EXPECT_EQ(target.DecodeFrom(bytes.substr(0, 10), 9).message(),
            "key set snapshot of '10' bytes is shorter than its header and checksum");
  EXPECT_EQ(target.DecodeFrom(bytes.substr(0, bytes.size() - 1), 9).message(),
            "key set snapshot declares '3' keys but holds '47' key bytes");
  std::string bad = bytes;
  bad[0] = 'X';
  EXPECT_EQ(target.DecodeFrom(bad, 9).message(), "key set snapshot has a bad magic");
  bad = bytes;
  bad[5] = 2;
  s = target.DecodeFrom(bad, 9);
  EXPECT_TRUE(s.IsNotSupported());
  EXPECT_EQ(s.message(), "key set snapshot needs reader version '2'; this reader is '1'");
  bad = bytes;
  bad[20] ^= 1;
  EXPECT_EQ(target.DecodeFrom(bad, 9).message(), "key set snapshot checksum mismatch");
}

// A snapshot with a valid checksum that repeats a key is still refused.
TEST(SquidKeySet, RepeatedKeyIsCorruption) {
  SquidKeySet two;
  two.Insert(SmallKey(7));
  two.Insert(SmallKey(8));
  std::string bytes = Snapshot(two);
  const std::string key7(reinterpret_cast<const char*>(SmallKey(7).data()), 16);
  std::string forged = bytes.substr(0, 16) + key7 + key7;
  const uint64_t sum = XXH64(forged.data(), forged.size(), 0);
  for (int i = 0; i < 8; ++i) forged.push_back(static_cast<char>(sum >> (8 * i)));
  SquidKeySet target;
  const Status s = target.DecodeFrom(forged, 9);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_EQ(s.message(), "key set snapshot repeats key '00000000000000000000000000000007'");
}

}  // namespace
}  // namespace peerbloom
