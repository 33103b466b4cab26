#include "peerbloom/counting_bloom_filter.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "tests/unit/filter/filter_test_keys.h"

namespace peerbloom {
namespace {

using testing::HashesOfIds;
using testing::HashOfId;

std::vector<uint64_t> Positions(const CountingBloomFilter& f, const KeyHash& h) {
  std::vector<uint64_t> positions;
  ForEachProbe(h, f.k(), f.reduction(), [&](uint64_t pos) { positions.push_back(pos); });
  return positions;
}

uint64_t CountersAt(const CountingBloomFilter& f, uint8_t value) {
  uint64_t n = 0;
  for (uint64_t pos = 0; pos < f.counters(); ++pos) n += f.Counter(pos) == value;
  return n;
}

TEST(CountingBloomFilter, ProbePositionsAreDistinct) {
  // Remove() checks each position once; that is only right when positions never repeat.
  CountingBloomFilter f(kMinLog2Bits, kMaxHashes);
  for (uint64_t id = 0; id < 1000; ++id) {
    const std::vector<uint64_t> positions = Positions(f, HashOfId(id));
    EXPECT_EQ(std::set<uint64_t>(positions.begin(), positions.end()).size(), kMaxHashes);
  }
}

TEST(CountingBloomFilter, AddCountsAndRemoveUndoes) {
  CountingBloomFilter f(12, 4);
  const KeyHash h = HashOfId(7);
  EXPECT_FALSE(f.MayContain(h));
  for (int i = 0; i < 14; ++i) f.Add(h);
  for (uint64_t pos : Positions(f, h)) EXPECT_EQ(f.Counter(pos), 14);
  EXPECT_EQ(f.items(), 14u);
  EXPECT_EQ(f.saturated_counters(), 0u);
  for (int i = 0; i < 14; ++i) EXPECT_TRUE(f.Remove(h));
  EXPECT_FALSE(f.MayContain(h));
  EXPECT_EQ(f.items(), 0u);
  EXPECT_EQ(CountersAt(f, 0), f.counters());
}

TEST(CountingBloomFilter, SaturationIsStickyAndCounted) {
  CountingBloomFilter f(12, 4);
  const KeyHash h = HashOfId(11);
  for (int i = 0; i < 20; ++i) f.Add(h);
  for (uint64_t pos : Positions(f, h)) EXPECT_EQ(f.Counter(pos), CountingBloomFilter::kMaxCount);
  EXPECT_EQ(f.saturated_counters(), 4u);
  EXPECT_EQ(f.saturation_events(), 5u * 4u);  // adds 16..20 each hit 4 saturated counters
  // Removing as often as it was added leaves the counters at 15: they never come down.
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(f.Remove(h));
  EXPECT_TRUE(f.MayContain(h));
  for (uint64_t pos : Positions(f, h)) EXPECT_EQ(f.Counter(pos), CountingBloomFilter::kMaxCount);
  EXPECT_EQ(f.saturated_counters(), 4u);
  EXPECT_EQ(f.items(), 0u);
}

TEST(CountingBloomFilter, RemoveOfAbsentKeyIsRefusedBeforeAnyChange) {
  CountingBloomFilter f(10, 4);
  for (uint64_t id = 0; id < 60; ++id) f.Add(HashOfId(id));
  // An absent key that shares some counters with present keys but has a zero one: a remove
  // that decremented as it went would damage the shared counters before finding the zero.
  uint64_t partial = 0;
  for (uint64_t id = 1000;; ++id) {
    int non_zero = 0;
    for (uint64_t pos : Positions(f, HashOfId(id))) non_zero += f.Counter(pos) != 0;
    if (non_zero > 0 && non_zero < 4) {
      partial = id;
      break;
    }
  }
  const std::string before(f.raw_cells());
  EXPECT_FALSE(f.Remove(HashOfId(partial)));
  EXPECT_EQ(f.raw_cells(), before);
  EXPECT_EQ(f.refused_removes(), 1u);
  EXPECT_EQ(f.items(), 60u);
  for (uint64_t id = 0; id < 60; ++id) EXPECT_TRUE(f.MayContain(HashOfId(id))) << id;
}

TEST(CountingBloomFilter, CreateRejectsBadGeometry) {
  CountingBloomFilter f(kMinLog2Bits, 1);
  Status s = CountingBloomFilter::Create(5, 3, &f);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(s.message(), "log2 of counters '5' is outside [6, 34]");
  s = CountingBloomFilter::Create(35, 3, &f);
  EXPECT_EQ(s.message(), "log2 of counters '35' is outside [6, 34]");
  s = CountingBloomFilter::Create(10, 0, &f);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(s.message(), "hash count '0' is outside [1, 32]");
  s = CountingBloomFilter::Create(10, 33, &f);
  EXPECT_EQ(s.message(), "hash count '33' is outside [1, 32]");
  ASSERT_TRUE(CountingBloomFilter::Create(10, 3, &f).ok());
  EXPECT_EQ(f.counters(), 1024u);
  EXPECT_EQ(f.bytes(), 512u);
  EXPECT_EQ(f.k(), 3u);
}

TEST(CountingBloomFilter, ProjectRejectsBadSizes) {
  CountingBloomFilter f(10, 3);
  BloomFilter out;
  Status s = f.Project(11, &out);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(s.message(), "cannot project 2^10 counters onto 2^11 bits");
  s = f.Project(5, &out);
  EXPECT_EQ(s.message(), "cannot project 2^10 counters onto 2^5 bits");
  EXPECT_TRUE(f.Project(10, &out).ok());
  EXPECT_TRUE(f.Project(6, &out).ok());
}

TEST(CountingBloomFilter, ProjectedBitMatchesProject) {
  CountingBloomFilter f(14, 3);
  for (const KeyHash& h : HashesOfIds(0, 900)) f.Add(h);
  for (unsigned log2 : {14u, 12u, 9u, 6u}) {
    BloomFilter projected;
    ASSERT_TRUE(f.Project(log2, &projected).ok());
    for (uint64_t pos = 0; pos < projected.bits(); ++pos) {
      ASSERT_EQ(f.ProjectedBit(pos, projected.bits()), projected.TestBit(pos))
          << log2 << " " << pos;
    }
  }
}

TEST(CountingBloomFilter, RestoreRoundTrip) {
  CountingBloomFilter f(12, 4);
  for (const KeyHash& h : HashesOfIds(0, 300)) f.Add(h);
  for (int i = 0; i < 18; ++i) f.Add(HashOfId(5));  // some saturated counters
  for (const KeyHash& h : HashesOfIds(0, 100)) EXPECT_TRUE(f.Remove(h));
  uint64_t absent = 10000;
  while (f.MayContain(HashOfId(absent))) ++absent;
  EXPECT_FALSE(f.Remove(HashOfId(absent)));
  ASSERT_GT(f.saturated_counters(), 0u);

  CountingBloomFilter g(12, 4);
  ASSERT_TRUE(g.Restore(f.raw_cells(), f.items(), f.saturation_events(), f.refused_removes()).ok());
  EXPECT_EQ(g.raw_cells(), f.raw_cells());
  EXPECT_EQ(g.items(), f.items());
  EXPECT_EQ(g.saturated_counters(), f.saturated_counters());
  EXPECT_EQ(g.saturation_events(), f.saturation_events());
  EXPECT_EQ(g.refused_removes(), 1u);
  for (const KeyHash& h : HashesOfIds(100, 200)) EXPECT_TRUE(g.MayContain(h));
}

TEST(CountingBloomFilter, RestoreSizeMismatchIsCorruptionAndChangesNothing) {
  CountingBloomFilter f(12, 4);
  f.Add(HashOfId(1));
  const std::string before(f.raw_cells());
  const std::string wrong(100, '\x11');
  const Status s = f.Restore(wrong, 5, 6, 7);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_EQ(s.message(), "counter snapshot holds 100 bytes, filter needs 2048");
  EXPECT_EQ(f.raw_cells(), before);
  EXPECT_EQ(f.items(), 1u);
  EXPECT_EQ(f.refused_removes(), 0u);
}

TEST(CountingBloomFilter, CloneCopiesEverything) {
  CountingBloomFilter f(10, 3);
  for (const KeyHash& h : HashesOfIds(0, 50)) f.Add(h);
  for (int i = 0; i < 16; ++i) f.Add(HashOfId(1));
  const CountingBloomFilter c = f.Clone();
  EXPECT_EQ(c.raw_cells(), f.raw_cells());
  EXPECT_EQ(c.items(), f.items());
  EXPECT_EQ(c.saturated_counters(), f.saturated_counters());
  EXPECT_EQ(c.saturation_events(), f.saturation_events());
  EXPECT_EQ(c.k(), f.k());
}

// The batch calls give exactly the results of the single-key calls in order, including a
// remove that depends on an add earlier in the same batch and refused removes.
TEST(CountingBloomFilter, BatchesEqualSequentialCalls) {
  CountingBloomFilter batched(12, 5);
  CountingBloomFilter single(12, 5);
  std::vector<KeyHash> adds = HashesOfIds(0, 700);
  for (int i = 0; i < 20; ++i) adds.push_back(HashOfId(3));  // saturates in mid-batch
  batched.AddBatch(adds.data(), adds.size());
  for (const KeyHash& h : adds) single.Add(h);
  ASSERT_EQ(batched.raw_cells(), single.raw_cells());
  EXPECT_EQ(batched.saturation_events(), single.saturation_events());
  EXPECT_EQ(batched.saturated_counters(), single.saturated_counters());

  // Absent keys, a key added within the batch then removed twice (second remove refused
  // unless a false positive), present keys: 37 entries, not a multiple of the group size.
  std::vector<KeyHash> removes = HashesOfIds(5000, 12);
  const KeyHash fresh = HashOfId(9000);
  batched.AddBatch(&fresh, 1);
  single.Add(fresh);
  removes.push_back(fresh);
  removes.push_back(fresh);
  for (uint64_t id = 100; id < 123; ++id) removes.push_back(HashOfId(id));
  bool batch_removed[37];
  ASSERT_EQ(removes.size(), 37u);
  size_t expected_accepted = 0;
  bool single_removed[37];
  for (size_t i = 0; i < removes.size(); ++i) {
    single_removed[i] = single.Remove(removes[i]);
    expected_accepted += single_removed[i];
  }
  EXPECT_EQ(batched.RemoveBatch(removes.data(), removes.size(), batch_removed), expected_accepted);
  for (size_t i = 0; i < removes.size(); ++i) EXPECT_EQ(batch_removed[i], single_removed[i]) << i;
  EXPECT_TRUE(batch_removed[12]);
  EXPECT_GT(batched.refused_removes(), 0u);
  EXPECT_EQ(batched.refused_removes(), single.refused_removes());
  EXPECT_EQ(batched.items(), single.items());
  ASSERT_EQ(batched.raw_cells(), single.raw_cells());

  std::vector<KeyHash> queries = HashesOfIds(0, 1000);
  std::vector<char> out(queries.size());
  batched.MayContainBatch(queries.data(), queries.size(), reinterpret_cast<bool*>(out.data()));
  for (size_t i = 0; i < queries.size(); ++i) {
    EXPECT_EQ(out[i] != 0, single.MayContain(queries[i])) << i;
  }
}

// Counters of 2 MiB or more are allocated on a huge-page boundary (see huge_page_allocator.h).
TEST(CountingBloomFilter, LargeCountersAreHugePageAligned) {
  const CountingBloomFilter large(23, 3);  // 4 MiB
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large.raw_cells().data()) % (uintptr_t{2} << 20), 0u);
  CountingBloomFilter moved = large.Clone();
  EXPECT_EQ(moved.raw_cells(), large.raw_cells());
}

}  // namespace
}  // namespace peerbloom
